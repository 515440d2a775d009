"""Recorded Realtime sessions replayed offline to real WebSocket clients, both proxy modes.

The session is recorded once per module through ``replayproxy record`` (a subprocess) from
the openai SDK's Realtime client talking to the local Realtime simulator; the simulator is
gone before anything is replayed, and the replay proxy fixture counts upstream connections.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.websocket.conversation import plan_session
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy.testing._realtime import reply_text
from tests.replay.conftest import RECORDED_HOST, ReplayTarget
from tests.replay.helpers import ws_client_tls
from tests.websocket.clients import Received, openai_session, websockets_session
from tests.websocket.recording import REPLAYPROXY, ROOT, record_realtime


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Received]:
    """A Realtime session recorded through the CLI, and what the SDK received while recording."""
    tmp = tmp_path_factory.mktemp("realtime")
    cassette = tmp / "realtime.cassette"
    received = record_realtime(cassette, tmp, ttfb_ms=120, gap_ms=25)
    # Warm the SDK's event models up (their first construction costs tens of ms, client-side),
    # so the timing assertions below measure the replay, not pydantic's first build.
    with ReplayServer(cassette, speed=0) as server:
        openai_session(server.url + "/v1")
    return cassette, received


def events(received: Received) -> list[Any]:
    return [e for _, e in received]


def timing_errors(cassette: Path, replayed: Received) -> tuple[list[float], list[float]]:
    """served - recorded delay (s) of each server message after its anchor, the recorded
    delays taken from the cassette: (turn 0, after the upgrade; the answering messages, after
    the client message each answers)."""
    (it,) = store.load(cassette).interactions
    assert it.websocket is not None and it.response is not None
    plan = plan_session(it.websocket, it.response.head_offset_ns)
    recorded = [delay / 1e9 for turn in plan.turns for delay, _ in turn.replies]
    errors = [t - r for (t, _), r in zip(replayed, recorded, strict=True)]
    first = len(plan.turns[0].replies)
    return errors[:first], errors[first:]


def assert_paced(lateness: tuple[list[float], list[float]]) -> None:
    """No answering message comes early (the client's send is its anchor, and a load spike
    only makes messages late: 2 ms of slack for clock reads), and typical lateness stays far
    below the recorded delays (100+ ms), so replaying without them fails. Turn 0's anchor is
    when the SDK's connect() returned, after the server's upgrade, so under load a turn-0
    message can look early by as long as connect() took to return: 100 ms of slack there.
    Bounds are generous for a shared, noisy machine; benchmarks/bench_websocket.py measures."""
    turn0, answering = lateness
    assert min(answering) > -0.002, answering
    assert min(turn0) > -0.1, turn0
    ordered = sorted(turn0 + answering)
    assert ordered[len(ordered) // 2] < 0.1, ordered


def ws_url(target: ReplayTarget) -> str:
    base = (
        f"wss://{RECORDED_HOST}"
        if target.mode == "forward"
        else target.proxy.url.replace("http", "ws", 1)
    )
    return base + "/v1/realtime?model=gpt-realtime"


def ws_options(target: ReplayTarget) -> dict[str, Any]:
    if target.mode == "reverse":
        return {}
    return {
        "proxy": target.proxy.url,
        "ssl": ws_client_tls(target.proxy.ca_cert),
    }


def test_the_recording_holds_the_whole_session(recorded: tuple[Path, Received]) -> None:
    """The recorded cassette has the 101 upgrade and every message, the client's close last."""
    cassette, received = recorded
    (it,) = store.load(cassette).interactions
    assert it.response is not None and it.response.status == 101
    assert it.websocket is not None
    server = [json.loads(m.data)["event_id"] for m in it.websocket.server_messages]
    assert server == [e["event_id"] for e in events(received)]
    assert [json.loads(m.data)["type"] for m in it.websocket.client_messages] == [
        "session.update", "conversation.item.create", "response.create",
    ]  # fmt: skip
    assert it.websocket.close.code == 1000 and it.websocket.close.by_client is True


def test_openai_sdk_realtime_replays_identically_through_the_proxy(
    replay_proxy: ReplayTarget, client_env: dict[str, str], recorded: tuple[Path, Received]
) -> None:
    """The openai SDK's Realtime client gets the recorded events, in order, with each server
    message as long after the client message it answers as recorded (generous bound here;
    benchmarks/ measures the p99)."""
    cassette, original = recorded
    session = replay_proxy.serve(cassette, speed=1)
    base = None if replay_proxy.mode == "forward" else replay_proxy.base_url + "/v1"
    replayed = openai_session(base)
    assert events(replayed) == events(original)
    assert_paced(timing_errors(cassette, replayed))
    assert session.summary().line().startswith("replayproxy: 1 interaction served, 0 unmatched")


