"""The fault tests' recorded streams: :func:`replayproxy.testing._builders.stream_interaction`
with these tests' defaults (frames 20 ms apart, the ending at the last frame) and a short
variant of OpenAI's long chat stream for fast client tests."""

from __future__ import annotations

from replayproxy._core.cassette.model import Interaction
from replayproxy.testing._builders import stream_interaction
from replayproxy.testing._streams import STREAMS

__all__ = ["events_for", "interaction"]


def events_for(name: str, *, short: bool = False) -> tuple[bytes, ...]:
    """The stream's events; ``short`` trims OpenAI chat (304 events) to 15 for fast client
    tests, keeping its first 10 chunks, the two with multi-byte characters and the ending."""
    events = STREAMS[name].events
    if short and name == "openai-chat-text":
        return (*events[:10], events[132], events[141], *events[-3:])
    return events


def interaction(
    name: str,
    *,
    gap_ms: int = 20,
    ttfb_ms: int = 50,
    faults: tuple[str, ...] = (),
    path: str | None = None,
    short: bool = False,
) -> Interaction:
    """The stream ``name`` of :data:`STREAMS` as recorded: one frame per event, ``gap_ms`` apart."""
    return stream_interaction(
        name,
        events=events_for(name, short=short),
        path=path,
        head_ms=ttfb_ms,
        gap_ms=gap_ms,
        end_after_ms=0,
        faults=faults,
    )
