"""What a stream capture holds: the frames a client read from a streaming endpoint, the events
they parse into, and how the body ended (:class:`StreamCapture`).

The capture is plain data, built by :mod:`replayproxy.testing._capture_read` (which reads the
socket and the clock) and checked by :mod:`replayproxy.testing._capture_assert` (the structural
assertions and the checker). This module holds the values, the methods that delegate to those
assertions, and the pure parts both use: :func:`parse_frames` (frames to events, through the
core SSE parser and the checker's NDJSON layer) and :func:`terminal_for` (which events end the
stream, from ``terminal=`` names, a contract or the provider registry).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.contract import MISSING, Contract, lookup
from replayproxy._core.check.ndjson import NDJSONLayer
from replayproxy._core.json.limits import loads
from replayproxy._core.providers import definition, detect, parse
from replayproxy._core.wire.sse import HAS_EVENT, SSEParser

if TYPE_CHECKING:
    from replayproxy.checking import StreamReport

__all__ = [
    "END_KINDS",
    "CapturedEvent",
    "CapturedFrame",
    "StreamCapture",
    "Terminal",
    "parse_frames",
    "terminal_for",
]

END_KINDS = ("complete", "reset", "incomplete", "timeout")
"""The values of :attr:`StreamCapture.end`; see :mod:`replayproxy.testing._capture_read`."""


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
class StreamCapture:
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

    def assert_streamed(self, min_frames: int = 2, min_spread_ms: float = 0.0) -> None:
        """The body arrived in at least ``min_frames`` reads spread over ``min_spread_ms``."""
        from replayproxy.testing import _capture_assert as capture_assert

        capture_assert.assert_streamed(self, min_frames=min_frames, min_spread_ms=min_spread_ms)

    def assert_streaming_headers(self, *, accel_buffering: bool = False) -> None:
        """An event-stream or NDJSON content type, ``cache-control: no-cache``, no
        ``content-encoding`` (and ``x-accel-buffering: no`` when ``accel_buffering``)."""
        from replayproxy.testing import _capture_assert as capture_assert

        capture_assert.assert_streaming_headers(self, accel_buffering=accel_buffering)

    def assert_framing(self) -> None:
        """No bytes after the last complete event."""
        from replayproxy.testing import _capture_assert as capture_assert

        capture_assert.assert_framing(self)

    def assert_terminated(
        self,
        terminal: str | Sequence[str] | None = None,
        *,
        provider: str | None = None,
        contract: Contract | None = None,
    ) -> None:
        """Exactly one terminal event (``terminal`` types, the ``contract``'s or the
        ``provider``'s), the last one, and the body ended cleanly after it."""
        from replayproxy.testing import _capture_assert as capture_assert

        capture_assert.assert_terminated(
            self, terminal=terminal, provider=provider, contract=contract
        )

    def assert_stream_ok(
        self,
        provider: str | None = None,
        contract: Contract | str | os.PathLike[str] | None = None,
        *,
        record: Mapping[str, Any] | None = None,
        upstream_incomplete: bool | None = None,
        requests: Sequence[Any] | None = None,
    ) -> StreamReport:
        """Run the stream checker on the capture: ``AssertionError`` with the report on errors,
        else the report (its warnings and notes). ``requests``: the replay's requests seen
        (``replayproxy.requests``), from whose faults ``upstream_incomplete`` is derived."""
        from replayproxy.testing import _capture_assert as capture_assert

        return capture_assert.assert_stream_ok(
            self,
            provider=provider,
            contract=contract,
            record=record,
            upstream_incomplete=upstream_incomplete,
            requests=requests,
        )

    def assert_matches_snapshot(
        self,
        name_or_path: str | os.PathLike[str],
        ignore: Sequence[str] = (),
        *,
        contract: Contract | str | os.PathLike[str] | None = None,
        provider: str | None = None,
        update: bool | None = None,
    ) -> None:
        """Compare the capture, by meaning, with its stored snapshot
        (:func:`replayproxy.testing._snapshot.assert_matches_snapshot`; ``contract``,
        ``provider`` and ``update`` are passed on when given)."""
        # By name: the snapshot module is written beside this one, and imports this one.
        snapshot = importlib.import_module("replayproxy.testing._snapshot")
        given = {"contract": contract, "provider": provider, "update": update}
        options = {key: value for key, value in given.items() if value is not None}
        snapshot.assert_matches_snapshot(self, name_or_path, ignore=ignore, **options)


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
