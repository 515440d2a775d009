"""A stream capture: what a client read from a streaming endpoint, with the assertions a test
calls on it (:class:`StreamCapture`).

Built by :mod:`replayproxy.testing._capture_read`. Each method calls the function of the same
name in :mod:`replayproxy.testing._capture_assert` or :mod:`replayproxy.testing._snapshot`;
those read the capture as a :class:`~replayproxy.testing._capture_data.Capture` (its values),
so they import nothing from here and this module imports them plainly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replayproxy._core.check.contract import Contract
from replayproxy.testing import _capture_assert, _snapshot
from replayproxy.testing._capture_data import CapturedEvent, CapturedFrame

if TYPE_CHECKING:
    from replayproxy.checking import StreamReport

__all__ = ["StreamCapture"]


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
        _capture_assert.assert_streamed(self, min_frames=min_frames, min_spread_ms=min_spread_ms)

    def assert_streaming_headers(self, *, accel_buffering: bool = False) -> None:
        """An event-stream or NDJSON content type, ``cache-control: no-cache``, no
        ``content-encoding`` (and ``x-accel-buffering: no`` when ``accel_buffering``)."""
        _capture_assert.assert_streaming_headers(self, accel_buffering=accel_buffering)

    def assert_framing(self) -> None:
        """No bytes after the last complete event."""
        _capture_assert.assert_framing(self)

    def assert_terminated(
        self,
        terminal: str | Sequence[str] | None = None,
        *,
        provider: str | None = None,
        contract: Contract | None = None,
    ) -> None:
        """Exactly one terminal event (``terminal`` types, the ``contract``'s or the
        ``provider``'s), the last one, and the body ended cleanly after it."""
        _capture_assert.assert_terminated(
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
        return _capture_assert.assert_stream_ok(
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
        _snapshot.assert_matches_snapshot(
            self, name_or_path, ignore=ignore, contract=contract, provider=provider, update=update
        )
