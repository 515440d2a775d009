"""The replayed WebSocket conversation (core/websocket/conversation.py): turns, pacing, matching,
endings."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.websocket import WsClose, WsCloseKind, WsMessage
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.websocket.conversation import (
    POLICY_VIOLATION,
    Close,
    Conversation,
    Send,
    plan_session,
)
from replayproxy.testing import MS, realtime_turns, ws_interaction, ws_text


def plan_of(messages: list[WsMessage], close: WsClose | None = None, **kw: object):  # type: ignore[no-untyped-def]
    it = ws_interaction(messages, close)
    assert it.websocket is not None and it.response is not None
    return plan_session(it.websocket, it.response.head_offset_ns, **kw)  # type: ignore[arg-type]


def client(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode()


def test_turns_split_at_client_messages() -> None:
    """Turn 0 is what came before any client message; each client message opens a turn."""
    plan = plan_of(realtime_turns(deltas=2))
    assert [t.client is None for t in plan.turns] == [True, False, False]
    assert [len(t.replies) for t in plan.turns] == [1, 1, 4]


def test_replies_follow_the_client_pace() -> None:
    """A reply recorded 100 ms after response.create comes 100 ms after the client sends it,
    however late the client sends it."""
    conv = Conversation(plan_of(realtime_turns(ttfb_ms=100, gap_ms=20, deltas=1)))
    assert [a.at_ns for a in conv.start(0)] == [1 * MS]  # session.created: 6 - 5 ms head
    conv.client_message(True, client({"type": "session.update", "session": {"x": 1}}), 500 * MS)
    actions = conv.client_message(True, client({"type": "response.create"}), 7_000 * MS)
    assert [a.at_ns for a in actions] == [7_100 * MS, 7_120 * MS, 7_140 * MS]
    assert all(isinstance(a, Send) for a in actions)


def test_speed_divides_the_delays_and_zero_means_none() -> None:
    """--speed 2 halves every delay; --speed 0 sends everything at once."""
    fast = Conversation(plan_of(realtime_turns(ttfb_ms=100, deltas=0), speed=2))
    fast.start(0)
    fast.client_message(True, client({"type": "session.update", "session": {"x": 1}}), 0)
    assert fast.client_message(True, client({"type": "response.create"}), 0)[0].at_ns == 50 * MS
    none = Conversation(plan_of(realtime_turns(ttfb_ms=100, deltas=0), speed=0))
    none.start(0)
    none.client_message(True, client({"type": "session.update", "session": {"x": 1}}), 0)
    assert {a.at_ns for a in none.client_message(True, client({"type": "response.create"}), 0)} == {
        0
    }


def test_messages_never_overtake_each_other() -> None:
    """A client that answers early does not get the next turn's replies before this turn's."""
    msgs = [
        ws_text(10, True, {"type": "a"}),
        ws_text(300, False, {"type": "slow reply"}),
        ws_text(301, True, {"type": "b"}),
        ws_text(302, False, {"type": "fast reply"}),
    ]
    conv = Conversation(plan_of(msgs))
    conv.start(0)
    slow = conv.client_message(True, client({"type": "a"}), 0)
    fast = conv.client_message(True, client({"type": "b"}), 1 * MS)
    assert slow[0].at_ns == 290 * MS and fast[0].at_ns >= slow[0].at_ns


def test_event_id_is_ignored_by_default_and_more_fields_on_request() -> None:
    """Client event_id never takes part; --ignore-body-field pointers apply to messages too."""
    conv = Conversation(
        plan_of(realtime_turns(), options=MatchOptions(ignore_body_fields=("/session/x",)))
    )
    conv.start(0)
    out = conv.client_message(
        True, client({"type": "session.update", "event_id": "other", "session": {"x": 2}}), 0
    )
    assert conv.miss is None and len(out) == 1


def test_a_different_message_is_an_explained_1008_close() -> None:
    """A mismatch closes at once with 1008 and a reason naming the first differing pointer."""
    conv = Conversation(plan_of(realtime_turns()))
    conv.start(0)
    (close,) = conv.client_message(True, client({"type": "session.update", "session": {"x": 9}}), 5)
    assert isinstance(close, Close) and close.code == POLICY_VIOLATION and close.at_ns == 5
    assert "client message 0" in close.reason and "/session/x" in close.reason
    assert conv.miss is not None and "recorded 1, got 9" in conv.miss
    assert conv.client_message(True, b"{}", 6) == []  # closed: nothing more


def test_an_unrecorded_extra_message_is_explained() -> None:
    """A client message past the recorded ones says the recording has no such message."""
    conv = Conversation(plan_of([ws_text(10, False, {"type": "hello"})]))
    conv.start(0)
    (close,) = conv.client_message(True, b'{"type":"more"}', 0)
    assert isinstance(close, Close) and "was not recorded" in close.reason


def test_binary_and_text_are_told_apart() -> None:
    """A binary message where text was recorded is a mismatch; binary compares byte for byte."""
    msgs = [WsMessage(10 * MS, True, False, b"\x00\x01"), ws_text(20, False, {"type": "ok"})]
    conv = Conversation(plan_of(msgs))
    conv.start(0)
    assert conv.client_message(False, b"\x00\x01", 0) == [Send(10 * MS, msgs[1])]
    other = Conversation(plan_of(msgs))
    other.start(0)
    (close,) = other.client_message(True, b"\x00\x01", 0)
    assert isinstance(close, Close) and "binary" in close.reason


def test_recorded_endings_are_replayed() -> None:
    """A server close frame and a dropped connection come after the last turn at their
    recorded offsets; a client close or an open session sends nothing."""
    msgs = [ws_text(10, True, {"type": "a"}), ws_text(20, False, {"type": "b"})]
    cases = {
        WsClose(50 * MS, WsCloseKind.CLOSE, 1011, "boom", False): Close(40 * MS, 1011, "boom"),
        WsClose(50 * MS, WsCloseKind.DROPPED, 1006, "", False): Close(40 * MS, None),
        WsClose(50 * MS, WsCloseKind.CLOSE, 1000, "", True): None,
        WsClose(50 * MS, WsCloseKind.OPEN): None,
    }
    for recorded, expected in cases.items():
        conv = Conversation(plan_of(msgs, recorded))
        conv.start(0)
        actions = conv.client_message(True, client({"type": "a"}), 0)
        assert actions[-1] == expected if expected else all(isinstance(a, Send) for a in actions)


def test_long_reasons_fit_a_close_frame() -> None:
    """The close reason never exceeds 123 bytes (RFC 6455 control frame limit)."""
    big = "é" * 200
    conv = Conversation(plan_of([ws_text(10, True, {"type": big})]))
    conv.start(0)
    (close,) = conv.client_message(True, client({"type": big + "x"}), 0)
    assert isinstance(close, Close) and len(close.reason.encode()) <= 123


@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 10_000)), max_size=12), st.integers(0, 10**9)
)
def test_due_times_never_go_backwards(shape: list[tuple[bool, int]], start: int) -> None:
    """Whatever the recording and the client's pace, replayed sends are due in order and
    each reply is due no earlier than the client message it answers."""
    t, msgs = 0, []
    for from_client, gap in shape:
        t += gap * 1000
        msgs.append(WsMessage(t, from_client, True, b'{"n":%d}' % len(msgs)))
    conv = Conversation(plan_of(msgs))
    due = [a.at_ns for a in conv.start(start)]
    now = start
    for m in msgs:
        if m.from_client:
            now += 1000
            actions = conv.client_message(True, m.data, now)
            assert conv.miss is None
            assert all(a.at_ns >= now for a in actions)
            due += [a.at_ns for a in actions]
    assert due == sorted(due)


def test_a_turn_read_after_its_first_reply_was_due_starts_late_and_keeps_its_gaps() -> None:
    """The relay had response.create at 7 s but the engine read it at 7.15 s, 50 ms after its
    first reply was due: the turn moves back 50 ms, the replies stay 20 ms apart (not two
    overdue ones at once). Read in time, nothing moves."""
    plan = plan_of(realtime_turns(ttfb_ms=100, gap_ms=20, deltas=1))
    late, on_time = Conversation(plan), Conversation(plan)
    for conv in (late, on_time):
        conv.start(0)
        conv.client_message(True, client({"type": "session.update", "session": {"x": 1}}), 500 * MS)
    create = client({"type": "response.create"})
    got = late.client_message(True, create, 7_000 * MS, 7_150 * MS)
    assert [a.at_ns for a in got] == [7_150 * MS, 7_170 * MS, 7_190 * MS]
    got = on_time.client_message(True, create, 7_000 * MS, 7_090 * MS)
    assert [a.at_ns for a in got] == [7_100 * MS, 7_120 * MS, 7_140 * MS]


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_a_late_read_never_sends_a_reply_before_it_nor_squeezes_the_turn(
    arrived: int, lateness: int
) -> None:
    """However late the engine reads a client message, the turn's replies keep their recorded
    gaps and none is due before the read; read before the first reply was due, they keep
    their recorded delays from the arrival."""
    plan = plan_of(realtime_turns(ttfb_ms=100, gap_ms=20, deltas=2))
    conv = Conversation(plan)
    conv.start(0)
    conv.client_message(True, client({"type": "session.update", "session": {"x": 1}}), 0)
    ready = arrived + lateness
    due = [
        a.at_ns
        for a in conv.client_message(True, client({"type": "response.create"}), arrived, ready)
    ]
    recorded = [d for d, _ in plan.turns[2].replies]
    assert [b - a for a, b in itertools.pairwise(due)] == [
        b - a for a, b in itertools.pairwise(recorded)
    ]
    assert due[0] == max(arrived + recorded[0], ready)
