"""What a stream capture holds: the frames a client read from a streaming endpoint, the events
they parse into, and how the body ended (:class:`StreamCapture`).

The capture is plain data, built by :mod:`replayproxy.testing.capture_read` (which reads the
socket and the clock) and checked by :mod:`replayproxy.testing.capture_assert` (the structural
assertions and the checker); this module only holds the values and the methods that delegate.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replayproxy.checking import StreamReport
    from replayproxy.core.check import Contract

__all__ = ["END_KINDS", "CapturedEvent", "CapturedFrame", "StreamCapture"]

END_KINDS = ("complete", "reset", "incomplete", "timeout")
"""The values of :attr:`StreamCapture.end`; see :mod:`replayproxy.testing.capture_read`."""


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
        from replayproxy.testing import capture_assert

        capture_assert.assert_streamed(self, min_frames=min_frames, min_spread_ms=min_spread_ms)

    def assert_streaming_headers(self, *, accel_buffering: bool = False) -> None:
        """An event-stream or NDJSON content type, ``cache-control: no-cache``, no
        ``content-encoding`` (and ``x-accel-buffering: no`` when ``accel_buffering``)."""
        from replayproxy.testing import capture_assert

        capture_assert.assert_streaming_headers(self, accel_buffering=accel_buffering)

    def assert_framing(self) -> None:
        """No bytes after the last complete event."""
        from replayproxy.testing import capture_assert

        capture_assert.assert_framing(self)

    def assert_terminated(self, terminal: str | Sequence[str] | None = None) -> None:
        """Exactly one terminal event, the last one, and the connection closed after it."""
        from replayproxy.testing import capture_assert

        capture_assert.assert_terminated(self, terminal=terminal)

    def check(
        self,
        provider: str | None = None,
        contract: Contract | str | os.PathLike[str] | None = None,
        *,
        record: Mapping[str, Any] | None = None,
        upstream: bool | Sequence[Any] | None = None,
    ) -> StreamReport:
        """Run the stream checker on the capture; AssertionError with the report on errors."""
        from replayproxy.testing import capture_assert

        return capture_assert.check(
            self, provider=provider, contract=contract, record=record, upstream=upstream
        )

    def assert_matches_snapshot(
        self, name_or_path: str | os.PathLike[str], ignore: Sequence[str] = ()
    ) -> None:
        """Compare the capture, by meaning, with its stored snapshot
        (:func:`replayproxy.testing.snapshot.assert_matches_snapshot`)."""
        from replayproxy.testing import snapshot  # type: ignore[attr-defined,unused-ignore]

        snapshot.assert_matches_snapshot(self, name_or_path, ignore=ignore)
