"""The grammar that checks an application's event stream against a :class:`Contract`.

Per event: its type (SSE ``event:`` name, ``message`` when absent as in EventSource, or the
contract's JSON field; a sentinel such as ``[DONE]`` is its own type), a start event first,
nothing after the terminal event, the order grammar, the fields that must be equal in every
event, the fields each type requires, and the fields it must carry to match the stored record
(``contract.record``: equal to the record's values when one is given). A terminal event after
an incomplete upstream stream must be one ``upstream.incomplete`` allows (``contract.upstream``).
At the end: exactly one terminal event was seen and the order is complete. Rules
``contract.*``; one root cause is reported once (after the terminal event only the first later
event; after an order violation no more order checks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.contract import MISSING, Contract, lookup, pointer_value
from replayproxy._core.check.order import OrderMatcher
from replayproxy._errors import UsageError

__all__ = ["ContractGrammar"]


def _names(names: frozenset[str] | list[str]) -> str:
    return " | ".join(sorted(names)) or "nothing"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _equal(streamed: Any, stored: Any) -> bool:
    """JSON equality: ``true`` is not ``1`` (Python's ``True == 1`` would pass it)."""
    return isinstance(streamed, bool) == isinstance(stored, bool) and streamed == stored


def _stored(contract: Contract, record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's value for every record pointer the contract names; a pointer the record
    does not hold is a mistake in the test, said before any event is read."""
    out: dict[str, Any] = {}
    for kind, pairs in contract.record:
        for _, pointer in pairs:
            value = pointer_value(record, pointer)
            if value is MISSING:
                held = ", ".join(map(repr, list(record)[:8])) or "nothing"
                raise UsageError(
                    f"record= has no {pointer} (contract fields.record.{kind}); it holds {held}"
                )
            out[pointer] = value
    return out


class ContractGrammar(Grammar):
    def __init__(
        self,
        report: Report,
        contract: Contract,
        *,
        record: Mapping[str, Any] | None = None,
        upstream_incomplete: bool = False,
    ) -> None:
        super().__init__(report, RequestOptions())
        self.contract = contract
        self.record = None if record is None else _stored(contract, record)
        self.upstream_incomplete = upstream_incomplete
        if upstream_incomplete and contract.after_incomplete is None:
            report.note(
                "the upstream stream was incomplete, but the contract has no "
                "upstream.incomplete: which terminal event may follow is not checked"
            )
        self.sentinels = contract.sentinels
        self.matcher = OrderMatcher(contract.order) if contract.order is not None else None
        self.order_broken = False
        self.started = False  # an event was seen
        self.last_type: str | None = None
        self.terminal: tuple[int, str] | None = None  # (event index, type)
        self.after_reported = False
        self.same: dict[str, Any] = {}  # field -> the first event's value
        self.same_changed: set[str] = set()

    def _type(self, ev: StreamEvent) -> str | None:
        if ev.payload is None:  # a sentinel: its data is its type
            return ev.data
        field = self.contract.type_field
        if field is None:
            return ev.name if ev.name is not None else "message"
        if ev.payload is INVALID:
            return None  # already reported as sse.json / ndjson.json
        value = lookup(ev.payload, field)
        if not isinstance(value, str) or not value:
            what = "no" if value is MISSING else f"a non-string {_shown(value)} in"
            self.report.at(
                "contract.type", ev, f"{what} field {field!r}: the event has no type to dispatch on"
            )
            return None
        return value

    def event(self, ev: StreamEvent) -> None:
        report = self.report
        first = not self.started
        self.started = True
        kind = self._type(ev)
        if self.terminal is not None:
            if not self.after_reported:
                self.after_reported = True
                t_index, t_kind = self.terminal
                report.at(
                    "contract.terminal",
                    ev,
                    f"{kind or 'an event'} after the terminal event {t_kind} (event {t_index}); "
                    "clients stop reading at the terminal event and never see it",
                )
            return
        if kind is None:
            return
        contract = self.contract
        if first and contract.start and kind not in contract.start:
            report.at(
                "contract.start",
                ev,
                f"the first event is {kind}, expected {_names(contract.start)}: the client "
                "cannot tell which turn this stream is",
            )
        if self.matcher is not None and not self.order_broken:
            expected = self.matcher.expected()
            if not self.matcher.step(kind):
                self.order_broken = True
                after = f"after {self.last_type}" if self.last_type else "first"
                report.at(
                    "contract.order",
                    ev,
                    f"{kind} {after}; the order {self.matcher.order.source!r} allows "
                    f"{_names(expected)} here",
                )
        self.last_type = kind
        if kind in contract.terminal:
            self.terminal = (ev.index, kind)
            allowed = contract.after_incomplete
            if self.upstream_incomplete and allowed is not None and kind not in allowed:
                report.at(
                    "contract.upstream",
                    ev,
                    f"{kind} ends a turn whose upstream stream was incomplete; after an "
                    f"incomplete upstream only {_names(allowed)} may end it: a cut answer is "
                    "stored as a finished turn",
                )
        if isinstance(ev.payload, dict):
            self._fields(ev, kind, ev.payload)
        elif (
            ev.payload is not None
            and ev.payload is not INVALID
            and (contract.same or contract.required_for(kind))
        ):
            report.at(
                "contract.same" if contract.same else "contract.required",
                ev,
                f"the {kind} event's payload is a JSON {type(ev.payload).__name__}, not an "
                "object with the contract's fields",
            )

    def _fields(self, ev: StreamEvent, kind: str, payload: dict[str, Any]) -> None:
        report = self.report
        for name in self.contract.same:
            value = lookup(payload, name)
            if value is MISSING:
                report.at("contract.same", ev, f"the {kind} event has no {name!r}")
                continue
            first = self.same.setdefault(name, value)
            if value != first and name not in self.same_changed:
                self.same_changed.add(name)
                report.at(
                    "contract.same",
                    ev,
                    f"{name} changed from {_shown(first)} to {_shown(value)}: events of two "
                    "turns are mixed in one stream",
                )
        missing = [f for f in self.contract.required_for(kind) if lookup(payload, f) is MISSING]
        if missing:
            report.at(
                "contract.required", ev, f"the {kind} event lacks {', '.join(map(repr, missing))}"
            )
        for pointer, stored_at in self.contract.record_for(kind):
            self._record_field(ev, kind, payload, pointer, stored_at)

    def _record_field(
        self, ev: StreamEvent, kind: str, payload: dict[str, Any], pointer: str, stored_at: str
    ) -> None:
        value = pointer_value(payload, pointer)
        stored = MISSING if self.record is None else self.record[stored_at]
        where = "" if stored_at == pointer else f" at {stored_at}"
        if value is MISSING:
            held = "" if stored is MISSING else f" (the stored record has {_shown(stored)}{where})"
            self.report.at("contract.record", ev, f"the {kind} event lacks {pointer}{held}")
        elif stored is not MISSING and not _equal(value, stored):
            self.report.at(
                "contract.record",
                ev,
                f"the {kind} event carries {pointer} = {_shown(value)}, the stored record has "
                f"{_shown(stored)}{where}: the client shows a turn the database does not hold",
            )

    def finish(self, end: int) -> None:
        contract = self.contract
        if not self.started:
            if contract.start or contract.terminal:
                self.report.add(
                    "contract.terminal" if contract.terminal else "contract.start",
                    "the stream has no events at all",
                    offset=end,
                )
            return
        if contract.terminal and self.terminal is None:
            self.report.add(
                "contract.terminal",
                f"the stream ends after {self.last_type or 'an untyped event'} without a terminal "
                f"event ({_names(contract.terminal)}); a client must not treat the closed "
                "connection as a finished turn",
                offset=end,
            )
            return  # one root cause: the order is incomplete for the same reason
        if self.matcher is not None and not self.order_broken and not self.matcher.complete:
            self.report.add(
                "contract.order",
                f"the stream ends after {self.last_type}; the order {self.matcher.order.source!r} "
                f"needs {_names(self.matcher.expected())} next",
                offset=end,
            )
