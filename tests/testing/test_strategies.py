"""The shipped hypothesis strategies (replayproxy.testing.strategies) produce what they say:
splits that join back, SSE events that parse as one event each, re-split interactions that
keep their bytes, and cassettes and sessions the codec takes and gives back exactly."""

from __future__ import annotations

import subprocess
import sys

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette, EndKind, Interaction
from replayproxy._core.cassette.websocket import (
    WebSocketSession,
    WsMessage,
    decode_session,
    encode_session,
)
from replayproxy._core.wire.sse import SSEParser, parse_events
from replayproxy.testing import STREAMS, stream_interaction
from replayproxy.testing import strategies as rst


@given(st.binary(max_size=64), st.data())
def test_a_split_is_non_empty_pieces_that_join_to_the_data(
    data: bytes, draw: st.DataObject
) -> None:
    """splits(data): at most max_cuts + 1 non-empty pieces, in order, joining to data."""
    pieces = draw.draw(rst.splits(data, max_cuts=5))
    assert b"".join(pieces) == data
    assert all(pieces) and len(pieces) <= 6
    if len(data) < 2:
        assert pieces == ([data] if data else [])


@given(st.integers(0, 50), st.data())
def test_cuts_are_sorted_distinct_and_strictly_inside(length: int, draw: st.DataObject) -> None:
    """cuts(length): sorted, distinct positions with 0 < cut < length."""
    points = draw.draw(rst.cuts(length))
    assert points == sorted(set(points))
    assert all(0 < c < length for c in points) and len(points) <= 8


def test_splits_reach_every_cut_point() -> None:
    """Over enough examples, a 3-byte string is seen uncut, cut once at each point and twice:
    the strategy is not stuck on one split."""
    seen: set[tuple[bytes, ...]] = set()

    @settings(max_examples=200, database=None)
    @given(rst.splits(b"abc"))
    def collect(pieces: list[bytes]) -> None:
        seen.add(tuple(pieces))

    collect()
    assert seen == {(b"abc",), (b"a", b"bc"), (b"ab", b"c"), (b"a", b"b", b"c")}


@given(rst.sse_events())
def test_an_sse_event_is_one_dispatched_event(event: bytes) -> None:
    """sse_events(): bytes that parse as exactly one event (a final CR waits for the close,
    which could still bring its LF)."""
    assert len(parse_events(event)) == 1
    parser = SSEParser()
    assert len(parser.feed(event) + parser.close()) == 1


@settings(max_examples=50, deadline=None)
@given(rst.sse_streams(), st.data())
def test_any_split_of_an_sse_stream_gives_its_events(
    events: list[bytes], draw: st.DataObject
) -> None:
    """sse_streams(): one event per item; fed in any split, the parser finds them all."""
    body = b"".join(events)
    parser = SSEParser()
    got = [e for piece in draw.draw(rst.splits(body)) for e in parser.feed(piece)]
    assert got + parser.close() == parse_events(body)
    assert len(parse_events(body)) == len(events)


@settings(max_examples=50, deadline=None)
@given(rst.split_interactions(rst.recorded_streams()))
def test_a_re_split_recording_keeps_its_stream(it: Interaction) -> None:
    """split_interactions(recorded_streams()): a real provider stream, same request, status and
    body, its frames in time order after the head, complete at the last frame; valid."""
    assert it.response is not None
    (name,) = [n for n, s in STREAMS.items() if s.sse and s.body == it.response.body]
    original = stream_interaction(name)
    assert (it.request, it.response.status) == (original.request, original.response.status)  # type: ignore[union-attr]
    at = [f.offset_ns for f in it.frames]
    assert at == sorted(at) and all(t >= it.response.head_offset_ns for t in at)
    assert all(f.data for f in it.frames)
    assert it.end.kind is EndKind.COMPLETE and it.end.offset_ns == at[-1]
    assert codec.decode(codec.encode(Cassette((it,)))).cassette == Cassette((it,))


@settings(max_examples=50, deadline=None)
@given(rst.split_interactions())
def test_a_re_split_generated_stream_keeps_its_events(it: Interaction) -> None:
    """split_interactions(): an sse_streams() body re-cut into frames parses to the same
    events as the whole body."""
    assert it.response is not None
    parser = SSEParser()
    got = [e for f in it.frames for e in parser.feed(f.data)] + parser.close()
    assert got == parse_events(it.response.body)


def test_recorded_streams_are_the_sse_streams_only() -> None:
    """recorded_streams() draws from the SSE streams, or only from the names given."""
    seen: set[bytes] = set()

    @settings(max_examples=100, database=None)
    @given(rst.recorded_streams())
    def collect(it: Interaction) -> None:
        seen.add(it.response.body)  # type: ignore[union-attr]

    @settings(max_examples=5, database=None)
    @given(rst.recorded_streams(["gemini-text"]))
    def only(it: Interaction) -> None:
        assert it == stream_interaction("gemini-text")

    collect()
    only()
    assert seen == {s.body for s in STREAMS.values() if s.sse}


@settings(max_examples=25, deadline=None)  # tests/core/cassette/test_codec.py runs more
@given(rst.cassettes())
def test_generated_cassettes_round_trip_byte_exactly(c: Cassette) -> None:
    """cassettes(): always valid (the codec encodes them) and byte-exact through a round trip."""
    data = codec.encode(c)
    assert codec.decode(data).cassette == c and codec.encode(codec.decode(data).cassette) == data


@given(rst.ws_sessions())
def test_generated_sessions_round_trip_and_fragments_add_up(session: WebSocketSession) -> None:
    """ws_sessions(): fragment sizes add up to each message's length; the session survives
    encode -> msgpack -> decode unchanged."""
    for m in session.messages:
        assert not m.fragments or sum(m.fragments) == len(m.data)
    packed = msgpack.packb(encode_session(session), use_bin_type=True)
    assert decode_session(msgpack.unpackb(packed, raw=False)) == session


@given(rst.fragmented())
def test_fragmented_messages_have_one_to_five_fragments(m: WsMessage) -> None:
    """fragmented(): no fragments (sent whole) or 2 to 5 sizes that add up to the data."""
    assert m.fragments == () or (2 <= len(m.fragments) <= 5 and sum(m.fragments) == len(m.data))


def test_importing_the_testing_package_needs_no_hypothesis() -> None:
    """replayproxy.testing, its builders and its upstream import with hypothesis hidden; only
    replayproxy.testing.strategies needs it."""
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = None\n"
        "import replayproxy.testing, replayproxy.testing._builders, replayproxy.testing._upstream\n"
        "import replayproxy.testing._ws_builders\n"
        "assert 'hypothesis' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
        "try:\n"
        "    import replayproxy.testing.strategies\n"
        "except ImportError:\n"
        "    print('strategies need hypothesis')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "strategies need hypothesis\n"
