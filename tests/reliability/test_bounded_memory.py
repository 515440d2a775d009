"""Memory stays bounded: the matcher's parsed-body cache, slow readers, big request bodies.

The figures (RSS under load) are measured by ``benchmarks/bench_memory.py``; these tests check
the mechanisms that bound them, with sizes counted in bytes rather than timed.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Request
from replayproxy._core.matching.bodycache import DEFAULT_MAX_BYTES, BodyCache
from replayproxy._core.matching.matcher import Matcher, Miss
from replayproxy.testing import CHAT_URL, interaction


@given(
    st.lists(st.binary(max_size=64), max_size=60),
    st.integers(1, 200),
    st.integers(1, 100),
)
def test_the_body_cache_never_keeps_more_than_its_byte_budget(
    bodies: list[bytes], max_bytes: int, max_item: int
) -> None:
    """Whatever is asked, the bodies kept total at most max_bytes, none above max_item, and
    get() always returns what parse() would."""
    calls: list[bytes] = []

    def parse(body: bytes) -> int:
        calls.append(body)
        return len(body) * 7

    cache = BodyCache(parse, max_bytes=max_bytes, max_item=max_item)
    for body in bodies:
        assert cache.get(body) == len(body) * 7
        assert cache.size <= max_bytes
        assert cache.size == sum(len(b) for b in cache._items)
        assert all(len(b) <= min(max_item, max_bytes) for b in cache._items)


def test_the_body_cache_parses_a_recent_body_once_and_forgets_the_oldest() -> None:
    """A body used again is not parsed again; the least recently used one goes first."""
    calls: list[bytes] = []

    def parse(body: bytes) -> bytes:
        calls.append(body)
        return body

    cache = BodyCache(parse, max_bytes=10, max_item=10)
    for body in (b"aaaa", b"bbbb", b"aaaa", b"cccc", b"aaaa", b"bbbb"):
        cache.get(body)
    assert calls == [b"aaaa", b"bbbb", b"cccc", b"bbbb"]


def test_unmatched_big_requests_keep_the_matchers_cache_within_budget() -> None:
    """500 unmatched requests of 100 KB each leave at most DEFAULT_MAX_BYTES of bodies cached
    (the old process-wide lru_cache kept 1024 bodies whatever their size)."""
    matcher = Matcher([interaction([b"data: 1\n\n"])])
    for n in range(500):
        body = json.dumps({"model": "m", "n": n, "pad": "x" * 100_000}).encode()
        assert isinstance(matcher.match(Request("POST", CHAT_URL, body=body)), Miss)
    assert matcher._bodies.size <= DEFAULT_MAX_BYTES
    assert len(matcher._bodies) < 100


def test_each_matcher_has_its_own_cache() -> None:
    """The cache belongs to a matcher (a session), not to the process."""
    a, b = Matcher([interaction([b"1"])]), Matcher([interaction([b"1"])])
    a.match(Request("POST", CHAT_URL, body=b'{"x": 1}'))
    assert b'{"x": 1}' in a._bodies._items
    assert b'{"x": 1}' not in b._bodies._items


# -- slow readers: the origin writes as the transport drains ------------------------------------


def _dechunk(raw: bytes) -> bytes:
    """The body of one chunked HTTP/1.1 response (head included in ``raw``)."""
    rest = raw[raw.index(b"\r\n\r\n") + 4 :]
    out = bytearray()
    while True:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line, 16)
        if size == 0:
            return bytes(out)
        out += rest[:size]
        rest = rest[size + 2 :]


_frames = st.lists(st.integers(0, 3 * 40).map(lambda n: b"x" * n), max_size=6)


@given(_frames, st.lists(st.integers(0, 3), max_size=6), st.sampled_from(["GET", "HEAD"]))
def test_framing_never_makes_a_write_longer_than_the_cap(
    frames: list[bytes], times: list[int], method: str
) -> None:
    """With any frame sizes and instants, no socket write exceeds JOIN_MAX (plus the framing
    of one piece), and the writes still carry exactly the recorded chunks."""
    import pytest

    from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
    from replayproxy._engine import http1_writer

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(http1_writer, "JOIN_MAX", 40)
        at = [sum(times[: i + 1]) if i < len(times) else sum(times) for i in range(len(frames))]
        writes = tuple(Write(t, f) for t, f in zip(at, frames, strict=True))
        schedule = Schedule(
            Head(0, 200, "", ()), writes, Finish(at[-1] if at else 0, FinishKind.COMPLETE)
        )
        out = list(http1_writer.steps(schedule, method))
    assert all(len(data) <= 40 + 16 for _, data in out[1:])
    assert [t for t, _ in out] == sorted(t for t, _ in out)
    raw = b"".join(d for _, d in out)
    if method == "HEAD":
        assert raw.endswith(b"\r\n\r\n") and len(out) == 1
    else:
        assert _dechunk(raw) == b"".join(frames)


def test_non_reading_clients_do_not_make_the_origin_buffer_the_body() -> None:
    """Three clients that never read a 16 MB response (at --speed 0, one instant) make the
    origin hold a bounded amount for them, not the body (before: the whole body per client
    plus a framed copy); a fourth client that reads gets every byte."""
    import socket
    import time
    import tracemalloc

    from replayproxy._engine.server import ReplayServer
    from replayproxy.testing import cassette

    body = b"data: " + b"y" * (16 * 2**20) + b"\n\n"
    frames = [body[i : i + 2**20] for i in range(0, len(body), 2**20)]
    request = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 27\r\n\r\n"
    request += b'{"model":"m","stream":true}'
    it = interaction(frames)
    with ReplayServer(cassette(it, it, it, it), speed=0) as server:
        tracemalloc.start()
        try:
            idle = []
            for _ in range(3):
                sock = socket.create_connection(("127.0.0.1", server.port))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
                sock.sendall(request)
                idle.append(sock)
            time.sleep(1.5)  # let the origin write until the sockets are full
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        got = httpx.post(
            server.url + "/v1/chat/completions", content=b'{"model":"m","stream":true}', timeout=30
        )
        for sock in idle:
            sock.close()
    assert held < 4 * 2**20, f"the origin held {held} bytes for 3 non-reading clients"
    assert got.content == body


def _rss(pid: int) -> int:
    """Resident memory of process ``pid`` (Linux /proc), bytes."""
    from pathlib import Path

    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_big_request_bodies_are_released_by_the_replay_proxy(tmp_path: Path) -> None:
    """Unmatched 20 MB requests through ``replayproxy replay`` leave no body behind once the
    flows are done (mitmproxy's flows are freed by the cyclic collector: an idle proxy kept
    every one). Measured on the server process, a fresh one, so the figure is its own. It
    once depended on the machine's load (+80 MiB in 5 runs of 8 beside stress-ng: the bodies
    freed in a thread's arena stayed resident) until the serving process fixed glibc's mmap
    threshold (replayproxy/_engine/memory.py)."""
    import signal
    import socket
    import subprocess
    import sys
    import time

    from replayproxy import _store as store
    from replayproxy.testing import cassette

    path = tmp_path / "one.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    exe = str(Path(sys.executable).with_name("replayproxy"))
    proc = subprocess.Popen(
        [exe, "replay", str(path), "--upstream", "http://127.0.0.1:9", "--listen",
         "127.0.0.1:0", "--confdir", str(tmp_path / "conf")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[-1])

        def post(body: bytes) -> bytes:
            head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n"
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                sock.sendall(head % len(body))
                sock.sendall(body)
                return sock.recv(12)

        post(b'{"warm": "up"}')
        time.sleep(1)
        before = _rss(proc.pid)
        for n in range(2):
            assert post(b'{"n":%d,"pad":"%s"}' % (n, b"x" * (20 * 2**20))) == b"HTTP/1.1 500"
        # The proxy collects a moment after a big flow ends; on a loaded machine that moment
        # comes later, so wait for it (up to 15 s) instead of sampling once.
        deadline = time.monotonic() + 15
        while True:
            time.sleep(0.5)
            grown = _rss(proc.pid) - before
            if grown < 20 * 2**20 or time.monotonic() > deadline:
                break
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    print(f"RSS grew {grown / 2**20:.1f} MiB after two 20 MB requests")
    assert grown < 20 * 2**20, f"RSS grew {grown} bytes after two 20 MB requests"
