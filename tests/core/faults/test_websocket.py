"""Faults on a recorded WebSocket session (core/faults/websocket.py): the exact session replayed.

A small session with known offsets; each fault's result is compared whole (messages, offsets,
fragments, the close), and each refusal by its exact one-line message.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.faults.spec import parse
from replayproxy._errors import FaultSpecError
from replayproxy.testing import MS, ws_interaction

HEAD = 5 * MS
S0 = WsMessage(10 * MS, False, True, b'{"type":"session.created"}')
C0 = WsMessage(20 * MS, True, True, b'{"type":"response.create"}')
S1 = WsMessage(30 * MS, False, True, b'{"type":"response.created"}')
S2 = WsMessage(40 * MS, False, True, b'{"type":"response.output_text.delta","delta":"hi"}')
S3 = WsMessage(50 * MS, False, True, b'{"type":"response.done"}')
MSGS = (S0, C0, S1, S2, S3)
CLOSED = WsClose(51 * MS, WsCloseKind.CLOSE, 1000, "", True)
PREFIX = "interaction 0 (GET /v1/realtime): fault"


def run(
    *faults: str,
    messages: tuple[WsMessage, ...] = MSGS,
    stored: tuple[str, ...] = (),
    speed: float = 1.0,
    index: int = 0,
) -> tuple[WebSocketSession, int] | None:
    it = ws_interaction(list(messages), CLOSED, head_ms=5, faults=stored)
    return ws_faults.plan(it, index, speed=speed, faults=[parse(f) for f in faults])


def session(*messages: WsMessage, close: WsClose) -> WebSocketSession:
    return WebSocketSession(tuple(messages), close)


def _error_event(kind: str, message: str) -> bytes:
    return (
        b'{"type":"error","event_id":"event_replayproxy_error","error":{"type":"'
        + kind.encode()
        + b'","code":null,"message":"'
        + message.encode()
        + b'","param":null,"event_id":null}}'
    )


DEFAULT_ERROR = _error_event(
    "server_error",
    "The server had an error while processing your request. (injected by replayproxy)",
)


def at(ms: float) -> int:
    return round(ms * MS)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (None, session(*MSGS, close=CLOSED)),
        (
            "close:events=2,code=4000,reason=bye",
            session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.CLOSE, 4000, "bye", False)),
        ),
        (
            "close:events=2,code=1000",
            session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.CLOSE, 1000, "", False)),
        ),
        (
            "close:events=2",
            session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.DROPPED, 1006, "", False)),
        ),
        (
            "close:events=2,code=1006,reason=x",
            session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.DROPPED, 1006, "", False)),
        ),
        (
            "reset:events=1",
            session(S0, close=WsClose(at(10), WsCloseKind.DROPPED, 1006, "", False)),
        ),
        (
            "reset:events=3",
            session(S0, C0, S1, S2, close=WsClose(at(40), WsCloseKind.DROPPED, 1006, "", False)),
        ),
        (
            "truncate:events=0",
            session(close=WsClose(HEAD, WsCloseKind.CLOSE, 1000, "", False)),
        ),
        (
            "truncate:events=4",
            session(*MSGS, close=WsClose(at(50), WsCloseKind.CLOSE, 1000, "", False)),
        ),
        ("hang:events=1", session(S0, close=WsClose(at(10), WsCloseKind.OPEN))),
        # The default position: halfway through the server messages (2 of 4).
        ("hang", session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.OPEN))),
        ("linger", session(*MSGS, close=WsClose(at(51), WsCloseKind.OPEN))),
        # time=: the messages recorded at or before it; never before the head.
        ("hang:time=0.03", session(S0, C0, S1, close=WsClose(at(30), WsCloseKind.OPEN))),
        ("hang:time=0.025", session(S0, C0, close=WsClose(at(25), WsCloseKind.OPEN))),
        ("hang:time=0.0299999", session(S0, C0, close=WsClose(29_999_900, WsCloseKind.OPEN))),
        ("hang:time=0.001", session(close=WsClose(HEAD, WsCloseKind.OPEN))),
        ("hang:time=0", session(close=WsClose(HEAD, WsCloseKind.OPEN))),
        ("hang:time=0.2", session(*MSGS, close=WsClose(at(200), WsCloseKind.OPEN))),
        # error: by default just before the first response.done.
        (
            "error",
            session(
                S0,
                C0,
                S1,
                S2,
                WsMessage(at(40), False, True, DEFAULT_ERROR),
                close=WsClose(at(40), WsCloseKind.OPEN),
            ),
        ),
        (
            "error:events=1,type=rate_limit_exceeded,message=slow down",
            session(
                S0,
                WsMessage(at(10), False, True, _error_event("rate_limit_exceeded", "slow down")),
                close=WsClose(at(10), WsCloseKind.OPEN),
            ),
        ),
        (
            "error:events=0",
            session(
                WsMessage(HEAD, False, True, DEFAULT_ERROR),
                close=WsClose(HEAD, WsCloseKind.OPEN),
            ),
        ),
        ("drop:event=1", session(S0, C0, S2, S3, close=CLOSED)),
        ("drop:event=0", session(C0, S1, S2, S3, close=CLOSED)),
        ("drop:event=3", session(S0, C0, S1, S2, close=CLOSED)),
        ("duplicate:event=1", session(S0, C0, S1, S1, S2, S3, close=CLOSED)),
        (
            "reorder:event=0",
            session(
                replace(S1, offset_ns=S0.offset_ns),
                C0,
                replace(S0, offset_ns=S1.offset_ns),
                S2,
                S3,
                close=CLOSED,
            ),
        ),
        (
            "reorder:event=2",
            session(
                S0,
                C0,
                S1,
                replace(S3, offset_ns=S2.offset_ns),
                replace(S2, offset_ns=S3.offset_ns),
                close=CLOSED,
            ),
        ),
        (
            "corrupt:event=2",
            session(
                S0,
                C0,
                S1,
                replace(S2, data=S2.data[:25], fragments=()),
                S3,
                close=CLOSED,
            ),
        ),
        # stall: everything from the cut on moves later together, the close too.
        (
            "stall:events=1,for=0.5",
            session(
                S0,
                *(replace(m, offset_ns=m.offset_ns + 500 * MS) for m in (C0, S1, S2, S3)),
                close=replace(CLOSED, offset_ns=at(551)),
            ),
        ),
        (
            "stall:events=2",
            session(
                S0,
                C0,
                S1,
                *(replace(m, offset_ns=m.offset_ns + 1000 * MS) for m in (S2, S3)),
                close=replace(CLOSED, offset_ns=at(1051)),
            ),
        ),
        # ttfb: the head and the whole session move together.
        (
            "ttfb:delay=0.25",
            session(
                *(replace(m, offset_ns=m.offset_ns + 250 * MS) for m in MSGS),
                close=replace(CLOSED, offset_ns=at(301)),
            ),
        ),
    ],
)
def test_fault_gives_this_session(fault: str | None, expected: WebSocketSession) -> None:
    """Each fault's replayed session, message by message, and its close."""
    result = run(*([fault] if fault else []))
    assert result is not None
    got, head = result
    assert got == expected
    assert head == (HEAD + 250 * MS if fault and fault.startswith("ttfb") else HEAD)


