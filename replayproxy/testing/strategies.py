"""Hypothesis strategies for property tests: splits of byte strings, SSE streams, interactions,
cassettes and WebSocket sessions.

This is the only module of :mod:`replayproxy.testing` that imports ``hypothesis``, a test
dependency rather than a runtime one (``pip install replayproxy[test]``): importing
``replayproxy.testing`` or its builders never needs it. Import this module explicitly::

    from replayproxy.testing import strategies as rst

    @given(rst.splits(body))
    def test_any_split_gives_the_same_events(reads: list[bytes]) -> None: ...

Every strategy is a function returning a ``SearchStrategy``, as hypothesis' own are. The
cassette strategies draw values as nasty as the format allows (docs/reference/cassette-format.md
§7), so every value they produce is valid and round-trips through the codec byte for byte.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.validate import MAX_OFFSET_NS
from replayproxy._core.cassette.websocket import (
    MAX_CLOSE_CODE,
    MIN_CLOSE_CODE,
    WebSocketSession,
    WsClose,
    WsCloseKind,
    WsMessage,
)
from replayproxy.testing._builders import MS, interaction, stream_interaction
from replayproxy.testing._streams import STREAMS

__all__ = [
    "any_bytes",
    "cassettes",
    "cuts",
    "fragmented",
    "headers",
    "interactions",
    "line_texts",
    "nasty_bytes",
    "offsets",
    "recorded_streams",
    "requests",
    "responses",
    "split_interactions",
    "splits",
    "sse_events",
    "sse_streams",
    "texts",
    "ws_closes",
    "ws_messages",
    "ws_sessions",
]

# -- splits ---------------------------------------------------------------------------------


def cuts(length: int, *, max_cuts: int = 8) -> SearchStrategy[list[int]]:
    """Sorted distinct cut points strictly inside a byte string of ``length`` bytes."""
    if length < 2:
        return st.just([])
    return st.lists(st.integers(1, length - 1), unique=True, max_size=max_cuts).map(sorted)


def splits(data: bytes, *, max_cuts: int = 8) -> SearchStrategy[list[bytes]]:
    """Any split of ``data`` into reads: non-empty pieces, in order, that join to ``data``
    (``[data]`` uncut; ``[]`` for no bytes)."""

    def pieces(points: list[int]) -> list[bytes]:
        bounds = [0, *points, len(data)]
        return [data[a:b] for a, b in itertools.pairwise(bounds)] if data else []

    return cuts(len(data), max_cuts=max_cuts).map(pieces)


# -- SSE streams ----------------------------------------------------------------------------

_FIELDS = [b"event: e", b"id: 1", b": comment", b"retry: 9", b"data:", b"data: x"]
_eols = st.sampled_from([b"\n", b"\r", b"\r\n"])


@st.composite
def sse_events(draw: st.DrawFn, *, eol: SearchStrategy[bytes] = _eols) -> bytes:
    """One dispatched SSE event: optional field lines, one or more ``data:`` lines (any text,
    UTF-8), and the blank line, all with one line ending drawn from ``eol``."""
    end = draw(eol)
    lines = draw(st.lists(st.sampled_from(_FIELDS), max_size=3))
    data = draw(st.lists(st.text(max_size=20).map(lambda t: re.sub(r"[\r\n]", "", t)),
                         min_size=1, max_size=3))  # fmt: skip
    lines += [b"data: " + d.encode() for d in data]
    return b"".join(line + end for line in lines) + end


def sse_streams(
    *, max_events: int = 8, eol: SearchStrategy[bytes] = _eols
) -> SearchStrategy[list[bytes]]:
    """An SSE stream as its events (join them for the body): up to ``max_events``."""
    return st.lists(sse_events(eol=eol), max_size=max_events)


def recorded_streams(names: Sequence[str] | None = None) -> SearchStrategy[Interaction]:
    """One of the simulator's real SSE provider streams (:data:`STREAMS`, or those ``names``)
    as :func:`~replayproxy.testing._builders.stream_interaction` records it."""
    pool = sorted(names or (n for n, s in STREAMS.items() if s.sse))
    return st.sampled_from(pool).map(stream_interaction)


@st.composite
def split_interactions(
    draw: st.DrawFn,
    recorded: SearchStrategy[Interaction] | None = None,
    *,
    max_cuts: int = 30,
    max_gap_ns: int = 50 * MS,
) -> Interaction:
    """An interaction of ``recorded`` (default: an :func:`sse_streams` stream) with its body
    cut into frames anywhere, each frame a gap of up to ``max_gap_ns`` after the one before
    (the first after the head), and the ending at the last frame."""
    it = draw(sse_streams().map(interaction) if recorded is None else recorded)
    if it.response is None:
        return it
    reads = draw(splits(it.response.body, max_cuts=max_cuts))
    gaps = draw(st.lists(st.integers(0, max_gap_ns), min_size=len(reads), max_size=len(reads)))
    at = list(itertools.accumulate(gaps, initial=it.response.head_offset_ns))
    frames = tuple(Frame(t, d) for t, d in zip(at[1:], reads, strict=True))
    return replace(
        it,
        response=replace(it.response, frames=frames),
        end=replace(it.end, kind=EndKind.COMPLETE, offset_ns=at[-1]),
    )


# -- cassettes, with values as nasty as the format allows ---------------------------------

# Bytes that stress a line-oriented text form: CR alone, CRLF, quotes, backslashes, trailing
# spaces, invalid and split UTF-8, invisible characters, NUL.
_NASTY = [
    *(b"\r", b"\n", b"\r\n", b"\t", b" ", b'"', b"'", b"\\", b"\\x41", b"\x00", b"\x7f"),
    *(b"\xff", b"\xc3", b"\xa9", "é".encode(), "\u2028".encode(), "\ufeff".encode()),
    *(b"base64:", b"#", b"data: ", b"\n\n", b"+1ms"),
]


def nasty_bytes() -> SearchStrategy[bytes]:
    """Short byte strings made of pieces that break naive text forms, and random bytes."""
    pieces = st.one_of(st.sampled_from(_NASTY), st.binary(max_size=20))
    return st.lists(pieces, max_size=8).map(b"".join)


def any_bytes() -> SearchStrategy[bytes]:
    """:func:`nasty_bytes` or up to 200 random bytes."""
    return st.one_of(nasty_bytes(), st.binary(max_size=200))


def offsets() -> SearchStrategy[int]:
    """An offset in ns: mostly up to 10 s, sometimes up to the format's maximum."""
    return st.one_of(st.integers(0, 10**10), st.integers(0, MAX_OFFSET_NS))


