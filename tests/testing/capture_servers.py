"""Loopback servers for the capture tests: a ReplayServer serving one built interaction, with
faults, so every end kind (complete, incomplete, reset, timeout) is a real socket's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from replayproxy._core.cassette.model import EndKind, Header
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import SSE_EVENTS, cassette, interaction

CHAT_PATH = "/v1/chat/completions"
STREAM_HEADERS: tuple[Header, ...] = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


@contextmanager
def serving(
    chunks: Sequence[bytes] = SSE_EVENTS,
    *,
    faults: Sequence[str] = (),
    headers: tuple[Header, ...] = STREAM_HEADERS,
    gap_ms: float = 30,
    end: EndKind = EndKind.COMPLETE,
    speed: float = 1.0,
    path: str = CHAT_PATH,
) -> Iterator[ReplayServer]:
    """A started ReplayServer answering ``POST path`` (with CHAT_JSON) with ``chunks``."""
    url = "https://api.example.invalid" + path
    it = interaction(chunks, url=url, headers=headers, gap_ms=gap_ms, head_ms=5, end=end)
    with ReplayServer(cassette(it), speed=speed, faults=list(faults)) as server:
        yield server


# httpx serializes this compactly, as the recorded CHAT_BODY.
CHAT_JSON = {"model": "m", "stream": True}