def test_ttfb_default_is_one_second() -> None:
    """ttfb without delay= moves the head and the session by 1 s."""
    got = run("ttfb")
    assert got is not None
    assert got[1] == HEAD + 1000 * MS
    assert got[0].messages[0].offset_ns == S0.offset_ns + 1000 * MS


@pytest.mark.parametrize(
    ("fault", "fragments"),
    [
        # S0 is 26 bytes, S1 27, S2 50, S3 24; the client message is never split.
        ("split:bytes=10", [(10, 10, 6), (), (10, 10, 7), (10, 10, 10, 10, 10), (10, 10, 4)]),
        ("split:bytes=25", [(25, 1), (), (25, 2), (25, 25), (24,)]),
        ("split:bytes=26", [(26,), (), (26, 1), (26, 24), (24,)]),
        ("split:bytes=10,event=1", [(), (), (10, 10, 7), (), ()]),
        ("split:bytes=100,event=3", [(), (), (), (), (24,)]),
        ("split:bytes=1,event=0", [(1,) * 26, (), (), (), ()]),
    ],
)
def test_split_fragments_server_messages(fault: str, fragments: list[tuple[int, ...]]) -> None:
    """split:bytes=K sends server messages (or only event=N) in frames of at most K bytes."""
    result = run(fault)
    assert result is not None
    got, head = result
    assert [m.fragments for m in got.messages] == fragments
    assert [replace(m, fragments=()) for m in got.messages] == list(MSGS)
    assert head == HEAD


def test_split_of_an_empty_message_is_one_empty_frame() -> None:
    """A server message with no payload is still sent, as one empty frame."""
    empty = WsMessage(10 * MS, False, False, b"")
    result = run("split:bytes=4", messages=(empty, S1))
    assert result is not None
    assert [m.fragments for m in result[0].messages] == [(0,), (4, 4, 4, 4, 4, 4, 3)]


