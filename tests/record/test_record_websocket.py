"""WebSocket sessions recorded through the embedded recorder: messages, directions, offsets,
text/binary, and how each session ended (client close, server close code, dropped TCP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from replayproxy._core.cassette.websocket import WsCloseKind
from replayproxy.testing._realtime import RealtimeSimulator

from .helpers import recording, wait_for_interactions


@pytest.fixture(scope="module")
def sim() -> RealtimeSimulator:
    with RealtimeSimulator(ttfb_ms=60, gap_ms=20) as simulator:
        yield simulator  # type: ignore[misc]


def talk(url: str, proxy: str | None, *, server_ends: bool = False) -> list[str]:
    """A short Realtime exchange plus one binary message; then the client closes (1000), or
    waits for the server to end the session."""
    types = []
    try:
        with connect(url, proxy=proxy, open_timeout=10) as ws:
            types.append(json.loads(ws.recv(timeout=10))["type"])
            ws.send(b"\x00\x01binary\xff")
            assert ws.recv(timeout=10) == b"\x00\x01binary\xff"
            ws.send(json.dumps({"type": "response.create", "event_id": "evt_1"}))
            while True:
                types.append(json.loads(ws.recv(timeout=10))["type"])
                if types[-1] == "response.done":
                    break
            if server_ends:
                ws.recv(timeout=5)
    except ConnectionClosed:
        pass
    return types


@pytest.mark.parametrize("forward", [False, True], ids=["reverse", "forward"])
def test_session_recorded_message_by_message(
    sim: RealtimeSimulator, tmp_path: Path, confdir: Path, forward: bool
) -> None:
    """Every message is recorded with its direction, text/binary kind, exact payload and a
    rising offset; the server's replies come at least the simulator's TTFB after the
    client's response.create; the client's close is recorded as a 1000 close by the client."""
    path = tmp_path / "ws.cassette"
    with recording(path, confdir=confdir, upstream=None if forward else sim.url) as proxy:
        base = sim.url if forward else proxy.url
        url = base.replace("http", "ws", 1) + "/v1/realtime?model=gpt-realtime"
        types = talk(url, proxy.url if forward else None)
        (it,) = wait_for_interactions(path, 1).interactions
    assert it.response is not None and it.response.status == 101
    assert it.request.header("sec-websocket-key") is not None
    ws = it.websocket
    assert ws is not None
    msgs = ws.messages
    assert [m.from_client for m in msgs[:3]] == [False, True, False]
    assert (msgs[1].text, msgs[1].data) == (False, b"\x00\x01binary\xff")
    assert msgs[2].text is False  # the echo came back binary
    server_types = [json.loads(m.data)["type"] for m in msgs if m.text and not m.from_client]
    assert server_types == types
    offsets = [m.offset_ns for m in msgs]
    assert offsets == sorted(offsets) and offsets[0] >= it.response.head_offset_ns
    create = next(m for m in msgs if m.from_client and m.text)
    first_reply = msgs[msgs.index(create) + 1]
    assert first_reply.offset_ns - create.offset_ns >= 50_000_000  # ttfb_ms=60
    assert ws.close.kind is WsCloseKind.CLOSE
    assert (ws.close.code, ws.close.by_client) == (1000, True)
    assert ws.close.offset_ns >= offsets[-1]


@pytest.mark.parametrize(
    ("knob", "kind", "code"),
    [("close:1011", WsCloseKind.CLOSE, 1011), ("drop", WsCloseKind.DROPPED, 1006)],
)
def test_how_the_server_ended_is_recorded(
    sim: RealtimeSimulator, tmp_path: Path, confdir: Path, knob: str, kind: WsCloseKind, code: int
) -> None:
    """A server close frame is recorded with its code and reason, by the server; a TCP
    connection that ends without one is recorded as dropped."""
    path = tmp_path / "ws.cassette"
    with recording(path, confdir=confdir, upstream=sim.url) as proxy:
        url = proxy.url.replace("http", "ws", 1) + f"/v1/realtime?model=m&sim-end={knob}"
        talk(url, None, server_ends=True)
        (it,) = wait_for_interactions(path, 1).interactions
    assert it.websocket is not None
    close = it.websocket.close
    assert (close.kind, close.code, close.by_client) == (kind, code, False)
    if kind is WsCloseKind.CLOSE:
        assert close.reason == "simulated close"


def test_recording_stopped_mid_session_keeps_what_arrived(
    sim: RealtimeSimulator, tmp_path: Path, confdir: Path
) -> None:
    """Stopping the recorder while a session is open still writes it, with every message that
    crossed, ended as open (never lost, never a crash)."""
    path = tmp_path / "ws.cassette"
    with recording(path, confdir=confdir, upstream=sim.url) as proxy:
        ws = connect(proxy.url.replace("http", "ws", 1) + "/v1/realtime?model=m", open_timeout=10)
        json.loads(ws.recv(timeout=10))
        ws.send(json.dumps({"type": "session.update", "session": {}}))
        json.loads(ws.recv(timeout=10))
    ws.close()
    (it,) = wait_for_interactions(path, 1).interactions
    assert it.websocket is not None
    assert [m.from_client for m in it.websocket.messages] == [False, True, False]
    assert it.websocket.close.kind is WsCloseKind.OPEN
