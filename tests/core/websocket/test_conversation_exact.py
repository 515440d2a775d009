"""core/websocket/conversation.py, exact values: planned delays (rounding, speed, the head's
offset), the mismatch explanations word for word, close reasons cut at 123 bytes, and what
plan_interaction returns for faults."""

from __future__ import annotations

import pytest

from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.faults import parse
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.schedule.model import from_interaction, scale
from replayproxy._core.websocket.conversation import (
    DEFAULT_IGNORED,
    Close,
    Conversation,
    Send,
    Turn,
    WsPlan,
    _describe,
    _reason,
    message_difference,
    plan_interaction,
    plan_session,
)
from replayproxy._errors import FaultSpecError
from replayproxy.testing import ws_interaction, ws_text

OPEN = WsClose(0, WsCloseKind.OPEN)


def srv(at_ns: int, data: bytes = b"s") -> WsMessage:
    return WsMessage(at_ns, False, True, data)


def cli(at_ns: int, data: bytes = b"c", text_: bool = True) -> WsMessage:
    return WsMessage(at_ns, True, text_, data)


# -- planning ------------------------------------------------------------------------------------


def test_plan_session_cuts_turns_and_measures_from_the_anchor() -> None:
    """Turn 0's replies count from the head's offset, a turn's from its client message; the
    end counts from the last client message."""
    s = WebSocketSession(
        (srv(15), cli(30), srv(31), srv(45), cli(50)),
        WsClose(80, WsCloseKind.CLOSE, 1000, "x", False),
    )
    plan = plan_session(s, 10)
    assert plan == WsPlan(
        (
            Turn(None, ((5, srv(15)),)),
            Turn(cli(30), ((1, srv(31)), (15, srv(45)))),
            Turn(cli(50), ()),
        ),
        s.close,
        30,
        DEFAULT_IGNORED,
    )


@pytest.mark.parametrize(
    ("speed", "delays", "end"),
    [
        (1.0, [5, 7, 0], 11),
        (2.0, [2, 4, 0], 6),  # 2.5 -> 2, 3.5 -> 4 (round half to even), 5.5 -> 6
        (0.5, [10, 14, 0], 22),
        (0, [0, 0, 0], 0),
    ],
)
def test_plan_session_scales_and_rounds_delays(speed: float, delays: list[int], end: int) -> None:
    """Delays are divided by the speed and rounded; speed 0 means no waiting; a message
    recorded before its anchor is due at once (never a negative delay)."""
    s = WebSocketSession((srv(15), srv(17), srv(3)), WsClose(21, WsCloseKind.DROPPED))
    plan = plan_session(s, 10, speed=speed)
    assert [d for d, _ in plan.turns[0].replies] == delays
    assert plan.end_delay_ns == end


def test_plan_session_ignores_event_id_and_the_options_fields() -> None:
    """event_id is always ignored; the match options' ignored fields are added after it."""
    s = WebSocketSession((srv(1),), OPEN)
    assert plan_session(s, 0).ignore == ("/event_id",)
    options = MatchOptions(ignore_body_fields=("/a", "/b"))
    assert plan_session(s, 0, options=options).ignore == ("/event_id", "/a", "/b")


def test_plan_interaction_times_the_head_and_the_conversation() -> None:
    """The 101 schedule is the recorded one scaled by the speed, its head at the (scaled)
    head offset; the conversation is planned at the same speed."""
    it = ws_interaction([ws_text(6, False, {"type": "a"}), ws_text(26, False, {"type": "b"})])
    schedule, plan = plan_interaction(it, 0, speed=2)
    expected = scale(from_interaction(it), 2)
    assert schedule.head is not None and expected.head is not None
    assert schedule.head.at_ns == 2_500_000 and schedule.head.status == 101
    assert schedule.writes == expected.writes and schedule.finish == expected.finish
    assert plan is not None
    assert [d for d, _ in plan.turns[0].replies] == [500_000, 10_500_000]


def test_plan_interaction_with_a_fault_passes_its_position_on() -> None:
    """A WebSocket fault (drop after 1 server message) shapes the plan: the session ends
    after the first message, as a dropped connection."""
    it = ws_interaction([ws_text(6, False, {"type": "a"}), ws_text(26, False, {"type": "b"})])
    _, plan = plan_interaction(it, 0, faults=(parse("reset:events=1"),))
    assert plan is not None
    assert [m.data for _, m in plan.turns[0].replies] == [b'{"type": "a"}']
    assert plan.close.kind is WsCloseKind.DROPPED


def test_plan_interaction_status_refuses_the_upgrade() -> None:
    """A status fault: the HTTP error schedule (for this index and repeat) and no plan."""
    it = ws_interaction([ws_text(6, False, {"type": "a"})])
    schedule, plan = plan_interaction(it, 3, faults=(parse("status:code=503"),), replay_count=2)
    assert plan is None
    assert schedule.head is not None and schedule.head.status == 503
    spec = parse("status:code=503,interaction=3")
    assert plan_interaction(it, 3, faults=(spec,))[1] is None
    assert plan_interaction(it, 2, faults=(spec,))[1] is not None  # another interaction