@pytest.mark.parametrize(
    ("speed", "offsets", "close", "head"),
    [
        (2.0, [at(5), at(10), at(15), at(20), at(25)], at(25.5), at(2.5)),
        (0.5, [at(20), at(40), at(60), at(80), at(100)], at(102), at(10)),
        (3.0, [3_333_333, 6_666_667, 10_000_000, 13_333_333, 16_666_667], 17_000_000, 1_666_667),
        (0, [0, 0, 0, 0, 0], 0, 0),
    ],
)
def test_speed_scales_every_offset(speed: float, offsets: list[int], close: int, head: int) -> None:
    """--speed divides every offset, the head's and the close's (rounded); 0 means none."""
    result = run(speed=speed)
    assert result is not None
    got, got_head = result
    assert [m.offset_ns for m in got.messages] == offsets
    assert got.close.offset_ns == close
    assert got_head == head


def test_stall_and_ttfb_are_real_seconds_after_speed() -> None:
    """stall for= and ttfb delay= are not divided by --speed; positions are recorded ones."""
    result = run("stall:events=1,for=0.5", "ttfb:delay=0.1", speed=2.0)
    assert result is not None
    got, head = result
    assert head == at(2.5) + 100 * MS
    assert [m.offset_ns for m in got.messages] == [
        at(5 + 100),
        at(10 + 600),
        at(15 + 600),
        at(20 + 600),
        at(25 + 600),
    ]
    assert got.close.offset_ns == at(25.5 + 600)


def test_status_refuses_the_upgrade() -> None:
    """A status fault means no WebSocket session at all (the HTTP error is served)."""
    assert run("status:code=503") is None
    assert run("status", stored=("hang",)) is None


def test_edits_come_before_endings_whatever_the_order() -> None:
    """hang:events=1 after drop:event=0 counts the messages left by the drop."""
    result = run("hang:events=1", "drop:event=0")
    assert result is not None
    assert result[0] == session(C0, S1, close=WsClose(at(30), WsCloseKind.OPEN))


def test_stored_faults_come_first_and_selectors_apply() -> None:
    """Stored faults apply before given ones; interaction=I keeps a fault to interaction I."""
    result = run("drop:event=0", stored=("drop:event=0",))
    assert result is not None
    assert result[0].messages == (C0, S2, S3)
    result = run("hang:events=1,interaction=1")
    assert result is not None
    assert result[0] == session(*MSGS, close=CLOSED)
    result = run("hang:events=1,interaction=3", index=3)
    assert result is not None
    assert result[0].messages == (S0,)


_DONE_FREE = (S0, C0, S1)


@pytest.mark.parametrize(
    ("fault", "messages", "problem"),
    [
        ("close:frames=1", MSGS, "frames= does not apply to a WebSocket session; give events=N"),
        ("reset:bytes=10", MSGS, "bytes= does not apply to a WebSocket session; give events=N"),
        ("hang:events=5", MSGS, "events=5 is past the last server message (4)"),
        ("stall:events=3", _DONE_FREE, "events=3 is past the last server message (2)"),
        ("error", _DONE_FREE, "no response.done to stop before; give events=N"),
        ("drop:event=4", MSGS, "server message 4 does not exist (the session has 4, 0-3)"),
        (
            "duplicate:event=2",
            _DONE_FREE,
            "server message 2 does not exist (the session has 2, 0-1)",
        ),
        ("reorder:event=3", MSGS, "server message 3 does not exist (the session has 4, 0-3)"),
        ("corrupt:event=4", MSGS, "server message 4 does not exist (the session has 4, 0-3)"),
        ("keepalive", MSGS, "acts on HTTP bodies; it does not apply to a WebSocket session"),
        ("jitter", MSGS, "acts on HTTP bodies; it does not apply to a WebSocket session"),
        ("throttle:bps=10", MSGS, "acts on HTTP bodies; it does not apply to a WebSocket session"),
        ("coalesce", MSGS, "acts on HTTP bodies; it does not apply to a WebSocket session"),
        ("split:at=utf8", MSGS, "a WebSocket message is split by bytes=K, not at="),
    ],
)
def test_faults_that_cannot_apply_are_one_line_errors(
    fault: str, messages: tuple[WsMessage, ...], problem: str
) -> None:
    """Each refusal names the interaction, the fault and the reason."""
    with pytest.raises(FaultSpecError) as caught:
        run(fault, messages=messages)
    assert str(caught.value) == f"{PREFIX} {fault!r}: {problem}"


def test_refusals_come_before_any_edit() -> None:
    """An unsupported fault is refused even after an edit that would fail by itself."""
    with pytest.raises(FaultSpecError, match="acts on HTTP bodies"):
        run("drop:event=9", "keepalive")


