"""The first request on a new connection: its schedule counts from when the connection was
ready, so mitmproxy's own set-up of the connection is absorbed too (and only then: a later
request, or one long after connecting, counts from its own arrival). End to end, marked
``timing``, as in test_clock_start.py: each delay is 1 s, each bound where only the wrong stamp
could put the frame.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from http.client import HTTPConnection

import pytest
from mitmproxy import connection
from mitmproxy.test import tflow

from replayproxy._core.matching.differences import MatchOptions
from replayproxy._engine import pacing
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons import _arrival
from replayproxy._mitm.addons._arrival import FirstRequests, arrived_at
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from tests.replay.test_clock_start import (
    ADDED_S,
    BODY,
    CASSETTE,
    DELAY_S,
    FIRST_FRAME_S,
    LATE_S,
    _request,
)


class SlowConnect:
    """An addon whose client_connected hook takes ``delay``: mitmproxy setting a connection up."""

    delay = 0.0

    async def client_connected(self, client: connection.Client) -> None:
        await asyncio.sleep(self.delay)


@pytest.fixture(scope="module")
def proxy(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EmbeddedProxy, Replayer, SlowConnect]]:
    """A reverse replay proxy whose connection set-up can be made slow."""
    slow, replayer = SlowConnect(), Replayer()
    proxy = EmbeddedProxy(
        [slow, replayer],
        mode="reverse:http://127.0.0.1:9",
        confdir=tmp_path_factory.mktemp("conf"),
        options={"connection_strategy": "lazy"},
    ).start()
    try:
        yield proxy, replayer, slow
    finally:
        proxy.stop()


def first_body_byte_after(conn: HTTPConnection) -> float:
    """Send the recorded request on ``conn``; seconds from sending it to its first body byte
    (the rest of the response is read, so the connection can carry another request)."""
    conn.request("POST", "/v1/chat/completions", BODY, {"content-type": "application/json"})
    sent = time.monotonic()
    response = conn.getresponse()
    assert response.read(1), "no body"
    took = time.monotonic() - sent
    response.read()
    return took


@pytest.mark.timing
def test_a_new_connection_is_counted_from_when_it_was_ready(
    proxy: tuple[EmbeddedProxy, Replayer, SlowConnect], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first request on a connection counts from the connection's start when it came
    within FRESH_CONNECTION_S of it (set to 2 s here), so 1 s of connection set-up in
    mitmproxy is absorbed (first frame 600 ms after the request, not 1.6 s); a second request
    on the same connection counts from its own arrival (600 ms again, not at once)."""
    server, replayer, slow = proxy
    monkeypatch.setattr(_arrival, "FRESH_CONNECTION_S", 2 * DELAY_S)
    monkeypatch.setattr(pacing, "ABSORB_MAX", 2 * DELAY_S)  # 1 s absorbed: shows the stamp
    monkeypatch.setattr(slow, "delay", DELAY_S)
    replayer.use(ReplaySession(CASSETTE, options=MatchOptions(allow_repeats=True)))
    conn = HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        first = first_body_byte_after(conn)
        second = first_body_byte_after(conn)
    finally:
        conn.close()
    assert FIRST_FRAME_S - 0.05 < first < ADDED_S, first
    assert FIRST_FRAME_S - 0.05 < second < LATE_S, second


@pytest.mark.timing
def test_a_first_request_long_after_the_connection_counts_from_itself(
    proxy: tuple[EmbeddedProxy, Replayer, SlowConnect],
) -> None:
    """A request sent 1 s after connecting (a pre-connected pool) is beyond
    FRESH_CONNECTION_S: its first frame comes 600 ms after it was sent, not at once."""
    server, replayer, _ = proxy
    replayer.use(ReplaySession(CASSETTE))
    conn = HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.connect()
        time.sleep(DELAY_S)
        took = first_body_byte_after(conn)
    finally:
        conn.close()
    assert FIRST_FRAME_S - 0.05 < took < LATE_S, took


def _client(start: float, tls_setup: float | None = None) -> connection.Client:
    client = tflow.tclient_conn()
    client.timestamp_start = start
    client.timestamp_tls_setup = tls_setup  # tls_established: whether this is set
    return client


def test_first_requests_gives_the_ready_time_once_per_connection() -> None:
    """The connection's start (or its TLS set-up) for its first request only; again after
    mitmproxy forgets the connection."""
    first = FirstRequests()
    plain, tls = _client(100.0), _client(200.0, tls_setup=200.5)
    assert first.ready(plain) == 100.0
    assert first.ready(plain) is None
    assert first.ready(tls) == 200.5
    first.forget(plain)
    assert first.ready(plain) == 100.0


def test_arrival_counts_from_the_connection_only_when_the_request_came_at_once() -> None:
    """ready replaces the stamp when the request was complete within FRESH_CONNECTION_S of
    it; a later request, or a ready time after the stamp, leaves the stamp."""
    fresh = _arrival.FRESH_CONNECTION_S
    req = _request(1000.0, 1000.0 + fresh)
    assert arrived_at(req, 50.0, 1000.5, ready=1000.0) == pytest.approx(49.5)
    late = _request(1000.0, 1000.0 + fresh + 0.001)
    assert arrived_at(late, 50.0, 1000.5, ready=1000.0) == pytest.approx(49.5 + fresh + 0.001)
    assert arrived_at(req, 50.0, 1000.5, ready=1000.02) == pytest.approx(49.5 + fresh)
