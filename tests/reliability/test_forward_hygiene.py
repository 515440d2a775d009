"""Forward mode under idle, half-sent and numerous clients (issue 28: it starved as the engine
did): through mitmproxy (a session that may record) the ClientLimits addon times clients out and
bounds how many are served, so new clients are answered; the CLI's forward proxy (the engine,
for replay) under ``ulimit -n 1024`` against 1100 half-sent heads keeps answering with stderr
quiet. Real mitmproxy, real sockets, generous bounds."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.replay.options import ConnectionLimits
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.client_limits import ClientLimits
from replayproxy._mitm.stack import build_stack
from replayproxy.testing import cassette
from tests.reliability.test_connection_hygiene import (
    MODELS,
    SLOW_HEAD,
    _open_files,
    _replay_cli,
)

URL = "http://api.openai.invalid/v1/models"


def _session(**limits: float) -> ReplaySession:
    return ReplaySession(
        cassette(MODELS),
        speed=0,
        connection_limits=ConnectionLimits(**limits),  # type: ignore[arg-type]
    )


def _closed(sock: socket.socket) -> bool:
    """The proxy closed ``sock`` (a FIN, or a reset: the head it never read was discarded)."""
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def test_a_half_sent_head_to_the_proxy_is_closed_after_head_timeout(tmp_path: Path) -> None:
    """head_timeout reaches mitmproxy: a client that never finishes its head is closed after
    it (mitmproxy's own watchdog would wait 600 s), and the proxy still answers others."""
    stack = build_stack(_session(head_timeout=0.5), None)
    with stack.proxy(confdir=tmp_path / "conf") as proxy:
        with socket.create_connection((proxy.host, proxy.port), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(SLOW_HEAD)
            assert _closed(sock)
            took = time.monotonic() - started
        assert 0.4 < took < 5
        assert httpx.get(URL, proxy=proxy.url, timeout=10).text == '{"data": []}'
        limits = stack.addons[0]
        assert isinstance(limits, ClientLimits) and limits.closed == 1


def test_past_max_connections_the_idle_longest_make_room(tmp_path: Path) -> None:
    """With max_connections=5 and 10 half-sent heads, a new client is answered at once: the
    clients idle longest were closed for it."""
    stack = build_stack(_session(max_connections=5), None)
    with stack.proxy(confdir=tmp_path / "conf") as proxy:
        slow = [socket.create_connection((proxy.host, proxy.port), timeout=10) for _ in range(10)]
        try:
            for sock in slow:
                sock.sendall(SLOW_HEAD)
            time.sleep(0.3)
            started = time.monotonic()
            answer = httpx.get(URL, proxy=proxy.url, timeout=10)
            # generous (a loaded machine): a starved one waited for the 10 s head timeout
            assert answer.text == '{"data": []}' and time.monotonic() - started < 5
            limits = stack.addons[0]
            assert isinstance(limits, ClientLimits) and limits.closed >= 6
            assert _closed(slow[0])  # the oldest was closed
        finally:
            for sock in slow:
                sock.close()


@pytest.mark.timing
def test_1100_half_sent_heads_against_the_cli_proxy(tmp_path: Path) -> None:
    """The issue's attack on ``replayproxy replay`` in forward mode under ``ulimit -n 1024``:
    a new client is answered within a couple of seconds, stderr stays a few lines."""
    path = tmp_path / "models.cassette"
    store.save(path, cassette(MODELS))
    with (
        _open_files(4096),
        _replay_cli(path, "--speed", "0", "--confdir", str(tmp_path / "conf"), forward=True) as (
            url,
            _,
            stderr,
        ),
    ):
        host, port = url.removeprefix("http://").rsplit(":", 1)
        slow = []
        try:
            for _ in range(1100):
                sock = socket.create_connection((host, int(port)), timeout=5)
                sock.sendall(SLOW_HEAD)
                slow.append(sock)
            time.sleep(0.5)
            started = time.monotonic()
            answer = httpx.get(URL, proxy=url, timeout=10)
            # On a loaded machine the proxy may still be closing idle clients to make room:
            # it then answers "retry" at once, as designed; a client that retries is served.
            while b"retry" in answer.content and time.monotonic() - started < 5:
                time.sleep(0.2)
                answer = httpx.get(URL, proxy=url, timeout=10)
            took = time.monotonic() - started
            print(f"forward: new client answered in {took * 1000:.0f} ms after 1100 half-sent")
            assert answer.text == '{"data": []}'
            assert took < 5  # generous: 170-330 ms measured
        finally:
            for sock in slow:
                sock.close()
        time.sleep(0.3)
    print("".join(stderr))
    assert len("".join(stderr).splitlines()) <= 5, stderr
