"""When a replayed WebSocket turn's clock starts: when the client's message reached replayproxy.

Recorded delays count from when the client message reached the recording proxy. Directly, the
engine's own read is that moment. Behind mitmproxy the message is parsed, run through every
addon's hook and relayed before the engine reads it; the replay addon notes when mitmproxy had
it (``ClientArrivals``) and the engine counts from that, so the inbound hop is absorbed by the
recorded delay instead of being added to it (as ``test_clock_start`` shows for HTTP requests).

The engine tests run the real Origin and a wsproto client over a socketpair on a virtual clock
(exact offsets); the proxy tests run a real mitmproxy with a deliberately slow addon in front
of the replayer and a real ``websockets`` client, with generous bounds (shared machine).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import wsproto.events as wse
from hypothesis import given
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.test import tflow
from mitmproxy.websocket import WebSocketMessage
from websockets.sync.client import connect
from wsproto import WSConnection
from wsproto.connection import ConnectionType
from wsproto.frame_protocol import Opcode

from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._core.websocket.conversation import plan_interaction
from replayproxy._engine.origin import TOKEN_HEADER, Origin
from replayproxy._engine.session import ReplaySession
from replayproxy._engine.websocket import ClientArrivals, WsServe
from replayproxy._mitm.addons._arrival import MAX_AGE_S, message_arrived_at
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing import MS, ws_interaction, ws_text
from tests.replay.conftest import RECORDED_HOST, _confdir
from tests.replay.helpers import ws_client_tls
from tests.replay.virtual_time import VirtualClock, run_virtual

REPLY_MS = 400  # recorded delay of the reply after the client's message
RELAY_MS = 300  # the inbound latency in front of the engine
PATH = "/v1/realtime?model=gpt-realtime"
HELLO = {"type": "session.created", "event_id": "e1"}
ASK = {"type": "response.create", "event_id": "c1"}
REPLY = {"type": "response.done", "event_id": "e2"}
INTERACTION = ws_interaction(
    [ws_text(6, False, HELLO), ws_text(50, True, ASK), ws_text(50 + REPLY_MS, False, REPLY)]
)


# -- the engine, on a virtual clock --------------------------------------------------------------


def reply_after_send(
    *, relay_ms: float, noted_ms: float | None, interaction: Interaction = INTERACTION
) -> list[float]:
    """ms from the client's send of ``ASK`` to the arrival of each reply after it, with
    ``relay_ms`` between the send and the engine's read of it (a relay in front of the engine).
    ``noted_ms``: when the relay says it had the message (relative to the send), or ``None``: no
    relay channel."""
    clock = VirtualClock()

    async def main() -> list[float]:
        a, b = socket.socketpair()
        origin = Origin()
        schedule, plan = plan_interaction(interaction, 0)
        assert plan is not None and schedule.head is not None
        arrivals = None if noted_ms is None else ClientArrivals()
        token = origin.expect(
            schedule, "GET", websocket=WsServe(schedule.head, plan, arrivals=arrivals)
        )
        sr, sw = await asyncio.open_connection(sock=b)
        server = asyncio.create_task(origin._handle(sr, sw))
        reader, writer = await asyncio.open_connection(sock=a)
        ws = WSConnection(ConnectionType.CLIENT)
        upgrade = wse.Request(host="x", target=PATH, extra_headers=[(TOKEN_HEADER, token)])
        writer.write(ws.send(upgrade))

        async def next_message() -> Any:
            while True:
                for event in ws.events():
                    if isinstance(event, wse.Message):
                        return json.loads(event.data)
                data = await reader.read(65536)
                assert data, "closed early"
                ws.receive_data(data)

        assert await next_message() == HELLO
        payload = json.dumps(ASK)
        sent = clock.ns
        if arrivals is not None and noted_ms is not None:
            arrivals.note(payload.encode(), asyncio.get_running_loop().time() + noted_ms / 1000)
        await asyncio.sleep(relay_ms / 1000)  # the relay's latency: the engine reads it later
        writer.write(ws.send(wse.TextMessage(payload)))
        took = []
        for _ in plan.turns[-1].replies:
            assert (await next_message())["type"] == REPLY["type"]
            took.append((clock.ns - sent) / MS)
        writer.write(ws.send(wse.CloseConnection(1000)))
        await asyncio.wait_for(server, 5)
        writer.close()
        return took

    return run_virtual(main, clock)


def test_engine_counts_from_when_the_relay_had_the_message() -> None:
    """A message the relay had 300 ms before the engine read it is answered at the recorded
    400 ms after the relay had it, not 700 ms."""
    (took,) = reply_after_send(relay_ms=RELAY_MS, noted_ms=0)
    assert took == pytest.approx(REPLY_MS, abs=0.01)


def test_engine_without_a_relay_counts_from_its_own_read() -> None:
    """Directly (no channel), the engine's read starts the clock: the relay's 300 ms add up."""
    (took,) = reply_after_send(relay_ms=RELAY_MS, noted_ms=None)
    assert took == pytest.approx(REPLY_MS + RELAY_MS, abs=0.01)


def test_engine_never_counts_from_a_time_after_its_own_read() -> None:
    """A relay stamp later than the engine's read (a clock mixed up) is ignored, not waited
    for: the reply comes at the recorded delay from the engine's read."""
    (took,) = reply_after_send(relay_ms=0, noted_ms=200)
    assert took == pytest.approx(REPLY_MS, abs=0.01)


