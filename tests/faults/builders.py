"""Build recorded interactions from the simulator's canned provider streams, for fault tests."""

from __future__ import annotations

from replayproxy.core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy.testing.streams import STREAMS

__all__ = ["HOSTS", "events_for", "interaction"]

HOSTS = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "bedrock": "https://bedrock-runtime.us-east-1.amazonaws.com",
}


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
    s = STREAMS[name]
    url = HOSTS[s.provider] + (path or s.path.replace("{model}", "some-model"))
    head = ttfb_ms * 1_000_000
    frames = tuple(
        Frame(head + (i + 1) * gap_ms * 1_000_000, data)
        for i, data in enumerate(events_for(name, short=short))
    )
    request = Request(s.method, url, headers=((b"content-type", b"application/json"),))
    response = Response(s.status, "OK", headers=s.headers, head_offset_ns=head, frames=frames)
    end = Ending(EndKind.COMPLETE, frames[-1].offset_ns if frames else head)
    return Interaction(request, response, end, faults)
