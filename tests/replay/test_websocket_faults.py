"""WebSocket faults as a real client sees them: close codes, a dropped connection, missing or
repeated messages, stalls, fragmented frames, in-band errors, a refused upgrade."""

from __future__ import annotations

import itertools
import json
import socket
import time
from typing import Any

import pytest
import wsproto.events as wse
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect
from wsproto import WSConnection
from wsproto.connection import ConnectionType

from replayproxy._core.cassette.model import Cassette
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import FaultSpecError
from replayproxy.testing import realtime_turns, ws_interaction
from tests.replay.conftest import RECORDED_HOST, ReplayTarget
from tests.replay.helpers import ws_client_tls

PATH = "/v1/realtime?model=gpt-realtime"
CASSETTE = Cassette((ws_interaction(realtime_turns(ttfb_ms=50, gap_ms=10, deltas=4)),))
# Server messages: 0 session.created, 1 session.updated, 2 response.created,
# 3-6 response.output_text.delta, 7 response.done.


def run(
    url: str, **options: Any
) -> tuple[list[dict[str, Any]], ConnectionClosed | None, list[float]]:
    """Talk the recorded conversation; return the server events received, how the socket
    closed (None: still open when the client gave up after 5 s, generous for a loaded
    machine) and arrival times."""
    got: list[dict[str, Any]] = []
    times: list[float] = []
    try:
        with connect(url, open_timeout=5, **options) as ws:

            def recv() -> None:
                got.append(json.loads(ws.recv(timeout=5)))
                times.append(time.monotonic())

            recv()
            ws.send(json.dumps({"type": "session.update", "session": {"x": 1}}))
            recv()
            ws.send(json.dumps({"type": "response.create"}))
            while got[-1]["type"] != "response.done":
                recv()
    except ConnectionClosed as e:
        return got, e, times
    except TimeoutError:
        return got, None, times
    return got, None, times


def replay(fault: str) -> tuple[list[dict[str, Any]], ConnectionClosed | None, list[float]]:
    with ReplayServer(CASSETTE, faults=[fault]) as server:
        return run(server.url.replace("http", "ws", 1) + PATH)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_no_fault_is_the_whole_session() -> None:
    """Baseline: every server message, then the client's own clean close."""
    got, closed, _ = replay("ttfb:delay=0")
    assert len(got) == 8 and got[-1]["type"] == "response.done" and closed is None


@pytest.mark.parametrize("code", [1001, 1011, 4000])
def test_close_with_a_code_at_a_position(code: int) -> None:
    """close:events=4,code=C: four server messages, then a close frame with code C."""
    got, closed, _ = replay(f"close:events=4,code={code},reason=going away")
    assert types(got) == ["session.created", "session.updated", "response.created",
                          "response.output_text.delta"]  # fmt: skip
    assert closed is not None and closed.rcvd is not None
    assert (closed.rcvd.code, closed.rcvd.reason) == (code, "going away")


@pytest.mark.parametrize("fault", ["close:events=4", "close:events=4,code=1006", "reset:events=4"])
def test_a_dropped_connection_is_1006_without_a_close_frame(fault: str) -> None:
    """close without code (or code=1006) and reset drop the TCP connection: the client gets
    no close frame and reports 1006."""
    got, closed, _ = replay(fault)
    assert len(got) == 4
    assert closed is not None and closed.rcvd is None


def test_truncate_is_a_normal_close() -> None:
    """truncate:events=4 ends with a normal 1000 close before response.done."""
    got, closed, _ = replay("truncate:events=4")
    assert len(got) == 4 and closed is not None and closed.rcvd is not None
    assert closed.rcvd.code == 1000


def test_drop_and_duplicate_a_server_message() -> None:
    """drop:event=4 loses the second delta; duplicate:event=4 sends it twice."""
    dropped, _, _ = replay("drop:event=4")
    doubled, _, _ = replay("duplicate:event=4")
    deltas = [e["delta"] for e in dropped if e["type"] == "response.output_text.delta"]
    assert deltas == ["w0 ", "w2 ", "w3 "]
    deltas = [e["delta"] for e in doubled if e["type"] == "response.output_text.delta"]
    assert deltas == ["w0 ", "w1 ", "w1 ", "w2 ", "w3 "]


@pytest.mark.timing
def test_stall_pauses_then_continues() -> None:
    """stall:events=4,for=1 holds the rest of the response back 1 s, then sends it all
    (end to end: 500 ms of slack each way for a loaded machine)."""
    got, _, times = replay("stall:events=4,for=1")
    assert len(got) == 8
    assert times[4] - times[3] > 0.5
    assert max(b - a for a, b in itertools.pairwise(times[4:])) < 0.5


