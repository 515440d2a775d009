"""What a stream capture holds: the frames a client read from a streaming endpoint, the events
they parse into, and how the body ended (:class:`CaptureData`, the values of a
:class:`~replayproxy.testing._capture.StreamCapture`).

The values are built by :mod:`replayproxy.testing._capture_read` (which reads the socket and the
clock) and read by :mod:`replayproxy.testing._capture_assert` (the structural assertions and the
checker) and :mod:`replayproxy.testing._snapshot`; ``StreamCapture`` adds the methods that call
those, so this module imports none of them. It also holds the pure parts they share:
:func:`parse_frames` (frames to events, through the core SSE parser and the checker's NDJSON
layer) and :func:`terminal_for` (which events end the stream, from ``terminal=`` names, a
contract or the provider registry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.contract import MISSING, Contract, lookup
from replayproxy._core.check.ndjson import NDJSONLayer
from replayproxy._core.json.limits import loads
from replayproxy._core.providers import definition, detect, parse
from replayproxy._core.wire.sse import HAS_EVENT, SSEParser

__all__ = [
    "END_KINDS",
    "CaptureData",
    "CapturedEvent",
    "CapturedFrame",
    "Terminal",
    "parse_frames",
    "terminal_for",
]

END_KINDS = ("complete", "reset", "incomplete", "timeout")
"""The values of :attr:`CaptureData.end`; see :mod:`replayproxy.testing._capture_read`."""


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


@dataclass(frozen=True, slots=True)
class CaptureData:
    """A response read from the front door: head, timed frames, events and how it ended.

    ``end`` is ``"complete"`` (the body ended with its framing), ``"incomplete"`` (the server
    closed the connection short of its framing), ``"reset"`` (the connection was reset) or
    ``"timeout"`` (no byte for the read timeout). ``closed_after_terminal`` says whether the
    server closed the connection within the timeout after the terminal event (``None`` when no
    terminal event is known for this stream, or none arrived).
    """

    method: str
    url: str
    status: int
    headers: Mapping[str, str]  # case-insensitive (an httpx.Headers)
    frames: tuple[CapturedFrame, ...]
    events: tuple[CapturedEvent, ...]
    trailing: bytes  # bytes after the last complete event
    end: str  # "complete" | "reset" | "incomplete" | "timeout"
    closed_after_terminal: bool | None

    @property
    def body(self) -> bytes:
        """The whole body as read (content-decoded by nothing: the bytes on the wire)."""
        return b"".join(frame.data for frame in self.frames)

    @property
    def content_type(self) -> str:
        """The ``content-type`` header, ``""`` when absent."""
        return self.headers.get("content-type", "")


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
