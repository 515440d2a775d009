"""The Realtime WebSocket simulator: the event grammar a real client expects, deterministic
bytes, an `error` event for unknown client events, and no answer but 426 to plain HTTP."""

from __future__ import annotations

import json

import httpx
from websockets.sync.client import connect

from replayproxy._core.cassette.websocket import WebSocketSession, WsMessage
from replayproxy._core.check.grammars.realtime import check_session
from replayproxy.testing import RealtimeSimulator
from replayproxy.testing._realtime import reply_text
from tests.websocket.clients import openai_session, websockets_session


def test_openai_sdk_gets_a_whole_text_response() -> None:
    """The openai SDK's Realtime client reassembles the simulator's reply from its deltas."""
    with RealtimeSimulator(ttfb_ms=5, gap_ms=1) as sim:
        got = openai_session(sim.url + "/v1")
    assert "".join(e.get("delta", "") for _, e in got) == reply_text()
    assert got[-1][1]["type"] == "response.done"


def test_sessions_are_byte_identical_and_pass_the_realtime_grammar() -> None:
    """Two runs send the same bytes, and the session passes every realtime.* rule."""
    runs = []
    for _ in range(2):
        with RealtimeSimulator(ttfb_ms=5, gap_ms=1) as sim:
            got = websockets_session(sim.ws_url + "?model=m")
        runs.append([json.dumps(e) for _, e in got])
    assert runs[0] == runs[1]
    session = WebSocketSession(tuple(WsMessage(0, False, True, e.encode()) for e in runs[0]))
    assert check_session(session, "openai-realtime") == []


def test_unknown_client_event_gets_an_error_event() -> None:
    """An event type the simulator does not know is answered with a Realtime `error`."""
    with RealtimeSimulator() as sim, connect(sim.ws_url, proxy=None) as ws:
        ws.recv(timeout=5)
        ws.send('{"type":"no.such.event"}')
        error = json.loads(ws.recv(timeout=5))
    assert error["type"] == "error" and "no.such.event" in error["error"]["message"]
    assert sim.received == [{"type": "no.such.event"}]


def test_plain_http_is_refused_with_426() -> None:
    """A request without an upgrade gets 426 Upgrade Required."""
    with RealtimeSimulator() as sim:
        r = httpx.get(sim.url + "/v1/realtime")
    assert r.status_code == 426 and sim.connections == 0