def test_openai_sdk_realtime_replays_directly(recorded: tuple[Path, Received]) -> None:
    """The direct replay server (no mitmproxy) serves the same session to the SDK."""
    cassette, original = recorded
    with ReplayServer(cassette) as server:
        replayed = openai_session(server.url + "/v1")
    assert events(replayed) == events(original)
    assert "".join(e.get("delta", "") for e in events(replayed)) == reply_text()
    assert_paced(timing_errors(cassette, replayed))


def test_websockets_client_matches_with_event_id_ignored(
    replay_proxy: ReplayTarget, recorded: tuple[Path, Received]
) -> None:
    """The `websockets` library, sending the same events plus a client event_id (ignored by
    default), is served the whole recorded session."""
    cassette, original = recorded
    replay_proxy.serve(cassette, speed=0)
    got = websockets_session(ws_url(replay_proxy), **ws_options(replay_proxy))
    assert [e["type"] for e in events(got)] == [e["type"] for e in events(original)]


def test_a_mismatched_client_message_gets_an_explained_1008(
    replay_proxy: ReplayTarget, recorded: tuple[Path, Received]
) -> None:
    """A client message that differs from the recording closes the socket with 1008 and a
    reason naming the first differing JSON pointer; the session counts it as unmatched."""
    cassette, _ = recorded
    session = replay_proxy.serve(cassette, speed=0)
    with connect(ws_url(replay_proxy), open_timeout=10, **ws_options(replay_proxy)) as ws:
        ws.recv(timeout=10)  # session.created
        session_config = {"type": "realtime", "output_modalities": ["audio"]}
        ws.send(json.dumps({"type": "session.update", "session": session_config}))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1008
    assert "/session/output_modalities" in closed.value.rcvd.reason
    assert session.summary().unmatched == 1
    assert "/session/output_modalities" in session.misses[0].one_line()


def test_an_upgrade_to_a_plain_http_recording_is_not_a_websocket() -> None:
    """A WebSocket upgrade for a path recorded as plain HTTP gets the explained 500, not 101."""
    from replayproxy.testing import cassette, interaction, sse_frames

    c: Cassette = cassette(interaction(sse_frames(2)))
    with ReplayServer(c, speed=0) as server, pytest.raises(Exception) as refused:
        connect(server.url.replace("http", "ws", 1) + "/v1/realtime", open_timeout=5)
    assert "500" in str(refused.value)


def test_replay_session_miss_leaves_no_served_count(recorded: tuple[Path, Received]) -> None:
    """Served + unmatched add up: a session that missed is not also counted as served."""
    cassette, _ = recorded
    session = ReplaySession(cassette, speed=0)
    with ReplayServer(session.cassette, speed=0) as server:
        with connect(server.url.replace("http", "ws", 1) + "/v1/realtime?model=gpt-realtime") as ws:
            ws.recv(timeout=10)
            ws.send('{"type":"response.create"}')
            with pytest.raises(ConnectionClosed):
                while True:
                    ws.recv(timeout=10)
        summary = server.summary()
    assert (summary.served, summary.unmatched) == (0, 1)


@pytest.mark.parametrize("forward", [False, True], ids=["reverse", "forward"])
def test_replayproxy_replay_cli_serves_the_sdk(
    recorded: tuple[Path, Received], forward: bool, tmp_path: Path
) -> None:
    """`replayproxy replay CASSETTE -- python CLIENT` (base URL or HTTPS_PROXY + CA): the SDK
    gets every recorded event, in order, and the summary counts one session served."""
    cassette, original = recorded
    mode = ["--forward"] if forward else []
    upstream = [] if forward else ["--upstream", "https://api.openai.com"]
    proc = subprocess.run(
        [REPLAYPROXY, "replay", *upstream, "--listen", "127.0.0.1:0", "--confdir",
         str(tmp_path), str(cassette), "--", sys.executable, "-m", "tests.websocket.clients",
         *mode],
        capture_output=True, text=True, timeout=90, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    replayed = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [e for _, e in replayed] == events(original)
    assert "1 interaction served, 0 unmatched" in proc.stderr