def test_engine_reading_after_the_first_reply_was_due_keeps_the_gaps() -> None:
    """The relay held the message 500 ms, past the first reply's recorded 400 ms: the turn
    starts at the engine's read, its two replies 50 ms apart as recorded (not both at once)."""
    two = ws_interaction(
        [
            ws_text(6, False, HELLO),
            ws_text(50, True, ASK),
            ws_text(50 + REPLY_MS, False, REPLY),
            ws_text(100 + REPLY_MS, False, REPLY),
        ]
    )
    took = reply_after_send(relay_ms=500, noted_ms=0, interaction=two)
    assert took == pytest.approx([500, 550], abs=0.01)


# -- pairing the relay's notes with the engine's messages (pure) ---------------------------------


def test_arrivals_pair_by_payload_in_order() -> None:
    """Equal payloads are taken first-noted first; a payload the relay dropped is skipped when
    the next one is taken; one the relay never noted (changed on the way) gets None."""
    ch = ClientArrivals()
    for data, at in [(b"a", 1.0), (b"dropped", 2.0), (b"a", 3.0), (b"b", 4.0)]:
        ch.note(data, at)
    assert ch.take(b"a") == 1.0
    assert ch.take(b"a") == 3.0  # "dropped" was never relayed: skipped and forgotten
    assert len(ch) == 1
    assert ch.take(b"changed") is None
    assert ch.take(b"b") == 4.0
    assert len(ch) == 0


def test_arrivals_keep_at_most_their_limit() -> None:
    """The oldest notes go first once the limit is reached (the engine never read them)."""
    ch = ClientArrivals(limit=2)
    for i in range(3):
        ch.note(b"%d" % i, float(i))
    assert len(ch) == 2
    assert ch.take(b"0") is None
    assert ch.take(b"2") == 2.0


@given(noted=st.lists(st.tuples(st.sampled_from([b"x", b"y", b"z"]), st.booleans()), max_size=30))
def test_arrivals_never_give_a_message_a_later_time(noted: list[tuple[bytes, bool]]) -> None:
    """Whatever the relay dropped (noted, never relayed), each message the engine reads gets
    the time of a noted message with its payload, never a later one's, each later than the
    one before; exactly its own unless a dropped message had the same payload."""
    ch = ClientArrivals()
    for i, (data, _) in enumerate(noted):
        ch.note(data, float(i))
    relayed = [i for i, (_, kept) in enumerate(noted) if kept]
    got = [ch.take(noted[i][0]) for i in relayed]
    assert all(at is not None for at in got)
    times = [int(at) for at in got if at is not None]
    assert all(j <= i and noted[j][0] == noted[i][0] for j, i in zip(times, relayed, strict=True))
    assert times == sorted(set(times))
    dropped = {data for data, kept in noted if not kept}
    if not dropped & {noted[i][0] for i in relayed}:
        assert times == relayed