def texts() -> SearchStrategy[str]:
    """Strings that look like the text form's syntax, and any text (no surrogates: a cassette,
    msgpack str, cannot hold them, and ``st.text()`` leaves them out)."""
    tricky = ["", " ", "a b", "base64:x", "none", "+1ms", "#x", "'", '"', "\\", "\r"]
    return st.one_of(st.sampled_from(tricky), st.text(max_size=30))


def line_texts() -> SearchStrategy[str]:
    """:func:`texts` without CR, LF or NUL: what may reach a status line."""
    return texts().map(lambda t: re.sub(r"[\r\n\x00]", "", t))


def headers() -> SearchStrategy[tuple[tuple[bytes, bytes], ...]]:
    """Up to 5 header pairs, names and values without what would break a head."""
    names = nasty_bytes().map(lambda b: re.sub(rb"[\r\n\x00: \t]", b"", b) or b"x")
    values = any_bytes().map(lambda b: re.sub(rb"[\r\n\x00]", b"", b))
    return st.lists(st.tuples(names, values), max_size=5).map(tuple)


_versions = st.sampled_from(["HTTP/1.1", "HTTP/2.0", "HTTP/3", "HTTP/1.0"])


def requests() -> SearchStrategy[Request]:
    """Requests with any token method, odd URLs, headers and bodies."""
    bases = ["https://api.example.test/", "http://127.0.0.1:8080/v1?", "http://[::1]/"]
    urls = st.builds(
        "{}{}".format,
        st.sampled_from(bases),
        texts().map(lambda t: re.sub(r"[\x00-\x20\x7f]", "", t)),
    )
    methods = st.one_of(
        st.sampled_from(["GET", "POST"]),
        st.from_regex(r"[A-Za-z!#$%&'*+.^_`|~-]+", fullmatch=True),
    )
    return st.builds(Request, methods, urls, _versions, headers(), any_bytes())


