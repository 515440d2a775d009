"""When a replayed schedule's clock starts: when the whole request reached replayproxy.

Recorded offsets count from when the complete request went upstream, so on replay they count
from when the complete request reached replayproxy, directly (the engine) and through
mitmproxy (mitmproxy's own ``request.timestamp_end``). Latency inside replayproxy (slow
hooks, matching, the hop from mitmproxy to the origin) is then absorbed by the schedule
instead of being added to it. These run end to end on real sockets (marked ``timing``): each
test's delay is 1 s, and each bound sits where only the wrong stamp could put the frame
(ADDED_S, FIRST_FRAME_S), leaving some 900 ms for a loaded machine. The same rules are
asserted exactly on the virtual clock (test_origin_clock.py, test_pacing.py).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.test import tutils

from replayproxy._core.cassette.model import Request
from replayproxy._engine import pacing
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession, Served
from replayproxy._mitm.addons._arrival import arrived_at
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing import cassette, interaction, sse_frames

DELAY_S = 1.0
FIRST_FRAME_S = 0.6
# The bounds are one-sided where they can be: a loaded machine only makes a frame later, so a
# frame "absorbed" must come before ADDED_S (where adding the delay would put it, at the
# earliest) and a frame counted from the right stamp never before FIRST_FRAME_S; LATE_S is
# only a sanity bound.
ADDED_S = FIRST_FRAME_S + DELAY_S - 0.1
LATE_S = FIRST_FRAME_S + 3 * DELAY_S
BODY = b'{"model":"m","stream":true}'
HEAD = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\n\r\n" % len(BODY)
)


# Head at 570 ms, frames at 600, 630, 660 ms.
CASSETTE = cassette(interaction(sse_frames(3), head_ms=570, gap_ms=30))


def first_frame_after_send(port: int, *, body_delay: float = 0.0) -> float:
    """Seconds from sending the request's last byte to reading the first body byte.

    With ``body_delay`` the head goes first and the body that much later (a slow upload).
    """
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if body_delay:
            sock.sendall(HEAD)
            time.sleep(body_delay)
            sock.sendall(BODY)
        else:
            sock.sendall(HEAD + BODY)
        sent = time.monotonic()
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            assert data, "closed before the head"
            buf += data
        rest = buf.split(b"\r\n\r\n", 1)[1]
        while not rest:
            rest = sock.recv(65536)
            assert rest, "closed before the first frame"
        return time.monotonic() - sent


class SlowHooks:
    """An addon before the replayer whose request hook takes DELAY_S: proxy-side latency."""

    async def request(self, flow: http.HTTPFlow) -> None:
        await asyncio.sleep(DELAY_S)


@pytest.fixture(scope="module")
def slow_proxy(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EmbeddedProxy, Replayer]]:
    """A reverse replay proxy with DELAY_S of hook latency in front of the replayer."""
    replayer = Replayer()
    proxy = EmbeddedProxy(
        [SlowHooks(), replayer],
        mode="reverse:http://127.0.0.1:9",
        confdir=tmp_path_factory.mktemp("conf"),
        options={"connection_strategy": "lazy"},
    ).start()
    try:
        yield proxy, replayer
    finally:
        proxy.stop()


@pytest.fixture
def no_absorb_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift ABSORB_MAX (10 ms) so that DELAY_S of latency shows which stamp the clock used."""
    monkeypatch.setattr(pacing, "ABSORB_MAX", 2 * DELAY_S)


@pytest.mark.timing
@pytest.mark.usefixtures("no_absorb_cap")
def test_proxy_latency_is_absorbed_by_the_schedule(
    slow_proxy: tuple[EmbeddedProxy, Replayer],
) -> None:
    """The clock starts at mitmproxy's stamp: with the cap lifted, 1 s spent in mitmproxy's
    hooks before the replayer does not delay the first frame: it still arrives 600 ms after
    the request was sent (1.6 s if the latency were added)."""
    proxy, replayer = slow_proxy
    replayer.use(ReplaySession(CASSETTE))
    took = first_frame_after_send(proxy.port)
    assert FIRST_FRAME_S - 0.05 < took < ADDED_S, took


@pytest.mark.timing
def test_proxy_latency_beyond_the_cap_is_added(
    slow_proxy: tuple[EmbeddedProxy, Replayer],
) -> None:
    """By default only ABSORB_MAX (10 ms) of that 1 s is absorbed: a proxy that slow is
    stalled or saturated, and the rest is added as a slow network would add it (first frame
    at 1.59 s, not 600 ms)."""
    proxy, replayer = slow_proxy
    replayer.use(ReplaySession(CASSETTE))
    took = first_frame_after_send(proxy.port)
    assert FIRST_FRAME_S + DELAY_S / 2 < took < LATE_S, took


@pytest.mark.timing
@pytest.mark.usefixtures("no_absorb_cap")
def test_proxy_counts_from_the_request_body_not_its_head(
    slow_proxy: tuple[EmbeddedProxy, Replayer],
) -> None:
    """Through mitmproxy, a body sent 1 s after the head starts the clock (the recording
    counts from the complete request): the first frame comes 600 ms after the body, not at
    once (the cap lifted: the hooks' 1 s is absorbed)."""
    proxy, replayer = slow_proxy
    replayer.use(ReplaySession(CASSETTE))
    took = first_frame_after_send(proxy.port, body_delay=DELAY_S)
    assert FIRST_FRAME_S - 0.05 < took < LATE_S, took


