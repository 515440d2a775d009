"""Builders for cassette values in tests: requests, response heads, frames, interactions, cassettes.

Modelled on mitmproxy's ``test/tflow.py``: every builder called with no argument gives a valid
value (it round-trips through :mod:`replayproxy._core.cassette.codec` byte for byte), and every
field can be overridden by keyword. Times are given in milliseconds (floats allowed) and stored
as integer nanoseconds, as the model holds them; :data:`MS`, :data:`US` and :data:`S` are the
units for tests that compute offsets themselves.

The default interaction is an SSE stream answering a chat request: the head 50 ms after the
request, one frame per chunk every 30 ms, and a complete ending 1 ms after the last frame.
WebSocket sessions are built in :mod:`replayproxy.testing._ws_builders`; hypothesis strategies
in :mod:`replayproxy.testing.strategies`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy.testing._streams import STREAMS

__all__ = [
    "CHAT_BODY",
    "CHAT_URL",
    "JSON_HEADERS",
    "MS",
    "PROVIDER_HOSTS",
    "SSE_EVENTS",
    "SSE_HEADERS",
    "US",
    "S",
    "cassette",
    "frames",
    "interaction",
    "no_response",
    "ns",
    "request",
    "response",
    "sse_frames",
    "stream_interaction",
]

US = 1_000
"""One microsecond in nanoseconds, the unit of every offset in a cassette."""
MS = 1_000_000
"""One millisecond in nanoseconds."""
S = 1_000_000_000
"""One second in nanoseconds."""

Headers = tuple[tuple[bytes, bytes], ...]

# ``.invalid`` never resolves (RFC 2606): a replay that tried the network would fail loudly.
CHAT_URL = "https://api.openai.invalid/v1/chat/completions"
CHAT_BODY = b'{"model":"m","stream":true}'
SSE_HEADERS: Headers = ((b"content-type", b"text/event-stream"),)
JSON_HEADERS: Headers = ((b"content-type", b"application/json"),)
SSE_EVENTS: tuple[bytes, ...] = (
    b'data: {"n":0,"text":"Hel"}\n\n',
    b'data: {"n":1,"text":"lo"}\n\n',
    b'data: {"n":2,"text":" w\xc3\xa9rld"}\n\n',  # a two-byte UTF-8 character to split
    b"data: [DONE]\n\n",
)
PROVIDER_HOSTS = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "bedrock": "https://bedrock-runtime.us-east-1.amazonaws.com",
}
"""The real host of each provider of :data:`~replayproxy.testing._streams.STREAMS`."""


def ns(ms: float) -> int:
    """``ms`` milliseconds as integer nanoseconds (rounded: floats like 0.1 are not exact)."""
    return round(ms * MS)


def request(
    method: str = "POST",
    url: str = CHAT_URL,
    *,
    headers: Headers = (),
    body: bytes = CHAT_BODY,
    http_version: str = "HTTP/1.1",
) -> Request:
    """A request as sent upstream: by default a streaming chat completion POST."""
    return Request(method, url, http_version, headers, body)


def frames(
    chunks: Iterable[bytes] = SSE_EVENTS,
    *,
    head_ms: float = 50,
    gap_ms: float | Sequence[float] = 30,
    at_ms: Sequence[float] | None = None,
) -> tuple[Frame, ...]:
    """One frame per chunk: at the offsets ``at_ms`` if given, else ``gap_ms`` apart after the
    head (the first ``gap_ms`` after ``head_ms``); a sequence of gaps is used in a cycle."""
    data = list(chunks)
    if at_ms is not None:
        if len(at_ms) != len(data):
            raise ValueError(f"{len(at_ms)} offsets for {len(data)} chunks")
        return tuple(Frame(ns(t), d) for t, d in zip(at_ms, data, strict=True))
    gaps = itertools.cycle([gap_ms] if isinstance(gap_ms, int | float) else gap_ms)
    out, t = [], head_ms
    for d in data:
        t += next(gaps)
        out.append(Frame(ns(t), d))
    return tuple(out)


def response(
    status: int = 200,
    reason: str = "",
    *,
    headers: Headers = SSE_HEADERS,
    head_ms: float = 50,
    frames: tuple[Frame, ...] = (),
    http_version: str = "HTTP/1.1",
) -> Response:
    """A response head ``head_ms`` after the request, with ``frames`` as its body.

    ``reason`` is empty by default, as HTTP/2 has none; the replay writes the standard phrase.
    """
    return Response(status, reason, http_version, headers, ns(head_ms), frames)


def interaction(
    chunks: Iterable[bytes] = SSE_EVENTS,
    *,
    url: str = CHAT_URL,
    body: bytes = CHAT_BODY,
    request: Request | None = None,
    status: int = 200,
    reason: str = "",
    headers: Headers = SSE_HEADERS,
    head_ms: float = 50,
    gap_ms: float | Sequence[float] = 30,
    at_ms: Sequence[float] | None = None,
    end: EndKind | Ending = EndKind.COMPLETE,
    end_after_ms: float = 1,
    faults: tuple[str, ...] = (),
    recorded_at: float | None = None,
) -> Interaction:
    """A recorded request and its streamed response, one frame per chunk (see :func:`frames`).

    ``request`` replaces the default POST of ``body`` to ``url``. ``end`` is the ending's kind,
    placed ``end_after_ms`` after the last frame (or the head), or a whole :class:`Ending`.
    """
    fr = frames(chunks, head_ms=head_ms, gap_ms=gap_ms, at_ms=at_ms)
    if not isinstance(end, Ending):
        last = fr[-1].offset_ns if fr else ns(head_ms)
        end = Ending(end, last + ns(end_after_ms))
    return Interaction(
        request or Request("POST", url, body=body),
        response(status, reason, headers=headers, head_ms=head_ms, frames=fr),
        end,
        faults,
        recorded_at,
    )


def stream_interaction(
    name: str,
    *,
    events: Iterable[bytes] | None = None,
    host: str | None = None,
    path: str | None = None,
    model: str = "some-model",
    request_headers: Headers = JSON_HEADERS,
    body: bytes = b"",
    reason: str = "OK",
    head_ms: float = 50,
    gap_ms: float | Sequence[float] = 20,
    end: EndKind | Ending = EndKind.COMPLETE,
    end_after_ms: float = 1,
    faults: tuple[str, ...] = (),
) -> Interaction:
    """The simulator's real provider stream ``name`` (:data:`STREAMS`) as recorded: its status,
    headers and ``events`` (all by default), one frame per event, sent to the provider's host
    (:data:`PROVIDER_HOSTS`) or ``host``, at ``path`` or the stream's path with ``model``."""
    s = STREAMS[name]
    url = (host or PROVIDER_HOSTS[s.provider]) + (path or s.path.replace("{model}", model))
    return interaction(
        s.events if events is None else events,
        request=Request(s.method, url, headers=request_headers, body=body),
        status=s.status,
        reason=reason,
        headers=s.headers,
        head_ms=head_ms,
        gap_ms=gap_ms,
        end=end,
        end_after_ms=end_after_ms,
        faults=faults,
    )


def no_response(
    request: Request | None = None, *, end_ms: float = 3, message: str = "connection refused"
) -> Interaction:
    """A request that got no response head at all (refused), ending ``end_ms`` after it."""
    req = request or Request("GET", "https://api.openai.invalid/v1/models")
    return Interaction(req, None, Ending(EndKind.NO_RESPONSE, ns(end_ms), message))


def cassette(*interactions: Interaction, meta: tuple[tuple[str, str], ...] = ()) -> Cassette:
    """A cassette of ``interactions`` in order, with ``meta`` as its free-form metadata."""
    return Cassette(interactions, meta)


def sse_frames(n: int, size: int = 40) -> list[bytes]:
    """``n`` distinct SSE events of ``size`` bytes each (or the fewest that hold event ``i``:
    ``data: {"i": i, "pad": ""}`` and the blank line: 27 bytes for i < 10)."""
    out = []
    for i in range(n):
        head = b'data: {"i": %d, "pad": "' % i
        tail = b'"}\n\n'
        out.append(head + b"x" * (size - len(head) - len(tail)) + tail)
    return out