@given(
    stamp=st.floats(0, 2e9, allow_nan=False),
    wall_now=st.floats(0, 2e9, allow_nan=False),
    loop_now=st.floats(0, 1e7, allow_nan=False),
)
def test_a_message_stamp_is_never_in_the_future_nor_older_than_the_bound(
    stamp: float, wall_now: float, loop_now: float
) -> None:
    """Whatever the wall clock did, mitmproxy's stamp becomes a loop time between
    loop_now - 5 s and loop_now: its age when plausible, else now (a stepped clock)."""
    got = message_arrived_at(stamp, loop_now, wall_now)
    assert loop_now - MAX_AGE_S - 1e-6 <= got <= loop_now
    age = wall_now - stamp
    assert got == pytest.approx(loop_now - age if 0 <= age <= MAX_AGE_S else loop_now)


def test_the_hook_notes_client_messages_of_replayed_sockets_in_loop_time() -> None:
    """The replayer's websocket_message hook notes a client message of a socket it replays,
    moved from mitmproxy's wall-clock stamp to the loop's clock; it ignores server messages
    and sockets it does not replay."""
    replayer = Replayer()
    flow, other = tflow.twebsocketflow(), tflow.twebsocketflow()
    arrivals = replayer._ws_arrivals[flow.id] = ClientArrivals()
    for f in (flow, other):
        assert f.websocket is not None
        f.websocket.messages.append(WebSocketMessage(Opcode.TEXT, True, b"ask", time.time() - 0.2))
        replayer.websocket_message(f)
        f.websocket.messages.append(WebSocketMessage(Opcode.TEXT, False, b"reply", time.time()))
        replayer.websocket_message(f)
    assert len(arrivals) == 1 and other.id not in replayer._ws_arrivals
    at = arrivals.take(b"ask")
    assert at is not None and at == pytest.approx(time.monotonic() - 0.2, abs=0.05)
    replayer.websocket_end(flow)
    assert not replayer._ws_arrivals


# -- through mitmproxy, real time ----------------------------------------------------------------


class SlowClientMessages:
    """An addon before the replayer whose websocket_message hook takes RELAY_MS for client
    messages: latency inside mitmproxy before the message is relayed to the engine."""

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        assert flow.websocket is not None
        if flow.websocket.messages[-1].from_client:
            await asyncio.sleep(RELAY_MS / 1000)


@pytest.fixture(scope="module", params=["forward", "reverse"])
def slow_proxy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, Any], Replayer]]:
    """A replay proxy with RELAY_MS of hook latency in front of the replayer: the WebSocket
    URL to use, the client's connect options, and the replayer."""
    replayer = Replayer()
    forward = request.param == "forward"
    proxy = EmbeddedProxy(
        [SlowClientMessages(), replayer],
        mode="regular" if forward else "reverse:http://127.0.0.1:9",
        confdir=_confdir(tmp_path_factory),
        options={"connection_strategy": "lazy"},
    ).start()
    try:
        if forward:
            url = f"wss://{RECORDED_HOST}{PATH}"
            options = {"proxy": proxy.url, "ssl": ws_client_tls(proxy.ca_cert)}
        else:
            url, options = proxy.url.replace("http", "ws", 1) + PATH, {"proxy": None}
        yield url, options, replayer
    finally:
        proxy.stop()


def test_proxy_latency_before_the_engine_is_absorbed(
    slow_proxy: tuple[str, dict[str, Any], Replayer],
) -> None:
    """300 ms spent in mitmproxy's hooks on the client's message does not delay the reply: it
    comes the recorded 400 ms after the client sent the message (700 ms if it were added),
    and the replayer keeps nothing of the session once it ended."""
    url, options, replayer = slow_proxy
    replayer.use(ReplaySession(Cassette((INTERACTION,))))
    with connect(url, open_timeout=10, **options) as ws:
        assert json.loads(ws.recv(timeout=10)) == HELLO
        sent = time.monotonic()
        ws.send(json.dumps(ASK))
        assert json.loads(ws.recv(timeout=10)) == REPLY
        took = (time.monotonic() - sent) * 1000
    assert REPLY_MS - 50 < took < REPLY_MS + RELAY_MS / 2, took
    deadline = time.monotonic() + 5
    while replayer._ws_arrivals and time.monotonic() < deadline:
        time.sleep(0.01)  # websocket_end runs on the proxy thread once the close went through
    assert not replayer._ws_arrivals
