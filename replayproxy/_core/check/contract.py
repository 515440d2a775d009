"""Stream contracts for an application's own event stream: the declarative description
(:class:`Contract`, parsed from TOML or JSON text) that :class:`ContractGrammar` checks.

A contract says how events are framed (SSE or NDJSON), where an event's type lives (the SSE
``event:`` name or a JSON field), which types may start a stream, which are terminal (exactly
one, last), which fields every event carries with one value (the turn id), which fields each
type must carry, and the order (:mod:`.order`); for endpoint recordings also whether the stream
must arrive incrementally, which fields must match the stored record, which terminal events may
follow an incomplete upstream stream, and which fields change between runs (``volatile``). The
format is documented in docs/guides/checker.md. Pure: text in, a contract out; a bad contract is a
one-line :class:`UsageError`.

A contract is a small hand-written file, so its size and shape are bounded before anything
recurses over it: at most :data:`MAX_CONTRACT_CHARS` characters, tables and arrays nested at
most :data:`MAX_CONTRACT_DEPTH` deep (the parsers recurse once per level: 500 nested TOML
arrays or 5000 JSON ones raised ``RecursionError``), and an ``order`` of at most
:data:`MAX_ORDER_CHARS` characters whose parentheses nest at most :data:`MAX_ORDER_DEPTH` deep
(its parser recurses per parenthesis). Each limit is a one-line :class:`UsageError` naming it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from replayproxy._core.check.order import Order, compile_order
from replayproxy._core.json.limits import depth_exceeds
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._errors import UsageError

__all__ = [
    "ANY_TYPE",
    "MAX_CONTRACT_CHARS",
    "MAX_CONTRACT_DEPTH",
    "MAX_ORDER_CHARS",
    "MAX_ORDER_DEPTH",
    "Contract",
    "lookup",
    "parse_contract",
    "pointer_value",
]

MAX_CONTRACT_CHARS = 1_000_000
"""The longest contract document accepted (a real one is a few hundred characters)."""

MAX_CONTRACT_DEPTH = 16
"""The deepest nesting of tables and arrays in a contract (``fields.record.TYPE`` is 4)."""

MAX_ORDER_CHARS = 10_000
"""The longest ``events.order`` expression accepted."""

MAX_ORDER_DEPTH = 32
"""The deepest nesting of parentheses in ``events.order``."""

Framing = Literal["sse", "ndjson"]
MISSING: Any = object()
ANY_TYPE = "*"
"""The event type of a ``volatile`` pointer that applies to events of every type."""

# section -> allowed keys (the top level holds "name" and the sections)
_KEYS: dict[str, frozenset[str]] = {
    "stream": frozenset({"framing", "type_field", "sentinels", "incremental"}),
    "events": frozenset({"start", "terminal", "order"}),
    "fields": frozenset({"same", "required", "record", "volatile"}),
    "upstream": frozenset({"incomplete"}),
}


@dataclass(frozen=True, slots=True)
class Contract:
    """One application stream contract (see docs/guides/checker.md, "Contracts").

    The endpoint-recording keys:

    - ``incremental``: the stream must arrive incrementally (``stream.buffered`` otherwise).
    - ``record``: per event type, ``(event_pointer, record_pointer)`` pairs of RFC 6901 JSON
      pointers: the event must carry the field, equal to the stored record's value when the
      check is given one (``check_stream(..., record=row)``).
    - ``after_incomplete``: the terminal event types allowed after an incomplete upstream
      stream (``check_stream(..., upstream_incomplete=True)``); ``None``: not constrained.
    - ``volatile``: ``(event_type, pointer)`` pairs of fields that change between runs (ids,
      timestamps); ``event_type`` is :data:`ANY_TYPE` (``"*"``) for every type. Not checked
      here: read by whoever compares streams (snapshots, diffs) to drop those fields, with
      :meth:`volatile_for`.
    """

    name: str = "contract"
    framing: Framing = "sse"
    type_field: str | None = None  # dotted JSON path; None: the SSE event: name
    sentinels: frozenset[str] = frozenset()  # non-JSON data values, each its own event type
    start: frozenset[str] = frozenset()
    terminal: frozenset[str] = frozenset()
    order: Order | None = None
    same: tuple[str, ...] = ()
    required: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())
    incremental: bool = False
    record: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    after_incomplete: frozenset[str] | None = None
    volatile: tuple[tuple[str, str], ...] = ()

    def required_for(self, kind: str) -> tuple[str, ...]:
        """The fields an event of type ``kind`` must carry."""
        for name, fields in self.required:
            if name == kind:
                return fields
        return ()

    def record_for(self, kind: str) -> tuple[tuple[str, str], ...]:
        """The ``(event_pointer, record_pointer)`` pairs an event of type ``kind`` must match."""
        for name, pairs in self.record:
            if name == kind:
                return pairs
        return ()

    def volatile_for(self, kind: str) -> tuple[str, ...]:
        """The pointers of the fields of a ``kind`` event that change between runs."""
        return tuple(p for name, p in self.volatile if name in (kind, ANY_TYPE))


def pointer_value(doc: Any, pointer: str) -> Any:
    """The value at an RFC 6901 ``pointer`` in a JSON document (or a mapping), or ``MISSING``."""
    value = doc
    for token in parse_pointer(pointer):
        if isinstance(value, Mapping) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return MISSING
    return value


def lookup(payload: Any, path: str) -> Any:
    """The value at dotted ``path`` in a JSON object, or ``MISSING``."""
    value = payload
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise UsageError(f"contract: {where} must be a list of names, not {value!r}")


def _pointers(where: str, value: Any) -> tuple[str, ...]:
    """A list of RFC 6901 JSON pointers (``/record_version``), each checked."""
    names = _strings(where, value)
    for name in names:
        if not name.startswith("/"):
            raise UsageError(
                f"contract: {where} takes JSON pointers (RFC 6901): write '/{name}', not {name!r}"
            )
        try:
            parse_pointer(name)
        except UsageError as e:
            raise UsageError(f"contract: {where}: {e}") from None
    return names


def _record(fields: Mapping[str, Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """fields.record: type = ["/ptr", ...] (the same pointer in event and record) or
    type = { "/event_ptr" = "/record_ptr" }."""
    table = fields.get("record", {})
    if not isinstance(table, Mapping):
        raise UsageError("contract: fields.record must be a table of type = [JSON pointers]")
    out = []
    for kind, spec in table.items():
        where = f"fields.record.{kind}"
        if isinstance(spec, Mapping):
            events = _pointers(where, list(spec))
            stored = _pointers(where, list(spec.values()))
            pairs = tuple(zip(events, stored, strict=True))
        else:
            pairs = tuple((p, p) for p in _pointers(where, spec))
        out.append((str(kind), pairs))
    return tuple(out)


def _volatile(fields: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """fields.volatile: ["/ptr", ...] for every event type, or a table type = ["/ptr", ...]
    ("*" = every type)."""
    spec = fields.get("volatile", [])
    if isinstance(spec, Mapping):
        return tuple(
            (str(kind), p)
            for kind, names in spec.items()
            for p in _pointers(f"fields.volatile.{kind}", names)
        )
    return tuple((ANY_TYPE, p) for p in _pointers("fields.volatile", spec))


def _after_incomplete(
    upstream: Mapping[str, Any], terminal: frozenset[str]
) -> frozenset[str] | None:
    if "incomplete" not in upstream:
        return None
    allowed = frozenset(_strings("upstream.incomplete", upstream["incomplete"]))
    if not allowed:
        raise UsageError("contract: upstream.incomplete must name at least one terminal event")
    stray = sorted(allowed - terminal)
    if stray:
        known = " | ".join(sorted(terminal)) or "none"
        raise UsageError(
            f"contract: upstream.incomplete names {stray[0]!r}, which is not a terminal event "
            f"(events.terminal: {known})"
        )
    return allowed


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    section = data.get(name, {})
    if not isinstance(section, Mapping):
        raise UsageError(f"contract: [{name}] must be a table, not {section!r}")
    unknown = sorted(set(section) - _KEYS[name])
    if unknown:
        allowed = ", ".join(sorted(_KEYS[name]))
        raise UsageError(f"contract: unknown key {name}.{unknown[0]} (known: {allowed})")
    return section


def from_mapping(data: Mapping[str, Any], *, default_name: str = "contract") -> Contract:
    """Build a contract from its parsed TOML/JSON document."""
    unknown = sorted(set(data) - {"name", *_KEYS})
    if unknown:
        raise UsageError(
            f"contract: unknown key {unknown[0]!r} "
            "(known: name, [stream], [events], [fields], [upstream])"
        )
    stream, events, fields, upstream = (
        _section(data, s) for s in ("stream", "events", "fields", "upstream")
    )
    name = data.get("name", default_name)
    if not isinstance(name, str):
        raise UsageError(f"contract: name must be a string, not {name!r}")
    framing = stream.get("framing", "sse")
    if framing not in ("sse", "ndjson"):
        raise UsageError(f"contract: stream.framing must be 'sse' or 'ndjson', not {framing!r}")
    type_field = stream.get("type_field")
    if type_field is not None and (not isinstance(type_field, str) or not type_field):
        raise UsageError(f"contract: stream.type_field must be a field name, not {type_field!r}")
    if framing == "ndjson" and type_field is None:
        raise UsageError(
            "contract: NDJSON events have no event: line; set stream.type_field (e.g. 'type')"
        )
    order_src = events.get("order")
    if order_src is not None and not isinstance(order_src, str):
        raise UsageError(f"contract: events.order must be a string, not {order_src!r}")
    if order_src is not None:
        _check_order_bounds(order_src)
    required = fields.get("required", {})
    if not isinstance(required, Mapping):
        raise UsageError("contract: fields.required must be a table of type = [fields]")
    incremental = stream.get("incremental", False)
    if not isinstance(incremental, bool):
        raise UsageError(f"contract: stream.incremental must be true or false, not {incremental!r}")
    terminal = frozenset(_strings("events.terminal", events.get("terminal", [])))
    contract = Contract(
        name=name,
        framing=framing,
        type_field=type_field,
        sentinels=frozenset(_strings("stream.sentinels", stream.get("sentinels", []))),
        start=frozenset(_strings("events.start", events.get("start", []))),
        terminal=terminal,
        order=compile_order(order_src) if order_src is not None else None,
        same=_strings("fields.same", fields.get("same", [])),
        required=tuple(
            (str(kind), _strings(f"fields.required.{kind}", names))
            for kind, names in required.items()
        ),
        incremental=incremental,
        record=_record(fields),
        after_incomplete=_after_incomplete(upstream, terminal),
        volatile=_volatile(fields),
    )
    if contract.order is not None:
        named = contract.start | contract.terminal
        stray = sorted(named - contract.order.names)
        if stray:
            raise UsageError(
                f"contract: event type {stray[0]!r} is a start or terminal event but never "
                "appears in events.order"
            )
    return contract


def _order_depth(source: str) -> int:
    """How deep the parentheses of an order expression nest (outside "quoted" names)."""
    depth = deepest = 0
    quoted = False
    for c in source:
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif not quoted and c == ")":
            depth -= 1
    return deepest


def _check_order_bounds(source: str) -> None:
    if len(source) > MAX_ORDER_CHARS:
        raise UsageError(
            f"contract: events.order is {len(source)} characters long; the limit is "
            f"{MAX_ORDER_CHARS}"
        )
    depth = _order_depth(source)
    if depth > MAX_ORDER_DEPTH:
        raise UsageError(
            f"contract: events.order nests parentheses {depth} deep; the limit is {MAX_ORDER_DEPTH}"
        )


def _too_deep() -> UsageError:
    return UsageError(
        f"contract nests tables or arrays deeper than {MAX_CONTRACT_DEPTH} levels "
        "(a contract needs 4)"
    )


def parse_contract(text: str, *, fmt: Literal["toml", "json"], name: str = "contract") -> Contract:
    """Parse a contract document (TOML or JSON text); ``name`` is used when it has none."""
    if len(text) > MAX_CONTRACT_CHARS:
        raise UsageError(
            f"contract is {len(text)} characters long; the limit is {MAX_CONTRACT_CHARS}"
        )
    try:
        data = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except RecursionError:  # both parsers recurse once per nesting level
        raise _too_deep() from None
    except (tomllib.TOMLDecodeError, ValueError) as e:
        raise UsageError(f"contract is not valid {fmt.upper()}: {e}") from None
    if depth_exceeds(data, MAX_CONTRACT_DEPTH):
        raise _too_deep()
    if not isinstance(data, dict):
        raise UsageError("contract: the document must be a table (a JSON object)")
    return from_mapping(data, default_name=name)