def test_plan_interaction_names_a_fault_that_cannot_apply() -> None:
    """A fault past the last server message: FaultSpecError naming interaction and reason."""
    it = ws_interaction([ws_text(6, False, {"type": "a"})])
    with pytest.raises(FaultSpecError, match="events=5 is past the last server message"):
        plan_interaction(it, 0, faults=(parse("close:events=5"),))


# -- explanations --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "text_"),
    [
        (None, "(none)"),
        (cli(0, b"x" * 60), "x" * 60),
        (cli(0, b"x" * 61), "x" * 57 + "..."),
        (cli(0, b"\xff"), "\ufffd"),
        (cli(0, b"\x00" * 7, text_=False), "7 binary bytes"),
    ],
)
def test_describe(message: WsMessage | None, text_: str) -> None:
    """A message in an explanation: its text up to 60 characters, else its binary size."""
    assert _describe(message) == text_


@pytest.mark.parametrize(
    ("recorded", "got", "why"),
    [
        (cli(0, b"{}"), cli(0, b"{}", text_=False), "recorded a text message, got a binary one"),
        (cli(0, b"a", text_=False), cli(0, b"a"), "recorded a binary message, got a text one"),
        (cli(0, b"ab", text_=False), cli(0, b"ab", text_=False), None),
        (cli(0, b"ab", text_=False), cli(0, b"ac", text_=False), "the binary payload differs"),
        (cli(0, b"plain"), cli(0, b"plain"), None),
        (cli(0, b"plain"), cli(0, b"other"), "the text differs"),
        (cli(0, b'{"a": 1, "b": 2}'), cli(0, b'{"b":2,"a":1}'), None),
        (cli(0, b'{"a": 1}'), cli(0, b'{"a": 2}'), "at /a: recorded 1, got 2"),
        (cli(0, b"[1]"), cli(0, b"[2]"), "at /0: recorded 1, got 2"),
        (cli(0, b"1"), cli(0, b"2"), "at /: recorded 1, got 2"),
        (cli(0, b'{"event_id": "x", "a": 1}'), cli(0, b'{"event_id": "y", "a": 1}'), None),
    ],
)  # fmt: skip
def test_message_difference(recorded: WsMessage, got: WsMessage, why: str | None) -> None:
    """Why a client message does not match, word for word (None: it matches)."""
    assert message_difference(recorded, got, DEFAULT_IGNORED) == why


@pytest.mark.parametrize(
    ("text_", "expected"),
    [
        ("a" * 123, "a" * 123),
        ("a" * 124, "a" * 120 + "..."),
        ("é" * 61 + "a", "é" * 61 + "a"),  # 123 bytes
        ("é" * 62, "é" * 60 + "..."),  # 124 bytes: cut at 120, a whole character
        ("a" + "é" * 62, "a" + "é" * 59 + "..."),  # the cut splits an é: dropped
    ],
)
def test_reason_fits_123_bytes(text_: str, expected: str) -> None:
    """A close reason over 123 UTF-8 bytes is cut to 120 (whole characters) and "..."."""
    assert _reason(text_) == expected
    assert len(_reason(text_).encode()) <= 123


# -- the conversation ----------------------------------------------------------------------------


def _plan() -> WsPlan:
    return WsPlan(
        (Turn(None, ((5, srv(0, b"hello")),)), Turn(cli(0, b"ask"), ((10, srv(0, b"r")),))),
        WsClose(0, WsCloseKind.CLOSE, 1011, "bye", by_client=False),
        40,
    )


def test_conversation_actions_are_due_from_now() -> None:
    """start(now) gives turn 0 due from now; a matched message gives its turn from its
    arrival, then the recorded close after the end delay."""
    conv = Conversation(_plan())
    assert (conv.received, conv.miss, conv.closed) == (0, None, False)
    assert conv.start(1000) == [Send(1005, srv(0, b"hello"))]
    actions = conv.client_message(True, b"ask", 2000)
    assert actions == [Send(2010, srv(0, b"r")), Close(2040, 1011, "bye")]
    assert conv.received == 1


def test_conversation_due_times_never_go_back() -> None:
    """A message answered early is still due after what was already due (no overtaking)."""
    conv = Conversation(_plan())
    conv.start(1000)
    assert conv.client_message(True, b"ask", 990) == [
        Send(1005, srv(0, b"r")),
        Close(1030, 1011, "bye"),
    ]


def test_a_mismatch_closes_with_the_full_explanation() -> None:
    """The close: 1008 at the arrival time, "replayproxy: " and the explanation; ``miss`` has
    the explanation; the conversation is closed and answers nothing more."""
    conv = Conversation(_plan())
    conv.start(0)
    why = "client message 0 does not match the recording: the text differs"
    assert conv.client_message(True, b"other", 7) == [Close(7, 1008, "replayproxy: " + why)]
    assert (conv.miss, conv.closed, conv.received) == (why, True, 0)
    assert conv.client_message(True, b"ask", 8) == []


