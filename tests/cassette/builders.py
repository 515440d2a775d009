"""Cassettes for the cassette-tool tests: hypothesis strategies and small hand-built examples."""

from __future__ import annotations

import re

from hypothesis import strategies as st

from replayproxy.core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy.core.cassette.validate import MAX_OFFSET_NS

# Bytes that stress a line-oriented text form: CR alone, CRLF, quotes, backslashes, trailing
# spaces, invalid and split UTF-8, invisible characters, NUL.
_NASTY = [
    b"\r",
    b"\n",
    b"\r\n",
    b"\t",
    b" ",
    b'"',
    b"'",
    b"\\",
    b"\\x41",
    b"\x00",
    b"\x7f",
    b"\xff",
    b"\xc3",
    b"\xa9",
    "é".encode(),
    "\u2028".encode(),
    "\ufeff".encode(),
    b"base64:",
    b"#",
    b"data: ",
    b"\n\n",
    b"+1ms",
]
nasty_bytes = st.lists(st.one_of(st.sampled_from(_NASTY), st.binary(max_size=20)), max_size=8).map(
    b"".join
)
any_bytes = st.one_of(nasty_bytes, st.binary(max_size=200))
# Every value below is as nasty as the format allows (docs/cassette-format.md §7): offsets up
# to the maximum, frames in order, and no CR, LF or NUL where they would reach a status line or
# a header.
offsets = st.one_of(st.integers(0, 10**10), st.integers(0, MAX_OFFSET_NS))
frame_offsets = st.lists(offsets, max_size=12).map(sorted)
texts = st.one_of(
    st.sampled_from(["", " ", "a b", "base64:x", "none", "+1ms", "#x", "'", '"', "\\", "\r"]),
    st.text(max_size=30),
)  # st.text() leaves out surrogates, which a cassette (msgpack str) cannot hold either
line_texts = texts.map(lambda t: re.sub(r"[\r\n\x00]", "", t))
header_names = nasty_bytes.map(lambda b: re.sub(rb"[\r\n\x00: \t]", b"", b) or b"x")
header_values = any_bytes.map(lambda b: re.sub(rb"[\r\n\x00]", b"", b))
headers = st.lists(st.tuples(header_names, header_values), max_size=5).map(tuple)
urls = st.builds(
    "{}{}".format,
    st.sampled_from(["https://api.example.test/", "http://127.0.0.1:8080/v1?", "http://[::1]/"]),
    texts.map(lambda t: re.sub(r"[\x00-\x20\x7f]", "", t)),
)
methods = st.one_of(
    st.sampled_from(["GET", "POST"]), st.from_regex(r"[A-Za-z!#$%&'*+.^_`|~-]+", fullmatch=True)
)
versions = st.sampled_from(["HTTP/1.1", "HTTP/2.0", "HTTP/3", "HTTP/1.0"])

responses = st.one_of(
    st.none(),
    st.builds(
        Response,
        status=st.integers(100, 599),
        reason=line_texts,
        http_version=versions,
        headers=headers,
        head_offset_ns=offsets,
        frames=st.builds(
            lambda at, data: tuple(Frame(a, d) for a, d in zip(at, data, strict=False)),
            frame_offsets,
            st.lists(any_bytes, min_size=12, max_size=12),
        ),
    ),
)
interactions = st.builds(
    Interaction,
    request=st.builds(
        Request,
        method=methods,
        url=urls,
        http_version=versions,
        headers=headers,
        body=any_bytes,
    ),
    response=responses,
    end=st.builds(Ending, st.sampled_from(list(EndKind)), offsets, texts),
    faults=st.lists(line_texts, max_size=3).map(tuple),
    recorded_at=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
)
cassettes = st.builds(
    Cassette,
    interactions=st.lists(interactions, max_size=6).map(tuple),
    meta=st.lists(st.tuples(texts, texts), max_size=3, unique_by=lambda kv: kv[0]).map(tuple),
)

MS = 1_000_000

SSE_EVENTS = [
    b'data: {"n":0,"text":"Hel"}\n\n',
    b'data: {"n":1,"text":"lo"}\n\n',
    b'data: {"n":2,"text":" w\xc3\xa9rld"}\n\n',
    b"data: [DONE]\n\n",
]


def sse_interaction(
    frames: list[bytes] | None = None, *, gap_ms: int = 20, end: EndKind = EndKind.COMPLETE
) -> Interaction:
    """A POST to a chat endpoint answered with an SSE stream; one frame per chunk given."""
    chunks = SSE_EVENTS if frames is None else frames
    head = 50 * MS
    fr = tuple(Frame(head + (i + 1) * gap_ms * MS, c) for i, c in enumerate(chunks))
    last = fr[-1].offset_ns if fr else head
    return Interaction(
        Request(
            "POST",
            "https://api.example.test/v1/chat/completions",
            "HTTP/1.1",
            ((b"content-type", b"application/json"), (b"authorization", b"Bearer sk-secret")),
            b'{"model":"m","stream":true,"user":"alice@example.com","messages":[]}',
        ),
        Response(
            200,
            "OK",
            "HTTP/1.1",
            ((b"content-type", b"text/event-stream"), (b"x-request-id", b"req-1")),
            head,
            fr,
        ),
        Ending(end, last + MS),
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
    refused = Interaction(
        Request("GET", "https://api.example.test/v1/models"),
        None,
        Ending(EndKind.NO_RESPONSE, 3 * MS, "connection refused"),
    )
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
    from replayproxy.testing.streams import STREAMS

    s = STREAMS[name]
    events = s.events if keep is None else s.events[:keep]
    t = head_ms * MS
    frames = []
    for i, ev in enumerate(events):
        t += gaps_ms[i % len(gaps_ms)] * MS
        frames.append(Frame(t, ev))
    path = s.path.replace("{model}", "gemini-2.0-flash")
    return Interaction(
        Request(
            s.method,
            "https://api.example.test" + path,
            "HTTP/1.1",
            ((b"content-type", b"application/json"), (b"authorization", b"<redacted>")),
            b'{"stream":true}' if s.sse else b"",
        ),
        Response(s.status, "OK", "HTTP/1.1", s.headers, head_ms * MS, tuple(frames)),
        Ending(end, t + (MS if end is EndKind.COMPLETE else 0)),
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
