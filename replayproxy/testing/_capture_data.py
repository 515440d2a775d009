"""The parts of a stream capture that every capture module shares: the frames a client read
from a streaming endpoint (:class:`CapturedFrame`), the events they parse into
(:class:`CapturedEvent`), and :class:`Capture`, what a capture holds as the assertions read it.

:class:`~replayproxy.testing._capture.StreamCapture` is built by
:mod:`replayproxy.testing._capture_read` (which reads the socket and the clock); its methods call
:mod:`replayproxy.testing._capture_assert` (the structural assertions and the checker) and
:mod:`replayproxy.testing._snapshot`, which read it as a :class:`Capture`: so they import
nothing above this module, and ``StreamCapture`` imports them plainly. This module also holds
the pure parts they share: :func:`parse_frames` (frames to events, through the core SSE parser
and the checker's NDJSON layer) and :func:`terminal_for` (which events end the stream, from
``terminal=`` names, a contract or the provider registry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.contract import MISSING, Contract, lookup
from replayproxy._core.check.ndjson import NDJSONLayer
from replayproxy._core.json.limits import loads
from replayproxy._core.providers import definition, detect, parse
from replayproxy._core.wire.sse import HAS_EVENT, SSEParser

__all__ = [
    "END_KINDS",
    "Capture",
    "CapturedEvent",
    "CapturedFrame",
    "Terminal",
    "parse_frames",
    "terminal_for",
]

END_KINDS = ("complete", "reset", "incomplete", "timeout")
"""The values of ``StreamCapture.end``; see :mod:`replayproxy.testing._capture_read`."""


@dataclass(frozen=True, slots=True)
class CapturedFrame:
    """One read of the body: ``data`` arrived ``at_ms`` milliseconds after the request."""

    at_ms: float
    data: bytes


@dataclass(frozen=True, slots=True)
class CapturedEvent:
    """One event of the body, SSE or NDJSON, parsed by the core parsers."""

    event: str | None  # the SSE `event:` field (None when absent; NDJSON lines: None)
    data: Any  # JSON-decoded where it is JSON, else the data text
    text: str  # the raw data text
    id: str | None  # the SSE `id:` field
    at_ms: float  # arrival of the frame that completed it


class Capture(Protocol):
    """What the assertions and the snapshot read of a capture: the values of a
    :class:`~replayproxy.testing._capture.StreamCapture`, which has them all (mypy checks it
    wherever one is passed), so the functions it calls need not import it."""

    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def frames(self) -> tuple[CapturedFrame, ...]: ...
    @property
    def events(self) -> tuple[CapturedEvent, ...]: ...
    @property
    def trailing(self) -> bytes: ...
    @property
    def end(self) -> str: ...
    @property
    def closed_after_terminal(self) -> bool | None: ...
    @property
    def body(self) -> bytes: ...
    @property
    def content_type(self) -> str: ...


def _json_or_text(text: str) -> Any:
    try:
        return loads(text)
    except ValueError:  # JSONDecodeError (and JSONTooDeep) are ValueErrors
        return text


class _Collect(Grammar):
    """A grammar that only keeps the NDJSON layer's lines (the checker's own line cutter)."""

    def __init__(self) -> None:
        super().__init__(Report(), RequestOptions())
        self.lines: list[StreamEvent] = []

    def event(self, ev: StreamEvent) -> None:
        self.lines.append(ev)


def _is_ndjson(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media in {"application/x-ndjson", "application/ndjson", "application/jsonl"} or (
        media.endswith(("+ndjson", "jsonlines", "json-lines"))
    )


def parse_frames(
    frames: Sequence[CapturedFrame], content_type: str
) -> tuple[tuple[CapturedEvent, ...], bytes]:
    """The events of ``frames`` and the bytes after the last complete block.

    SSE (``text/event-stream``, or a body that does not say NDJSON) goes through the core
    :class:`SSEParser`; NDJSON content types through the checker's NDJSON layer. The trailing
    bytes are those after the last complete block (an event, a comment or a blank line; for
    NDJSON the last ``\\n``): an unterminated last frame. Any split gives the same events.
    """
    events: list[CapturedEvent] = []
    if _is_ndjson(content_type):
        collect = _Collect()
        layer = NDJSONLayer(collect.report, collect)
        for frame in frames:
            layer.feed(frame.data)
            for line in collect.lines:
                data = line.data if line.payload is INVALID else line.payload
                events.append(CapturedEvent(None, data, line.data, None, frame.at_ms))
            collect.lines.clear()
        body = b"".join(f.data for f in frames)
        return tuple(events), body[body.rfind(b"\n") + 1 :]
    parser = SSEParser(include_ignored=True)
    done = 0  # end of the last complete block
    for frame in frames:
        for block in parser.feed(frame.data):
            done = block.end
            if block.dispatched:
                name = block.event if block.flags & HAS_EVENT else None
                data = _json_or_text(block.data)
                events.append(CapturedEvent(name, data, block.data, block.id, frame.at_ms))
    body = b"".join(f.data for f in frames)
    return tuple(events), body[done:]


@dataclass(frozen=True, slots=True)
class Terminal:
    """Which events end a stream: by type name (the SSE ``event:``, a sentinel data text such
    as ``[DONE]``, or the ``type_field`` of a JSON payload), or by bytes of the data."""

    names: frozenset[str] = frozenset()
    type_field: str | None = None
    data: tuple[bytes, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.names or self.data)

    def kind(self, ev: CapturedEvent) -> str | None:
        """The type name of ``ev``: its ``event:``, its ``type_field`` or its sentinel text."""
        if self.type_field is not None and isinstance(ev.data, dict):
            value = lookup(ev.data, self.type_field)
            if value is not MISSING:
                return str(value)
        if ev.event is not None:
            return ev.event
        if isinstance(ev.data, dict) and isinstance(ev.data.get("type"), str):
            return str(ev.data["type"])
        return ev.text if isinstance(ev.data, str) else None

    def matches(self, ev: CapturedEvent) -> bool:
        """Whether ``ev`` is a terminal event."""
        if self.kind(ev) in self.names:
            return True
        raw = ev.text.encode("utf-8")
        for pattern in self.data:
            if pattern.startswith(b"data:"):
                if raw == pattern.removeprefix(b"data:").lstrip(b" "):
                    return True
            elif pattern in raw:
                return True
        return False


def terminal_for(
    *,
    terminal: str | Sequence[str] | None = None,
    provider: str | None = None,
    contract: Contract | None = None,
    url: str = "",
    content_type: str = "",
) -> Terminal:
    """The terminal events of a stream: ``terminal`` names, else the ``contract``'s, else the
    ``provider``'s (by name, or detected from the URL and content type). Empty when none is
    known (the generic SSE stream has no terminal event)."""
    if terminal is not None:
        names = (terminal,) if isinstance(terminal, str) else tuple(terminal)
        field = contract.type_field if contract is not None else None
        return Terminal(frozenset(names), field)
    if contract is not None:
        return Terminal(contract.terminal, contract.type_field)
    api = parse(provider) if provider else detect(url, content_type or None, websocket=False)
    if api is None:
        return Terminal()
    spec = definition(api)
    return Terminal(frozenset(spec.terminal.events), None, spec.terminal.data)