def responses() -> SearchStrategy[Response | None]:
    """No response, or a head with up to 12 frames in offset order."""
    frames = st.builds(
        lambda at, data: tuple(Frame(a, d) for a, d in zip(at, data, strict=False)),
        st.lists(offsets(), max_size=12).map(sorted),
        st.lists(any_bytes(), min_size=12, max_size=12),
    )
    head = st.builds(
        Response, st.integers(100, 599), line_texts(), _versions, headers(), offsets(), frames
    )
    return st.one_of(st.none(), head)


def interactions() -> SearchStrategy[Interaction]:
    """Interactions of :func:`requests` and :func:`responses`, any ending, faults and time."""
    return st.builds(
        Interaction,
        request=requests(),
        response=responses(),
        end=st.builds(Ending, st.sampled_from(list(EndKind)), offsets(), texts()),
        faults=st.lists(line_texts(), max_size=3).map(tuple),
        recorded_at=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
    )


def cassettes() -> SearchStrategy[Cassette]:
    """Cassettes of up to 6 :func:`interactions` and up to 3 distinct meta keys."""
    meta = st.lists(st.tuples(texts(), texts()), max_size=3, unique_by=lambda kv: kv[0])
    return st.builds(
        Cassette, interactions=st.lists(interactions(), max_size=6).map(tuple), meta=meta.map(tuple)
    )


# -- WebSocket sessions ---------------------------------------------------------------------


def ws_messages() -> SearchStrategy[WsMessage]:
    """Messages at any offset a cassette may hold (:func:`offsets`), either direction, text or
    binary, up to 40 bytes."""
    return st.builds(WsMessage, offsets(), st.booleans(), st.booleans(), st.binary(max_size=40))


def ws_closes() -> SearchStrategy[WsClose]:
    """Closes of any kind, offset, close code (any a close frame holds, or none), reason and
    side."""
    return st.builds(
        WsClose,
        offsets(),
        st.sampled_from(list(WsCloseKind)),
        st.one_of(st.none(), st.integers(MIN_CLOSE_CODE, MAX_CLOSE_CODE)),
        st.text(max_size=20),
        st.one_of(st.none(), st.booleans()),
    )


@st.composite
def fragmented(draw: st.DrawFn, message: SearchStrategy[WsMessage] | None = None) -> WsMessage:
    """A message of ``message`` (default :func:`ws_messages`) sent as up to 5 fragments,
    empty ones allowed, whose sizes add up to its length."""
    m = draw(ws_messages() if message is None else message)
    points = sorted(draw(st.lists(st.integers(0, len(m.data)), max_size=4)))
    bounds = [0, *points, len(m.data)]
    sizes = tuple(b - a for a, b in itertools.pairwise(bounds))
    return WsMessage(m.offset_ns, m.from_client, m.text, m.data, sizes if points else ())


def ws_sessions() -> SearchStrategy[WebSocketSession]:
    """Sessions of up to 8 whole or fragmented messages and a close."""
    msgs = st.lists(st.one_of(ws_messages(), fragmented()), max_size=8).map(tuple)
    return st.builds(WebSocketSession, msgs, ws_closes())
