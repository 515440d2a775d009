"""Replay through mitmproxy, forward (HTTPS_PROXY + CA) and reverse (base URL) modes.

Each test runs in both modes (the ``replay_proxy`` fixture); the upstream the proxy stands in
for counts connections and must see none, and the forward-mode host does not resolve.
"""

from __future__ import annotations

import gzip
import itertools
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import requests

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind
from replayproxy._engine.session import ReplaySession
from replayproxy.testing import SSE_HEADERS, cassette, interaction, sse_frames
from tests.replay.conftest import ReplayTarget
from tests.replay.helpers import frames_per_read, raw_reads, stream_raw

BODY = b'{"model":"m","stream":true}'
PATH = "/v1/chat/completions"


@pytest.mark.timing
def test_frames_arrive_as_recorded_chunks_at_recorded_gaps(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """httpx iter_raw through the proxy yields the recorded frames, each whole (never split),
    none before its recorded offset: streamed, not buffered. Exact offsets: test_pacing.py."""
    frames = sse_frames(6, size=45)
    replay_proxy.serve(cassette(interaction(frames, gap_ms=40, head_ms=100)), speed=1)
    times: list[float] = []
    got: list[bytes] = []
    with httpx.Client(timeout=5) as c:
        start = time.monotonic()
        with c.stream("POST", replay_proxy.base_url + PATH, content=BODY) as r:
            assert r.status_code == 200
            for chunk in r.iter_raw():
                times.append(time.monotonic())
                got.append(chunk)
    counts = frames_per_read(got, frames)
    assert len(counts) > 1  # streamed: not all in one read
    # Read k ends with frame sum(counts[:k+1]) - 1, written at 100 ms + 40 ms x (its index+1).
    for read_at, last in zip(times, itertools.accumulate(counts), strict=True):
        assert read_at - start >= 0.1 + 0.04 * last - 0.002
    assert times[-1] - start < 5 * (0.1 + 0.04 * len(frames))  # generous: a loaded machine


# How each ending reaches each client, per mode. A reset is aborted toward an HTTP/1 client
# with a real TCP RST (the replayer's error hook); a close is mitmproxy's FIN without the chunk
# terminator. Forward mode is TLS: CPython's ssl reports an RST as a ragged EOF
# (SSLEOFError, suppressed by default), so httpx and requests cannot tell it from a FIN there,
# exactly as against a real TLS server; curl (OpenSSL) can over HTTP/1.1. curl prefers h2, but
# these cassettes were recorded over HTTP/1.1, so it is answered over HTTP/1.1 (http_version
# recorded); over HTTP/2 both endings become RST_STREAM (exit 92, tests/replay/test_http_version).
ENDINGS = {
    "recorded-reset": (EndKind.RESET, ()),
    "fault-reset": (EndKind.COMPLETE, ("reset:events=2",)),
    "recorded-close": (EndKind.INCOMPLETE, ()),
    "fault-close": (EndKind.COMPLETE, ("close:events=2",)),
}
SEEN = {  # (mode, reset?) -> httpx, requests, curl (default), curl --http1.1
    ("reverse", True): ("reset", "reset", 56, 56),
    ("reverse", False): ("incomplete", "incomplete", 18, 18),
    ("forward", True): ("incomplete", "incomplete", 56, 56),
    ("forward", False): ("incomplete", "incomplete", 18, 18),
}


def error_kind(error: BaseException) -> str:
    """``reset`` if ECONNRESET is anywhere in the exception chain, else ``incomplete`` when the
    message says the body ended early, else the exception's name."""
    text = []
    e: BaseException | None = error
    while e is not None:
        if isinstance(e, ConnectionResetError):
            return "reset"
        text.append(str(e))
        e = e.__cause__ or e.__context__
    joined = " ".join(text)
    if "incomplete chunked read" in joined or "Response ended prematurely" in joined:
        return "incomplete"
    return type(error).__name__


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_reset_and_close_reach_clients_as_recorded(
    replay_proxy: ReplayTarget, client_env: dict[str, str], tmp_path: Path, ending: str
) -> None:
    """A reset (recorded or fault) is ECONNRESET for HTTP/1 clients, a close an incomplete body."""
    end, faults = ENDINGS[ending]
    frames = sse_frames(3)
    it = replace(interaction(frames, end=end, gap_ms=10), faults=faults)
    store.save(tmp_path / "c.cassette", cassette(it))
    replay_proxy.serve(tmp_path / "c.cassette", allow_repeats=True)
    sent = b"".join(frames[:2] if faults else frames)  # the faults cut after event 2
    want = SEEN[(replay_proxy.mode, "reset" in ending)]
    got: list[bytes] = []
    with httpx.Client(timeout=5) as c, pytest.raises(httpx.TransportError) as err:
        stream_raw(c, replay_proxy.base_url + PATH, BODY, into=got)
    assert (error_kind(err.value), b"".join(got)) == (want[0], sent)
    body = b""
    with pytest.raises(requests.exceptions.RequestException) as rerr:
        r = requests.post(replay_proxy.base_url + PATH, data=BODY, stream=True, timeout=5)
        for chunk in r.iter_content(None):
            body += chunk
    assert (error_kind(rerr.value), body) == (want[1], sent)
    for args, code in (((), want[2]), (("--http1.1",), want[3])):
        curl = run_curl(replay_proxy.base_url + PATH, client_env, *args)
        assert (curl.returncode, curl.stdout) == (code, sent), curl.stderr


def run_curl(url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["curl", "-sS", "-N", *args, "--data-binary", BODY.decode(), url],
        capture_output=True,
        env=env,
        timeout=20,
        check=False,
    )


def test_complete_and_hang_are_not_reset(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """Only reset schedules abort the client: complete flows end cleanly, a hang times out."""
    frames = sse_frames(2)
    complete = interaction(frames, body=b'{"n":1}')
    hang = interaction(frames, body=b'{"n":2}', end=EndKind.HANG)
    replay_proxy.serve(cassette(complete, hang), allow_repeats=True)
    with httpx.Client(timeout=0.5) as c:
        first = c.post(replay_proxy.base_url + PATH, content=b'{"n":1}')
        again = c.post(replay_proxy.base_url + PATH, content=b'{"n":1}')
        assert first.content == again.content == b"".join(frames)
        with pytest.raises(httpx.ReadTimeout):
            c.post(replay_proxy.base_url + PATH, content=b'{"n":2}')


def test_unmatched_request_gets_the_explained_500(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """An unmatched request gets 500 + x-replayproxy-unmatched naming the nearest recording."""
    session = replay_proxy.serve(cassette(interaction([b"data: 1\n\n"], body=b'{"n":1}')))
    r = httpx.post(replay_proxy.base_url + PATH, json={"n": 2}, timeout=5)
    assert r.status_code == 500 and r.headers["x-replayproxy-unmatched"] == "1"
    assert "closest recorded interaction: #0" in r.text and "body at /n" in r.text
    summary = session.summary()
    assert (summary.served, summary.unmatched, summary.unused) == (0, 1, (0,))


def test_nothing_is_resolved_or_contacted(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """Requests for the unresolvable host and for the counting upstream never leave the proxy."""
    it = interaction([b"data: 1\n\n"], url="https://api.openai.invalid" + PATH)
    replay_proxy.serve(cassette(it), allow_repeats=True)
    r = httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=5)
    assert (r.status_code, r.content) == (200, b"data: 1\n\n")
    if replay_proxy.mode == "forward":  # a plain-HTTP request to the counting host, via proxy
        url = f"http://127.0.0.1:{replay_proxy.counter.port}{PATH}"
        r = httpx.post(url, content=BODY, timeout=5)
        assert (r.status_code, r.content) == (200, b"data: 1\n\n")
    assert replay_proxy.counter.connections == 0
    if not replay_proxy.mitmproxy:
        return  # the engine alone: no addons to see flows
    # Later addons see the flow as the client sent it, not the loopback origin.
    url, host_header, has_token = replay_proxy.probe.seen[-1]
    assert not has_token
    if replay_proxy.mode == "forward":
        assert url == f"http://127.0.0.1:{replay_proxy.counter.port}{PATH}"
        assert replay_proxy.probe.seen[-2][0] == f"https://api.openai.invalid{PATH}"
    else:
        assert url == f"http://127.0.0.1:{replay_proxy.counter.port}{PATH}"
        assert host_header == f"127.0.0.1:{replay_proxy.counter.port}"


@pytest.mark.timing
def test_speed_two_halves_gaps_and_zero_removes_them(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """Through the proxy, speed 2 halves a 1.2 s recording (its last frame at 600 ms, not
    before, and well before 1.2 s) and speed 0 serves it at once (well before 600 ms).
    Exact offsets at each speed: test_pacing.py."""
    it = interaction(sse_frames(4), gap_ms=200, head_ms=400)  # the last frame at 1.2 s
    replay_proxy.serve(cassette(it), speed=2)
    with httpx.Client(timeout=5) as c:
        start = time.monotonic()
        with c.stream("POST", replay_proxy.base_url + PATH, content=BODY) as r:
            r.read()
        halved = time.monotonic() - start
    assert 0.6 <= halved < 1.2 + 0.6, halved  # up to 600 ms late on a loaded machine
    slow = interaction(sse_frames(4), gap_ms=1000, head_ms=4000)  # 8 s at speed 1
    replay_proxy.serve(cassette(slow), speed=0)
    start = time.monotonic()
    assert httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=10).status_code == 200
    assert time.monotonic() - start < 2.0  # generous: tens of ms measured; 8 s if timed


def test_socket_reads_through_the_proxy_equal_recorded_frames(
    replay_proxy: ReplayTarget,
) -> None:
    """A raw socket client behind the proxy reads one recorded frame (one chunk) per recv."""
    frames = sse_frames(5, size=33)
    replay_proxy.serve(cassette(interaction(frames, gap_ms=30)), speed=1)
    # Forward mode: an absolute-form request to the proxy (plain HTTP, no CONNECT).
    target = f"http://api.openai.invalid{PATH}" if replay_proxy.mode == "forward" else PATH
    request = b"POST %s HTTP/1.1\r\nHost: api.openai.invalid\r\ncontent-length: %d\r\n\r\n%s" % (
        target.encode(),
        len(BODY),
        BODY,
    )
    head, reads = raw_reads(replay_proxy.proxy.port, request)
    assert head.startswith(b"HTTP/1.1 200")
    expected = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames]
    # Each read whole chunks, never a split one (two may share a read on a loaded machine;
    # the terminator follows the last frame by 1 ms, so it may share the last read).
    assert len(frames_per_read([data for _, data in reads], [*expected, b"0\r\n\r\n"])) > 1


def test_instant_single_write_is_answered_whole_with_bytes_untouched(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """At --speed 0 with coalesce, the response goes out whole (content-length through
    mitmproxy; one chunk from the engine, which always chunks), gzip untouched."""
    body = gzip.compress(b"".join(sse_frames(5)))
    frames = [body[:10], body[10:25], body[25:]]
    headers = (*SSE_HEADERS, (b"content-encoding", b"gzip"), (b"x-recorded", b"yes"))
    it = interaction(frames, headers=headers, gap_ms=1000, head_ms=4000)
    replay_proxy.replayer.use(ReplaySession(cassette(it), speed=0, faults=["coalesce"]))
    start = time.monotonic()
    with (
        httpx.Client(timeout=5) as c,
        c.stream("POST", replay_proxy.base_url + PATH, content=BODY) as r,
    ):
        raw = b"".join(r.iter_raw())
        headers_seen = r.headers
    assert time.monotonic() - start < 2.0  # generous: tens of ms measured; 7 s if timed
    assert raw == body  # the recorded gzip bytes, neither decoded nor re-encoded
    if replay_proxy.mitmproxy:
        assert headers_seen["content-length"] == str(len(body))
        assert "transfer-encoding" not in headers_seen
    else:
        assert headers_seen["transfer-encoding"] == "chunked"
    assert headers_seen["x-recorded"] == "yes"
    # With frames to split, speed 0 still streams them through the origin as chunks.
    replay_proxy.replayer.use(ReplaySession(cassette(it), speed=0))
    with (
        httpx.Client(timeout=5) as c,
        c.stream("POST", replay_proxy.base_url + PATH, content=BODY) as r,
    ):
        assert b"".join(r.iter_raw()) == body
        assert "content-length" not in r.headers
