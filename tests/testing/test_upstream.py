"""The counting upstream (replayproxy.testing._upstream): every TCP accept counted, every
request head kept and answered as a real upstream would, over real loopback sockets."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from replayproxy.testing import CountingUpstream
from replayproxy.testing._upstream import REAL_UPSTREAM_BODY


def wait_for(check: object, timeout: float = 5.0) -> None:
    """Poll ``check()`` until it is true: the server thread counts after the client returns."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_fresh_upstream_has_seen_nothing() -> None:
    """Started on 127.0.0.1 on a free port; no connection, no request yet."""
    with CountingUpstream() as up:
        assert up.url == f"http://127.0.0.1:{up.port}" and up.port > 0
        assert (up.connections, up.requests, up.heads) == (0, 0, [])


def test_an_http_request_is_counted_kept_and_answered_as_real() -> None:
    """A request gets 200 REAL UPSTREAM; one connection, one request, its head kept."""
    with CountingUpstream() as up:
        r = httpx.get(up.url + "/v1/models", headers={"authorization": "Bearer sk-x"})
        assert (r.status_code, r.content) == (200, REAL_UPSTREAM_BODY)
        wait_for(lambda: up.requests == 1)
        assert up.connections == 1
        assert up.heads[0].startswith(b"GET /v1/models HTTP/1.1\r\n")
        assert b"authorization: Bearer sk-x" in up.heads[0]


def test_a_bare_connect_is_a_connection_without_a_request() -> None:
    """A TCP connect that sends nothing (a TLS client refused early, a port probe) is counted
    as a connection, not as a request."""
    with CountingUpstream() as up:
        socket.create_connection(("127.0.0.1", up.port)).close()
        wait_for(lambda: up.connections == 1)
        time.sleep(0.05)
        assert up.requests == 0


def test_a_silent_client_does_not_hide_the_next_connection() -> None:
    """A client that connects and says nothing does not hold up the next one: it is answered
    well before the silent one's 2 s read timeout would have let it through."""
    with CountingUpstream() as up, socket.create_connection(("127.0.0.1", up.port)):
        r = httpx.post(up.url + "/x", content=b"{}", timeout=1.5)
        assert r.content == REAL_UPSTREAM_BODY
        wait_for(lambda: up.connections == 2)
        assert up.requests == 1


def test_close_stops_listening() -> None:
    """After close() (or the with block), connecting is refused."""
    up = CountingUpstream()
    up.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", up.port), timeout=2)
