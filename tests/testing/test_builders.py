"""The shipped builders (replayproxy.testing._builders, .ws_builders): valid defaults that
round-trip through the codec byte for byte, and the keyword overrides they document."""

from __future__ import annotations

import json

import pytest

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Frame, Interaction, Request
from replayproxy._core.cassette.websocket import WsClose, WsCloseKind
from replayproxy.testing import (
    CHAT_BODY,
    CHAT_URL,
    MS,
    PROVIDER_HOSTS,
    SSE_EVENTS,
    SSE_HEADERS,
    STREAMS,
    US,
    S,
    cassette,
    frames,
    interaction,
    no_response,
    ns,
    realtime_turns,
    request,
    response,
    sse_frames,
    stream_interaction,
    ws_interaction,
    ws_text,
)


def round_trips(c: Cassette) -> bool:
    """``c`` encodes (so it is valid), decodes equal, and re-encodes to the same bytes."""
    data = codec.encode(c)
    decoded = codec.decode(data)
    return decoded.torn_at is None and decoded.cassette == c and codec.encode(c) == data


DEFAULTS = {
    "request": lambda: Interaction(request(), None, Ending(EndKind.NO_RESPONSE, 0)),
    "response": lambda: Interaction(request(), response(), Ending(EndKind.COMPLETE, 50 * MS)),
    "frames": lambda: Interaction(
        request(), response(frames=frames()), Ending(EndKind.COMPLETE, 200 * MS)
    ),
    "interaction": interaction,
    "no_response": no_response,
    "ws_interaction": ws_interaction,
    "realtime_turns": lambda: ws_interaction(realtime_turns()),
    **{
        f"stream_interaction:{name}": lambda name=name: stream_interaction(name) for name in STREAMS
    },
}


@pytest.mark.parametrize("build", DEFAULTS.values(), ids=DEFAULTS.keys())
def test_every_builders_defaults_round_trip_byte_exactly(build: object) -> None:
    """Each builder called with no arguments gives a valid interaction: its cassette goes
    through the codec and back equal, to the very same bytes."""
    it = build()  # type: ignore[operator]
    assert isinstance(it, Interaction)
    assert round_trips(cassette(it, meta=(("recorded-by", "tests"),)))


def test_an_empty_cassette_round_trips() -> None:
    """cassette() with nothing is the empty cassette, which the codec writes and reads back."""
    assert cassette() == Cassette()
    assert round_trips(cassette())


def test_the_time_units_are_nanoseconds() -> None:
    """US, MS and S are 10**3, 10**6 and 10**9 ns; ns() rounds milliseconds to whole ns."""
    assert (US, MS, S) == (1_000, 1_000_000, 1_000_000_000)
    assert ns(1.5) == 1_500_000 and ns(0.1) == 100_000
    assert (ns(0.0000004), ns(0.0000006)) == (0, 1)


def test_the_default_interaction_is_a_timed_sse_chat_stream() -> None:
    """Head at 50 ms, one frame per SSE event every 30 ms, complete 1 ms after the last, a POST
    of the chat body to the unresolvable chat URL, reason left empty."""
    it = interaction()
    assert it.request == Request("POST", CHAT_URL, body=CHAT_BODY)
    assert it.response is not None
    assert (it.response.status, it.response.reason, it.response.headers) == (200, "", SSE_HEADERS)
    assert it.response.head_offset_ns == 50 * MS
    assert it.frames == tuple(Frame((50 + 30 * (i + 1)) * MS, e) for i, e in enumerate(SSE_EVENTS))
    assert it.end == Ending(EndKind.COMPLETE, 171 * MS)
    assert (it.faults, it.recorded_at, it.websocket) == ((), None, None)


def test_frame_offsets_follow_gaps_a_cycle_of_gaps_or_explicit_offsets() -> None:
    """gap_ms spaces frames after the head; a sequence of gaps repeats; at_ms places each frame
    exactly (fractions of a millisecond kept to the ns)."""
    at = [f.offset_ns for f in frames([b"a", b"b", b"c"], head_ms=10, gap_ms=5)]
    assert at == [15 * MS, 20 * MS, 25 * MS]
    at = [f.offset_ns for f in frames([b"a"] * 5, head_ms=0, gap_ms=[1, 10])]
    assert at == [1 * MS, 11 * MS, 12 * MS, 22 * MS, 23 * MS]
    exact = frames([b"a", b"b"], at_ms=[0.25, 7])
    assert exact == (Frame(250 * US, b"a"), Frame(7 * MS, b"b"))


def test_offsets_that_do_not_fit_the_chunks_are_refused() -> None:
    """at_ms with a different count than the chunks is a one-line error, not a silent zip."""
    with pytest.raises(ValueError, match=r"^2 offsets for 3 chunks$"):
        frames([b"a", b"b", b"c"], at_ms=[1, 2])


