"""Sample cassettes for the cassette-tool tests, built with :mod:`replayproxy.testing._builders`.

The values are chosen for these tests: a request carrying secrets to redact (a bearer token,
an e-mail address), a stream split badly on purpose, and a demo session of real provider
streams that ended in different ways.
"""

from __future__ import annotations

from replayproxy._core.cassette.model import Cassette, EndKind, Interaction
from replayproxy.testing import _builders as builders
from replayproxy.testing._builders import interaction, no_response, request, stream_interaction
from replayproxy.testing._streams import STREAMS

# A list, as the tests compare lists of frame data with it.
SSE_EVENTS = list(builders.SSE_EVENTS)


def sse_interaction(
    frames: list[bytes] | None = None, *, gap_ms: int = 20, end: EndKind = EndKind.COMPLETE
) -> Interaction:
    """A POST to a chat endpoint answered with an SSE stream; one frame per chunk given."""
    return interaction(
        SSE_EVENTS if frames is None else frames,
        request=request(
            url="https://api.example.test/v1/chat/completions",
            headers=(
                (b"content-type", b"application/json"),
                (b"authorization", b"Bearer sk-secret"),
            ),
            body=b'{"model":"m","stream":true,"user":"alice@example.com","messages":[]}',
        ),
        reason="OK",
        headers=((b"content-type", b"text/event-stream"), (b"x-request-id", b"req-1")),
        gap_ms=gap_ms,
        end=end,
        recorded_at=1764470000.5,
    )


def split_sse_interaction() -> Interaction:
    """The SSE stream cut badly: event 1 spans two frames, the UTF-8 'é' is split across frames."""
    body = b"".join(SSE_EVENTS)
    cut1 = len(SSE_EVENTS[0]) + 10  # inside event 1
    cut2 = body.index(b"\xc3") + 1  # between the two bytes of 'é'
    return sse_interaction([body[:cut1], body[cut1:cut2], body[cut2:]])


def sample_cassette() -> Cassette:
    """Three interactions: a clean stream, a badly split one, and one that got no response."""
    refused = no_response(request("GET", "https://api.example.test/v1/models", body=b""))
    return Cassette(
        (sse_interaction(), split_sse_interaction(), refused), (("recorded-by", "tests"),)
    )


def _stream_interaction(
    name: str,
    head_ms: int,
    gaps_ms: list[int],
    end: EndKind = EndKind.COMPLETE,
    keep: int | None = None,
) -> Interaction:
    """A recorded-looking interaction from one of the simulator's real provider streams."""
    s = STREAMS[name]
    return stream_interaction(
        name,
        events=s.events if keep is None else s.events[:keep],
        host="https://api.example.test",
        model="gemini-2.0-flash",
        request_headers=((b"content-type", b"application/json"), (b"authorization", b"<redacted>")),
        body=b'{"stream":true}' if s.sse else b"",
        head_ms=head_ms,
        gap_ms=gaps_ms,
        end=end,
        end_after_ms=1 if end is EndKind.COMPLETE else 0,
    )


def demo_cassette() -> Cassette:
    """A session as a person would record it: a clean OpenAI stream, an Anthropic stream that
    was reset midway, a Gemini stream that hung, and a plain JSON call."""
    return Cassette(
        (
            _stream_interaction("openai-chat-text", 180, [24, 31, 18, 45, 22, 28], keep=40),
            _stream_interaction("anthropic-text", 420, [35, 12, 60, 20], EndKind.RESET, keep=6),
            _stream_interaction("gemini-text", 300, [140, 90], EndKind.HANG),
            _stream_interaction("openai-models", 90, [5], EndKind.COMPLETE),
        ),
        (("recorded-by", "replayproxy tests"),),
    )