def test_an_extra_message_names_the_count_and_the_message() -> None:
    """A message past the recorded ones: which one, how many the recording has, the text."""
    conv = Conversation(_plan())
    conv.start(0)
    conv.client_message(True, b"ask", 1)
    assert conv.client_message(True, b"more", 2) == [
        Close(2, 1008, "replayproxy: client message 1 was not recorded (the recording has 1): more")
    ]
    assert conv.miss == "client message 1 was not recorded (the recording has 1): more"


@pytest.mark.parametrize(
    ("close", "last"),
    [
        (WsClose(0, WsCloseKind.DROPPED), Close(40, None)),
        (WsClose(0, WsCloseKind.CLOSE, 1000, "", by_client=True), None),
        (WsClose(0, WsCloseKind.CLOSE, 1000, "", by_client=None), Close(40, 1000, "")),
        (WsClose(0, WsCloseKind.OPEN), None),
    ],
)
def test_how_the_recorded_session_ended(close: WsClose, last: Close | None) -> None:
    """The end after the last turn: a drop, a server close (also when who closed is unknown),
    nothing for a client close or an open session."""
    plan = WsPlan((Turn(None, ((5, srv(0)),)),), close, 40)
    actions = Conversation(plan).start(0)
    assert actions[0] == Send(5, srv(0))
    assert actions[1:] == ([last] if last else [])


# -- plan_interaction's arguments ----------------------------------------------------------------

IT2 = ws_interaction([ws_text(6, False, {"type": "a"}), ws_text(26, False, {"type": "b"})])


def test_plan_interaction_defaults_to_the_recorded_pace() -> None:
    """Without speed=, the delays are the recorded ones."""
    _, plan = plan_interaction(IT2, 0)
    assert plan is not None
    assert [d for d, _ in plan.turns[0].replies] == [1_000_000, 21_000_000]


def test_plan_interaction_moves_the_head_with_a_ttfb_fault() -> None:
    """ttfb:delay=0.5 sends the 101 half a second later; the messages keep their delays
    after it."""
    schedule, plan = plan_interaction(IT2, 0, faults=(parse("ttfb:delay=0.5"),))
    assert schedule.head is not None and schedule.head.at_ns == 505_000_000
    assert schedule.head.status == 101 and schedule.head.headers == IT2.response.headers
    assert plan is not None
    assert [d for d, _ in plan.turns[0].replies] == [1_000_000, 21_000_000]


def test_plan_interaction_passes_the_match_options_on() -> None:
    """The session's ignored fields are ignored in the conversation too."""
    _, plan = plan_interaction(IT2, 0, options=MatchOptions(ignore_body_fields=("/x",)))
    assert plan is not None and plan.ignore == ("/event_id", "/x")


def test_a_probabilistic_fault_is_drawn_per_index_and_repeat() -> None:
    """p=0.5 faults (on the session and on the upgrade) act on exactly the servings the
    selector picks for this index and repeat count (repeat 0 by default)."""
    from replayproxy._core import faults as faults_mod

    reset = parse("reset:events=1,p=0.5")
    status = parse("status:code=503,p=0.5")
    first_two = [
        i for i in range(20)
        if faults_mod.applies(reset, IT2, i, 0) != faults_mod.applies(reset, IT2, i, 1)
    ]  # fmt: skip
    index = first_two[0]  # where repeat 0 and repeat 1 are drawn differently
    _, default = plan_interaction(IT2, index, faults=(reset,))
    assert default is not None
    assert (default.close.kind is WsCloseKind.DROPPED) is faults_mod.applies(reset, IT2, index, 0)
    refusals = 0
    for i in range(6):
        for n in range(6):
            picked = faults_mod.applies(reset, IT2, i, n)
            _, plan = plan_interaction(IT2, i, faults=(reset,), replay_count=n)
            assert plan is not None and (plan.close.kind is WsCloseKind.DROPPED) is picked
            refused = faults_mod.applies(status, IT2, i, n)
            schedule, plan = plan_interaction(IT2, i, speed=2, faults=(status,), replay_count=n)
            assert (plan is None) is refused
            if refused:
                refusals += 1
                assert schedule == faults_mod.plan(
                    IT2, i, speed=2, faults=(status,), replay_count=n
                )
                assert schedule.head is not None and schedule.head.status == 503
    assert 0 < refusals < 36


def test_a_status_fault_for_another_interaction_leaves_the_upgrade_alone() -> None:
    """The upgrade is refused only for the interaction the status fault names."""
    spec = parse("status:code=503,interaction=3")
    schedule, plan = plan_interaction(IT2, 3, faults=(spec,))
    assert plan is None and schedule.head is not None and schedule.head.status == 503


def test_a_conversation_used_without_start_counts_from_zero() -> None:
    """client_message() before start(): replies are due from the message's arrival, the
    first one possibly at 0."""
    plan = WsPlan((Turn(None, ()), Turn(cli(0, b"ask"), ((0, srv(0, b"r")),))), OPEN, 0)
    assert Conversation(plan).client_message(True, b"ask", 0) == [Send(0, srv(0, b"r"))]