def test_keyword_overrides_reach_the_interaction() -> None:
    """url, body, status, reason, headers, head_ms, end, faults and recorded_at are the
    interaction's; a whole Ending or Request replaces the default one."""
    it = interaction(
        [b"x"],
        url="http://h.test/p",
        body=b"{}",
        status=503,
        reason="Busy",
        headers=(),
        head_ms=7,
        gap_ms=3,
        end=EndKind.RESET,
        end_after_ms=0,
        faults=("hang",),
        recorded_at=1.5,
    )
    assert it == Interaction(
        Request("POST", "http://h.test/p", body=b"{}"),
        response(503, "Busy", headers=(), head_ms=7, frames=(Frame(10 * MS, b"x"),)),
        Ending(EndKind.RESET, 10 * MS),
        ("hang",),
        1.5,
    )
    given = Request("GET", "http://h.test/q")
    it = interaction([], request=given, end=Ending(EndKind.HANG, 9, "held"))
    assert (it.request, it.frames, it.end) == (given, (), Ending(EndKind.HANG, 9, "held"))


def test_a_stream_interaction_is_the_real_stream_sent_to_its_provider() -> None:
    """The stream's method, status, headers and events, one frame per event 20 ms apart after
    a 50 ms head, to the provider's real host with {model} filled in; overrides apply."""
    s = STREAMS["gemini-text"]
    it = stream_interaction("gemini-text")
    assert it.request.method == s.method
    assert it.request.url == PROVIDER_HOSTS["gemini"] + s.path.replace("{model}", "some-model")
    assert it.response is not None
    assert (it.response.status, it.response.headers, it.response.body) == (
        s.status,
        s.headers,
        s.body,
    )
    assert [f.offset_ns for f in it.frames[:2]] == [70 * MS, 90 * MS]
    short = stream_interaction("gemini-text", events=s.events[:1], host="http://x", path="/p")
    assert short.request.url == "http://x/p" and short.frames == (Frame(70 * MS, s.events[0]),)


def test_no_response_is_a_refused_request() -> None:
    """No response head, a no_response ending 3 ms in, with mitmproxy's kind of message."""
    it = no_response()
    assert it.response is None
    assert it.end == Ending(EndKind.NO_RESPONSE, 3 * MS, "connection refused")


@pytest.mark.parametrize(("n", "size"), [(1, 40), (12, 64), (3, 27)])
def test_sse_frames_are_distinct_events_of_the_size_asked(n: int, size: int) -> None:
    """sse_frames(n, size): n different `data:` events, each exactly size bytes."""
    events = sse_frames(n, size)
    assert len(set(events)) == n and {len(e) for e in events} == {size}
    assert all(e.startswith(b"data: {") and e.endswith(b"}\n\n") for e in events)


def test_a_websocket_interaction_is_an_upgrade_closed_by_the_client() -> None:
    """ws_interaction: a 101 after head_ms carrying the messages, closed 1000 by the client
    1 ms after the last message, unless a close is given."""
    msgs = [ws_text(6, False, {"type": "a"}), ws_text(9.5, True, {"type": "b"})]
    it = ws_interaction(msgs, head_ms=2)
    assert it.response is not None and it.response.status == 101
    assert it.response.head_offset_ns == 2 * MS
    assert it.websocket is not None and it.websocket.messages == tuple(msgs)
    assert it.websocket.close == WsClose(10_500 * US, WsCloseKind.CLOSE, 1000, "", True)
    assert it.end == Ending(EndKind.COMPLETE, 10_500 * US)
    cut = WsClose(20 * MS, WsCloseKind.CLOSE, 1011, "bye", False)
    assert ws_interaction(msgs, cut).websocket.close == cut  # type: ignore[union-attr]


def test_ws_text_holds_the_event_as_json_text() -> None:
    """ws_text: a text (not binary) message of the event's JSON, at the offset in ns."""
    m = ws_text(1.25, True, {"type": "x", "n": 1})
    assert (m.offset_ns, m.from_client, m.text, m.fragments) == (1_250 * US, True, True, ())
    assert json.loads(m.data) == {"type": "x", "n": 1}


def test_realtime_turns_is_a_whole_realtime_conversation() -> None:
    """session.created, the update and its ack, response.create, then the response: created,
    one delta per ``deltas`` gap_ms apart, done; times in order."""
    turns = realtime_turns(ttfb_ms=50, gap_ms=10, deltas=2)
    types = [json.loads(m.data)["type"] for m in turns]
    assert types == [
        "session.created",
        "session.update",
        "session.updated",
        "response.create",
        "response.created",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.done",
    ]
    assert [m.from_client for m in turns] == [False, True, False, True, False, False, False, False]
    assert [m.offset_ns // MS for m in turns[3:]] == [200, 250, 260, 270, 280]
