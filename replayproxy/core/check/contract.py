"""Stream contracts for an application's own event stream: the declarative description
(:class:`Contract`, parsed from TOML or JSON text) that :class:`ContractGrammar` checks.

A contract says how events are framed (SSE or NDJSON), where an event's type lives (the SSE
``event:`` name or a JSON field), which types may start a stream, which are terminal (exactly
one, last), which fields every event carries with one value (the turn id), which fields each
type must carry, and the order (:mod:`.order`). The format is documented in docs/checker.md.
Pure: text in, a contract out; a bad contract is a one-line :class:`UsageError`.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from replayproxy.core.check.order import Order, compile_order
from replayproxy.errors import UsageError

__all__ = ["Contract", "lookup", "parse_contract"]

Framing = Literal["sse", "ndjson"]
MISSING: Any = object()

# section -> allowed keys (the top level holds "name" and the sections)
_KEYS: dict[str, frozenset[str]] = {
    "stream": frozenset({"framing", "type_field", "sentinels"}),
    "events": frozenset({"start", "terminal", "order"}),
    "fields": frozenset({"same", "required"}),
}


@dataclass(frozen=True, slots=True)
class Contract:
    """One application stream contract (see docs/checker.md, "Contracts")."""

    name: str = "contract"
    framing: Framing = "sse"
    type_field: str | None = None  # dotted JSON path; None: the SSE event: name
    sentinels: frozenset[str] = frozenset()  # non-JSON data values, each its own event type
    start: frozenset[str] = frozenset()
    terminal: frozenset[str] = frozenset()
    order: Order | None = None
    same: tuple[str, ...] = ()
    required: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def required_for(self, kind: str) -> tuple[str, ...]:
        """The fields an event of type ``kind`` must carry."""
        for name, fields in self.required:
            if name == kind:
                return fields
        return ()


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
            f"contract: unknown key {unknown[0]!r} (known: name, [stream], [events], [fields])"
        )
    stream, events, fields = (_section(data, s) for s in ("stream", "events", "fields"))
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
    required = fields.get("required", {})
    if not isinstance(required, Mapping):
        raise UsageError("contract: fields.required must be a table of type = [fields]")
    contract = Contract(
        name=name,
        framing=framing,
        type_field=type_field,
        sentinels=frozenset(_strings("stream.sentinels", stream.get("sentinels", []))),
        start=frozenset(_strings("events.start", events.get("start", []))),
        terminal=frozenset(_strings("events.terminal", events.get("terminal", []))),
        order=compile_order(order_src) if order_src is not None else None,
        same=_strings("fields.same", fields.get("same", [])),
        required=tuple(
            (str(kind), _strings(f"fields.required.{kind}", names))
            for kind, names in required.items()
        ),
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


def parse_contract(text: str, *, fmt: Literal["toml", "json"], name: str = "contract") -> Contract:
    """Parse a contract document (TOML or JSON text); ``name`` is used when it has none."""
    try:
        data = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as e:
        raise UsageError(f"contract is not valid {fmt.upper()}: {e}") from None
    if not isinstance(data, dict):
        raise UsageError("contract: the document must be a table (a JSON object)")
    return from_mapping(data, default_name=name)