@pytest.mark.parametrize(
    "data",
    [b"not json", b"[1, 2]", b'{"type": 5}', b'{"event": "x"}', b"\xff\xfe"],
)
def test_corrupt_needs_a_typed_json_payload(data: bytes) -> None:
    """corrupt cuts a JSON event with a type; anything else is refused, not mangled."""
    odd = WsMessage(30 * MS, False, True, data)
    with pytest.raises(FaultSpecError) as caught:
        run("corrupt:event=1", messages=(S0, C0, odd))
    assert str(caught.value) == (
        f"{PREFIX} 'corrupt:event=1': server message 1 has no JSON payload to cut"
    )


def test_corrupt_refuses_a_binary_message() -> None:
    """A binary message has no JSON payload, whatever its bytes."""
    binary = replace(S1, text=False)
    with pytest.raises(FaultSpecError, match="server message 1 has no JSON payload to cut"):
        run("corrupt:event=1", messages=(S0, C0, binary))


def test_error_finds_response_done_only_in_typed_text_messages() -> None:
    """A binary or untyped message mentioning response.done is not the stop point."""
    binary_done = replace(S3, text=False)
    with pytest.raises(FaultSpecError, match=r"no response\.done to stop before"):
        run("error", messages=(S0, C0, S1, binary_done))
    typed = WsMessage(at(45), False, True, json.dumps({"type": "response.done"}).encode())
    result = run("error", messages=(S0, C0, S1, binary_done, typed))
    assert result is not None
    assert result[0].messages[:-1] == (S0, C0, S1, binary_done)


def test_a_bad_stored_fault_names_the_interaction() -> None:
    """A stored fault that does not parse is one line naming the interaction."""
    with pytest.raises(FaultSpecError) as caught:
        run(stored=("hang", "nope"), index=2)
    assert str(caught.value).startswith(
        "interaction 2 (WebSocket): stored fault: unknown fault 'nope' in 'nope'; valid faults: "
    )


def test_the_head_is_at_zero_without_a_recorded_response() -> None:
    """An interaction without a response head starts at 0."""
    it = replace(ws_interaction(list(MSGS), CLOSED, head_ms=5), response=None)
    result = ws_faults.plan(it, 0, faults=[parse("truncate:events=0")])
    assert result is not None
    assert result[1] == 0
    assert result[0].close == WsClose(0, WsCloseKind.CLOSE, 1000, "", False)


def test_corrupt_keeps_the_first_half_as_one_frame() -> None:
    """corrupt sends the first half of the payload, unfragmented even if recorded in frames."""
    framed = replace(S2, fragments=(25, 25))
    result = run("corrupt:event=1", messages=(S0, C0, framed))
    assert result is not None
    assert result[0].messages[2] == WsMessage(40 * MS, False, True, b'{"type":"response.output_')


def test_defaults_are_speed_1_and_the_first_serving() -> None:
    """plan() without speed= keeps the recorded offsets; without replay_count= it is the first
    serving, whose p= draw differs from the second's (seed 6: applies, then does not)."""
    it = ws_interaction(list(MSGS), CLOSED, head_ms=5)
    assert ws_faults.plan(it, 0) == (session(*MSGS, close=CLOSED), HEAD)
    chance = [parse("hang:events=1,p=0.5,seed=6")]
    hung = (session(S0, close=WsClose(at(10), WsCloseKind.OPEN)), HEAD)
    assert ws_faults.plan(it, 0, faults=chance) == hung
    assert ws_faults.plan(it, 0, faults=chance, replay_count=0) == hung
    assert ws_faults.plan(it, 0, faults=chance, replay_count=1) == (
        session(*MSGS, close=CLOSED),
        HEAD,
    )


def test_path_selectors_apply_to_websocket_faults() -> None:
    """path=GLOB is matched against the upgrade request's path."""
    result = run("hang:events=1,path=/v1/realtime")
    assert result is not None and result[0].messages == (S0,)
    result = run("hang:events=1,path=/v1/other")
    assert result is not None and result[0] == session(*MSGS, close=CLOSED)


def test_a_session_without_server_messages() -> None:
    """events=0 of a session the server never wrote to keeps every client message."""
    result = run("hang:events=0", messages=(C0,))
    assert result is not None
    assert result[0] == session(C0, close=WsClose(HEAD, WsCloseKind.OPEN))


def test_stall_at_a_time() -> None:
    """stall:time=S pauses before the first message recorded after S (client or server)."""
    result = run("stall:time=0.025,for=0.5")
    assert result is not None
    assert [m.offset_ns for m in result[0].messages] == [at(10), at(20), at(530), at(540), at(550)]
