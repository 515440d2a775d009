"""Events by meaning: a stream's events as their types and JSON fields, volatile fields
dropped (pure).

Two recordings of the same turn differ in every id, ``created`` time, fingerprint, latency and
byte split, yet mean the same. :func:`body_meaning` reads an SSE, AWS event-stream or NDJSON
body into :class:`EventMeaning` s: the event's type (the contract's type field when it has
one, else the SSE ``event:`` name, else the JSON ``type`` or ``object`` field the provider
uses, else ``message``) and its data (JSON-decoded, or the text, such as ``[DONE]``), with
the volatile fields left out: the provider's (``ProviderDef.volatile``), the application
contract's (``Contract.volatile``, per event type) and the caller's JSON pointers. In every
pointer ``*`` stands for any key or array index (an array item it names becomes
``"(ignored)"``, so the items after it keep their numbers). SSE ``id:`` fields are framing,
not meaning, and are not kept. Snapshots (``replayproxy.testing._snapshot``) and ``cassette
diff --events`` compare these; :func:`replayproxy._core.tools.event_diff.diff_meanings` says
how two such lists differ.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replayproxy._core.check.contract import MISSING, lookup
from replayproxy._core.json.limits import loads
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._core.providers import Provider, ProviderDef, definition, parse
from replayproxy._core.wire.events import stream_format
from replayproxy._core.wire.eventstream import EventStreamDecoder, EventStreamMessage
from replayproxy._core.wire.sse import parse_events
from replayproxy._errors import UsageError

__all__ = [
    "ANY_TYPE",
    "IGNORED",
    "EventMeaning",
    "RawEvent",
    "Volatile",
    "body_events",
    "body_meaning",
    "drop_paths",
    "event_meaning",
    "normalise",
    "volatile_paths",
]

IGNORED = "(ignored)"
"""What an array item named by a volatile pointer becomes (an object member is left out)."""

Path = tuple[str, ...]
"""A pointer's reference tokens; ``*`` matches any key or index."""

