"""A request with a 20,000-parameter query (232 KiB, under the head limit) is answered well
under a second, matched or missed, and a stream served at the same time keeps its recorded
timing, in both shells (issue 28: 29 s, and a stream arriving in one read at 11 s): the query
comparison is linear and a long head is resolved off the event loop. Real sockets, httpx."""

from __future__ import annotations

import contextlib
import itertools
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Request
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy._mitm.stack import build_stack
from replayproxy.testing import cassette, interaction
from tests.reliability.test_connection_hygiene import _replay_cli

N = 20_000
QUERY = "&".join(f"p{i}=v{i}" for i in range(N))
OTHER = "&".join(f"p{i}=w{i}" for i in range(N))  # every value differs: the longest miss
BIG = Request("GET", f"http://api.openai.invalid/v1/files?{QUERY}", body=b"")
STREAM_GAP_S = 0.1
STREAM = interaction(
    [b"data: %d\n\n" % i for i in range(12)],
    url="http://api.openai.invalid/v1/chat/completions",
    body=b"{}",
    head_ms=10,
    gap_ms=STREAM_GAP_S * 1000,
)


def _cassette() -> Cassette:
    return cassette(STREAM, interaction([b'{"ok": true}'], request=BIG))


@contextlib.contextmanager
def _engine() -> Iterator[tuple[str, dict[str, str]]]:
    with ReplayServer(_cassette()) as server:
        yield server.url, {}


@contextlib.contextmanager
def _forward_engine(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The engine as a forward proxy (how every replay runs in proxy mode)."""
    tls = LeafCerts(tmp_path / "conf")
    with ReplayServer.for_session(ReplaySession(_cassette()), tls=tls) as server:
        yield "http://api.openai.invalid", {"proxy": server.url}


@contextlib.contextmanager
def _forward(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """mitmproxy as a forward proxy (how a session that may record runs)."""
    stack = build_stack(ReplaySession(_cassette()), None)
    proxy = stack.proxy(confdir=tmp_path / "conf").start()
    try:
        yield "http://api.openai.invalid", {"proxy": proxy.url}
    finally:
        proxy.stop()


def _stream_arrivals(base: str, proxy: dict[str, str], out: list[float]) -> None:
    with (
        httpx.Client(timeout=20, **proxy) as client,  # type: ignore[arg-type]
        client.stream("POST", base + "/v1/chat/completions", content=b"{}") as response,
    ):
        for _ in response.iter_raw():
            out.append(time.monotonic())


def _raw_get(base: str, proxy: dict[str, str], query: str) -> bytes:
    """GET ``/v1/files?query`` on a raw socket (httpx refuses URLs over 64 KiB); the whole
    answer, read until the server closes."""
    target = f"/v1/files?{query}"
    address = httpx.URL(proxy.get("proxy", base))
    if proxy:
        target = base + target  # absolute form, to the forward proxy
    head = f"GET {target} HTTP/1.1\r\nhost: api.openai.invalid\r\nconnection: close\r\n\r\n"
    with socket.create_connection((address.host, address.port or 80), timeout=20) as sock:
        sock.sendall(head.encode())
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


@pytest.mark.timing
@pytest.mark.parametrize("shell", ["engine", "forward-engine", "forward"])
def test_a_20000_parameter_query_is_answered_fast_beside_a_timed_stream(
    shell: str, tmp_path: Path
) -> None:
    """While a stream with 100 ms gaps is served, the big GET (as recorded, then with every
    value different) is answered in well under a second each time (as measured; asserted
    under a generous 15 s for a loaded machine: 5.9 s was seen beside stress-ng, the bug
    took 29 s or never answered), and no gap of the stream grows past a generous bound (a
    blocked loop once delivered it in one read, at 11 s)."""
    shells = {"engine": _engine, "forward-engine": lambda: _forward_engine(tmp_path)}
    serving = shells.get(shell, lambda: _forward(tmp_path))()
    with serving as (base, proxy):
        arrivals: list[float] = []
        stream = threading.Thread(target=_stream_arrivals, args=(base, proxy, arrivals))
        stream.start()
        took = []
        time.sleep(0.25)
        for query, status in ((QUERY, 200), (OTHER, 500)):
            started = time.monotonic()
            answer = _raw_get(base, proxy, query)
            took.append(time.monotonic() - started)
            assert answer.startswith(b"HTTP/1.1 %d " % status), answer[:300]
        stream.join(20)
    print(
        f"{shell}: 20,000-parameter GET hit {took[0] * 1000:.0f} ms, miss {took[1] * 1000:.0f} ms"
    )
    # Generous (a shared, loaded machine; ~0.1-0.8 s measured, see
    # docs/explanations/reliability.md): it was 29 s (engine) and no answer in 30 s (forward,
    # 50,000 parameters).
    assert max(took) < 15.0
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) >= 10, arrivals
    print(
        f"{shell}: stream gaps max {max(gaps) * 1000:.0f} ms (recorded {STREAM_GAP_S * 1000:.0f})"
    )
    assert max(gaps) < STREAM_GAP_S + 5.0  # once the whole stream came in one read, at 11 s


@pytest.mark.timing
@pytest.mark.parametrize("forward", [False, True], ids=["engine", "forward"])
def test_sigint_during_a_big_match_ends_the_proxy_promptly(forward: bool, tmp_path: Path) -> None:
    """``replayproxy replay`` gets SIGINT while it explains a 20,000-parameter miss: it ends
    within a few seconds with its summary (the forward proxy once ignored SIGINT for 15 s)."""
    path = tmp_path / "big.cassette"
    store.save(path, _cassette())
    args = ("--confdir", str(tmp_path / "conf")) if forward else ()
    with _replay_cli(path, *args, forward=forward) as (url, proc, stderr):
        proxy = {"proxy": url} if forward else {}
        base = "http://api.openai.invalid" if forward else url
        asker = threading.Thread(target=_quiet_raw_get, args=(base, proxy, OTHER), daemon=True)
        asker.start()
        time.sleep(0.2)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(15)
        took = time.monotonic() - started
    print(f"{'forward' if forward else 'engine'}: ended {took * 1000:.0f} ms after SIGINT")
    assert took < 10  # generous (a loaded machine); the forward proxy once took 15 s
    assert "interaction" in "".join(stderr)  # the summary line


def _quiet_raw_get(base: str, proxy: dict[str, str], query: str) -> None:
    with contextlib.suppress(OSError):
        _raw_get(base, proxy, query)