@pytest.mark.timing
def test_engine_counts_from_the_request_body_not_its_head() -> None:
    """Directly, a body sent 1 s after the head starts the clock: first frame 600 ms later."""
    with ReplayServer(CASSETTE) as server:
        took = first_frame_after_send(server.port, body_delay=DELAY_S)
    assert FIRST_FRAME_S - 0.05 < took < LATE_S, took


@pytest.mark.timing
def test_engine_absorbs_slow_matching() -> None:
    """1 s spent matching the request (a huge cassette, say) is absorbed by the schedule."""
    with ReplayServer(CASSETTE) as server:
        resolve = server.session.resolve
        served: list[object] = []

        def slow_resolve(request: Request) -> object:
            time.sleep(DELAY_S)
            served.append(resolve(request))
            return served[-1]

        server.session.resolve = slow_resolve  # type: ignore[assignment, method-assign]
        took = first_frame_after_send(server.port)
    assert [type(s) for s in served] == [Served]  # the slow matcher did answer it
    assert FIRST_FRAME_S - 0.05 < took < ADDED_S, took


# -- the clock conversion (pure) ---------------------------------------------------------------


def _request(start: float, end: float | None) -> http.Request:
    req = tutils.treq()
    req.timestamp_start = start
    req.timestamp_end = end
    return req


def test_arrival_prefers_the_complete_request_and_moves_to_the_loop_clock() -> None:
    """The wall-clock age of timestamp_end (else timestamp_start) is subtracted from loop time."""
    assert arrived_at(_request(1000.0, 1000.25), 50.0, 1000.5) == pytest.approx(49.75)
    assert arrived_at(_request(1000.0, None), 50.0, 1000.5) == pytest.approx(49.5)


@given(
    stamp=st.floats(0, 2e9, allow_nan=False),
    wall_now=st.floats(0, 2e9, allow_nan=False),
    loop_now=st.floats(0, 1e7, allow_nan=False),
)
def test_arrival_is_never_in_the_future_nor_older_than_the_bound(
    stamp: float, wall_now: float, loop_now: float
) -> None:
    """Whatever the wall clock did (stepped back, jumped ahead), the arrival is between
    loop_now - 5 s and loop_now: a stepped clock can neither delay nor burst a schedule."""
    got = arrived_at(_request(stamp, stamp), loop_now, wall_now)
    assert loop_now - 5.0 - 1e-6 <= got <= loop_now
    if 0 <= wall_now - stamp <= 5.0:
        assert got == pytest.approx(loop_now - (wall_now - stamp))


def test_a_stepped_wall_clock_counts_as_no_latency() -> None:
    """A stamp from the future or from an hour ago (NTP step) is ignored: arrival = now."""
    assert arrived_at(_request(2000.0, 2000.0), 50.0, 1000.0) == 50.0
    assert arrived_at(_request(1000.0, 1000.0), 50.0, 4600.0) == 50.0


# -- a request that arrives after its first write was due ---------------------------------------

# Head at 0 ms, frames at 100, 200, 300, 400 ms: 1 s of latency makes all of them overdue.
EARLY = cassette(interaction(sse_frames(4), head_ms=0, gap_ms=100))


def frame_times(port: int) -> list[float]:
    """When each of EARLY's frames was read, in seconds after the request was sent."""
    times: dict[int, float] = {}
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(HEAD + BODY)
        sent = time.monotonic()
        seen = b""
        while not seen.endswith(b"0\r\n\r\n"):
            data = sock.recv(65536)
            assert data, "closed before the end of the body"
            seen += data
            now = time.monotonic() - sent
            for i in range(4):
                if b'"i": %d' % i in seen:
                    times.setdefault(i, now)
    return [times[i] for i in range(4)]


def _assert_gaps_kept(times: list[float]) -> None:
    # Recorded 100 ms apart, 300 ms from the first to the last. Bursting the overdue frames to
    # catch up would put them all in one read (0 ms); the bound sits halfway. The span, not
    # each gap: a late read of one frame shortens the gap after it on a loaded machine.
    assert times[-1] - times[0] > 0.15, times
    # The first frame is late (the latency exceeded its offset), not early.
    assert times[0] > DELAY_S, times


@pytest.mark.timing
def test_engine_keeps_the_gaps_when_the_first_write_is_already_overdue() -> None:
    """Matching took 1 s, longer than the recorded time to the last frame (400 ms): the
    schedule starts late instead of sending the overdue frames in one burst."""
    with ReplayServer(EARLY) as server:
        resolve = server.session.resolve

        def slow_resolve(request: Request) -> object:
            time.sleep(DELAY_S)
            return resolve(request)

        server.session.resolve = slow_resolve  # type: ignore[assignment, method-assign]
        _assert_gaps_kept(frame_times(server.port))


@pytest.mark.timing
def test_proxy_keeps_the_gaps_when_the_first_write_is_already_overdue(
    slow_proxy: tuple[EmbeddedProxy, Replayer],
) -> None:
    """The same behind mitmproxy, with 1 s spent in its hooks."""
    proxy, replayer = slow_proxy
    replayer.use(ReplaySession(EARLY))
    _assert_gaps_kept(frame_times(proxy.port))