_NDJSON = (
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/json-lines",
)


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One event as parsed: its name (SSE ``event:``, event-stream ``:event-type``; ``None``
    for NDJSON or an SSE event without one) and its data text."""

    name: str | None
    text: str


@dataclass(frozen=True, slots=True)
class EventMeaning:
    """One event by meaning: its type and its data without the volatile fields."""

    type: str
    data: Any

    def as_json(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}


def _definition(provider: Provider | str) -> ProviderDef:
    """A provider by value (``openai-chat``) or by the names users type (``openai``)."""
    if isinstance(provider, Provider) or provider in Provider.__members__.values():
        return definition(provider)
    return definition(parse(provider))


def _parse(pointer: str, where: str) -> Path:
    try:
        return parse_pointer(pointer)
    except UsageError as e:
        raise UsageError(f"{where}: {e}") from None


ANY_TYPE = "*"
"""The event type of a volatile path that applies to events of every type."""


@dataclass(frozen=True, slots=True)
class Volatile:
    """The fields to leave out: ``(event_type, path)`` pairs, :data:`ANY_TYPE` for all."""

    paths: tuple[tuple[str, Path], ...] = ()

    def for_type(self, kind: str) -> tuple[Path, ...]:
        return tuple(p for t, p in self.paths if t in (kind, ANY_TYPE))

    def __len__(self) -> int:
        return len(self.paths)


def _contract_path(item: object) -> tuple[str, Path]:
    """One ``Contract.volatile`` item: ``(event_type, pointer)`` (the contract's form), or a
    pointer or dotted path for every type."""
    kind, text = item if isinstance(item, tuple) else (ANY_TYPE, item)
    text = str(text)
    path = _parse(text, "contract volatile") if text.startswith("/") else tuple(text.split("."))
    return str(kind), path


def volatile_paths(
    provider: Provider | str | None = None, contract: object = None, ignore: Iterable[str] = ()
) -> Volatile:
    """The fields to leave out: the provider's, the contract's (per event type) and
    ``ignore`` (JSON pointers, for every type)."""
    paths: list[tuple[str, Path]] = []
    if provider is not None:
        paths.extend((ANY_TYPE, parse_pointer(p)) for p in _definition(provider).volatile)
    paths.extend(_contract_path(item) for item in getattr(contract, "volatile", ()) or ())
    paths.extend((ANY_TYPE, _parse(p, "ignore")) for p in ignore)
    return Volatile(tuple(dict.fromkeys(paths)))


def drop_paths(doc: Any, paths: Iterable[Path]) -> Any:
    """``doc`` without the members at ``paths`` (copies along each path; absent ones are fine)."""
    for path in paths:
        doc = _drop(doc, path)
    return doc


def _drop(doc: Any, path: Path) -> Any:
    if not path:
        return doc
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        keys = list(doc) if head == "*" else [head] if head in doc else []
        if not keys:
            return doc
        out = dict(doc)
        for k in keys:
            if rest:
                out[k] = _drop(doc[k], rest)
            else:
                del out[k]
        return out
    if isinstance(doc, list):
        if head == "*":
            idx = list(range(len(doc)))
        elif head.isascii() and head.isdigit() and int(head) < len(doc):
            idx = [int(head)]
        else:
            return doc
        # An item itself is replaced, not removed: removing it would renumber the items after
        # it, and dropping the same pointer again would then drop another one.
        return [(_drop(v, rest) if rest else IGNORED) if i in idx else v for i, v in enumerate(doc)]
    return doc


def _decode(text: str) -> Any:
    try:
        return loads(text)
    except ValueError:
        return text


def _bedrock_bytes(data: Any) -> Any:
    """InvokeModel chunks carry the model's JSON base64-encoded in ``bytes``: read it there, so
    its ids and texts are fields like any other."""
    if isinstance(data, dict) and isinstance(data.get("bytes"), str):
        try:
            inner = loads(base64.b64decode(data["bytes"], validate=True))
        except (ValueError, binascii.Error):
            return data
        return {**data, "bytes": inner}
    return data


def _type_of(name: str | None, data: Any, type_field: str | None) -> str:
    if type_field and isinstance(data, dict):  # a contract's type field names the type
        value = lookup(data, type_field)
        if value is not MISSING:
            return str(value)
    if name and name != "message":
        return name
    if isinstance(data, dict):
        for key in ("type", "object"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return name or "message"


def event_meaning(
    name: str | None,
    text: str,
    *,
    type_field: str | None = None,
    volatile: Volatile = Volatile(),
) -> EventMeaning:
    """One event by meaning (the type is read before volatile fields are dropped)."""
    data = _bedrock_bytes(_decode(text))
    kind = _type_of(name, data, type_field)
    return EventMeaning(kind, drop_paths(data, volatile.for_type(kind)))


def normalise(events: Iterable[EventMeaning], volatile: Volatile) -> list[EventMeaning]:
    """``events`` with the ``volatile`` fields dropped as well (idempotent)."""
    return [EventMeaning(e.type, drop_paths(e.data, volatile.for_type(e.type))) for e in events]


def _media(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def body_events(body: bytes, content_type: str | None) -> list[RawEvent]:
    """The events of an SSE, event-stream or NDJSON body (:class:`NotAStreamError` otherwise):
    complete ones only, as the parsers in :mod:`replayproxy._core.wire` dispatch them."""
    if _media(content_type) in _NDJSON:
        lines = body.split(b"\n")[:-1]  # the last piece has no newline: not a complete event
        return [
            RawEvent(None, line.removesuffix(b"\r").decode("utf-8", "replace"))
            for line in lines
            if line.strip()
        ]
    if stream_format(body, content_type) == "sse":
        return [
            RawEvent(e.event if e.event != "message" else None, e.data) for e in parse_events(body)
        ]
    out: list[RawEvent] = []
    for item in EventStreamDecoder().feed(body):
        if isinstance(item, EventStreamMessage):
            out.append(RawEvent(item.name, item.payload.decode("utf-8", "replace")))
        elif item.fatal:
            break
    return out


def body_meaning(
    body: bytes,
    content_type: str | None,
    *,
    provider: Provider | str | None = None,
    contract: object = None,
    ignore: Iterable[str] = (),
) -> list[EventMeaning]:
    """The events of ``body`` by meaning (see the module doc)."""
    volatile = volatile_paths(provider, contract, ignore)
    type_field = getattr(contract, "type_field", None)
    return [
        event_meaning(e.name, e.text, type_field=type_field, volatile=volatile)
        for e in body_events(body, content_type)
    ]