def test_hang_keeps_the_socket_open_and_silent() -> None:
    """hang:events=4 sends four messages and then nothing, without closing."""
    got, closed, _ = replay("hang:events=4")
    assert len(got) == 4 and closed is None


def test_in_band_realtime_error_event() -> None:
    """error (default position: before response.done) sends a Realtime `error` event and
    no response.done."""
    got, closed, _ = replay("error:message=overloaded")
    assert types(got)[-1] == "error" and "response.done" not in types(got)
    assert got[-1]["error"]["message"] == "overloaded" and closed is None


def test_status_refuses_the_upgrade() -> None:
    """status:code=429 answers the upgrade with the HTTP error: the client's handshake fails."""
    with (
        ReplayServer(CASSETTE, faults=["status:code=429"]) as server,
        pytest.raises(InvalidStatus) as refused,
    ):
        connect(server.url.replace("http", "ws", 1) + PATH, open_timeout=5)
    assert refused.value.response.status_code == 429


def test_ttfb_delays_the_upgrade() -> None:
    """ttfb:delay=0.3 holds the 101 back; the messages keep their delays after it."""
    with ReplayServer(CASSETTE, faults=["ttfb:delay=0.3"]) as server:
        start = time.monotonic()
        with connect(server.url.replace("http", "ws", 1) + PATH, open_timeout=5) as ws:
            opened = time.monotonic()
            ws.recv(timeout=2)
    assert opened - start > 0.25


def test_split_sends_continuation_frames_the_client_reassembles() -> None:
    """split:bytes=7 sends every server message in frames of at most 7 bytes; a raw wsproto
    client sees them frame by frame, websockets reassembles the same messages."""
    with ReplayServer(CASSETTE, faults=["split:bytes=7"], speed=0) as server:
        frames = raw_frames(server.port)
    assert all(len(f) <= 7 for f in frames)
    assert json.loads(b"".join(frames))["type"] == "session.created"
    got, _, _ = replay("split:bytes=7")
    assert len(got) == 8 and got[-1]["type"] == "response.done"


def raw_frames(port: int) -> list[bytes]:
    """The payload of each frame of the first server message, read with a raw wsproto client."""
    ws = WSConnection(ConnectionType.CLIENT)
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    frames: list[bytes] = []
    with sock:
        sock.sendall(ws.send(wse.Request(host="127.0.0.1", target=PATH)))
        while True:
            ws.receive_data(sock.recv(65536))
            for event in ws.events():
                if isinstance(event, wse.Message):
                    data = event.data.encode() if isinstance(event.data, str) else event.data
                    frames.append(bytes(data))
                    if event.message_finished:
                        return frames


def test_faults_for_http_bodies_are_refused_with_a_reason() -> None:
    """jitter acts on HTTP bodies: the upgrade gets the explained 500 naming the fault."""
    session = ReplaySession(CASSETTE, faults=["jitter:ms=5"])
    with ReplayServer(session.cassette, faults=["jitter:ms=5"]) as server:
        with pytest.raises(InvalidStatus) as refused:
            connect(server.url.replace("http", "ws", 1) + PATH, open_timeout=5)
        assert "does not apply to a WebSocket session" in server.session.misses[0].one_line()
    assert refused.value.response.status_code == 500


def test_bad_close_code_is_a_spec_error() -> None:
    """close:code=99 is refused when the spec is parsed, naming the valid range."""
    with pytest.raises(FaultSpecError, match="1000-4999"):
        ReplaySession(CASSETTE, faults=["close:code=99"])


@pytest.mark.parametrize("fault", ["close:events=4,code=1011", "close:events=4"])
def test_close_codes_reach_the_client_through_mitmproxy(
    replay_proxy: ReplayTarget, fault: str
) -> None:
    """Through mitmproxy (both modes) the client sees the same: 1011, or no close frame (1006)
    for a dropped connection."""
    replay_proxy.replayer.use(ReplaySession(CASSETTE, faults=[fault]))
    if replay_proxy.mode == "forward":
        url = f"wss://{RECORDED_HOST}{PATH}"
        ctx = ws_client_tls(replay_proxy.proxy.ca_cert)
        got, closed, _ = run(url, proxy=replay_proxy.proxy.url, ssl=ctx)
    else:
        got, closed, _ = run(replay_proxy.proxy.url.replace("http", "ws", 1) + PATH)
    assert len(got) == 4 and closed is not None
    if "code=1011" in fault:
        assert closed.rcvd is not None and closed.rcvd.code == 1011
    else:  # no close frame at all (mitmproxy alone would send a clean 1000)
        assert closed.rcvd is None
