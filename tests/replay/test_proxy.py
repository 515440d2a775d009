"""Replay through mitmproxy, forward (HTTPS_PROXY + CA) and reverse (base URL) modes.

Each test runs in both modes (the ``replay_proxy`` fixture); the upstream the proxy stands in
for counts connections and must see none, and the forward-mode host does not resolve.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest
import requests

from replayproxy import store
from replayproxy.core.model import EndKind
from tests.replay.conftest import ReplayTarget
from tests.replay.helpers import cassette, gaps, interaction, raw_reads, sse_frames, stream_raw

BODY = b'{"model":"m","stream":true}'
PATH = "/v1/chat/completions"


def test_frames_arrive_as_recorded_chunks_at_recorded_gaps(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """httpx iter_raw through the proxy yields the recorded frames at the recorded gaps."""
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
    assert got == frames
    assert 0.08 < times[0] - start < 0.6  # TTFB 100 ms + first gap 40 ms
    for gap in gaps(times):
        assert 0.02 < gap < 0.3


def test_recorded_reset_is_a_connection_error(
    replay_proxy: ReplayTarget, client_env: dict[str, str], tmp_path: Path
) -> None:
    """A recorded reset is a transport error for httpx, requests and curl, never a clean end."""
    frames = sse_frames(3)
    it = interaction(frames, end=EndKind.RESET, gap_ms=10)
    store.save(tmp_path / "reset.cassette", cassette(it))
    replay_proxy.serve(tmp_path / "reset.cassette", allow_repeats=True)
    got: list[bytes] = []
    with httpx.Client(timeout=5) as c, pytest.raises(httpx.TransportError):
        stream_raw(c, replay_proxy.base_url + PATH, BODY, into=got)
    assert b"".join(got) == b"".join(frames)
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        r = requests.post(replay_proxy.base_url + PATH, data=BODY, stream=True, timeout=5)
        b"".join(r.iter_content(None))
    curl = run_curl(replay_proxy.base_url + PATH, client_env)
    # 18: transfer closed with outstanding data (HTTP/1.1); 92: HTTP/2 stream error (forward
    # mode, where curl negotiates h2 with mitmproxy and gets RST_STREAM).
    assert curl.returncode in (18, 56, 92), curl.stderr
    assert curl.stdout == b"".join(frames)


def run_curl(url: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["curl", "-sS", "-N", "--data-binary", BODY.decode(), url],
        capture_output=True,
        env=env,
        timeout=20,
        check=False,
    )


def test_incomplete_body_is_an_incomplete_body_error(
    replay_proxy: ReplayTarget, client_env: dict[str, str], tmp_path: Path
) -> None:
    """A recorded truncation (FIN, no terminator) is an incomplete-body error."""
    it = interaction(sse_frames(2), end=EndKind.INCOMPLETE, gap_ms=10)
    store.save(tmp_path / "truncated.cassette", cassette(it))
    replay_proxy.serve(tmp_path / "truncated.cassette")
    with (
        httpx.Client(timeout=5) as c,
        pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"),
    ):
        stream_raw(c, replay_proxy.base_url + PATH, BODY)


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
    assert replay_proxy.counter.count == 0
    # Later addons see the flow as the client sent it, not the loopback origin.
    url, host_header, has_token = replay_proxy.probe.seen[-1]
    assert not has_token
    if replay_proxy.mode == "forward":
        assert url == f"http://127.0.0.1:{replay_proxy.counter.port}{PATH}"
        assert replay_proxy.probe.seen[-2][0] == f"https://api.openai.invalid{PATH}"
    else:
        assert url == f"http://127.0.0.1:{replay_proxy.counter.port}{PATH}"
        assert host_header == f"127.0.0.1:{replay_proxy.counter.port}"


def test_speed_two_halves_gaps_and_zero_removes_them(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """Through the proxy, speed 2 halves 200 ms gaps and speed 0 serves at once."""
    it = interaction(sse_frames(4), gap_ms=200, head_ms=400)
    replay_proxy.serve(cassette(it), speed=2)
    times = []
    with (
        httpx.Client(timeout=5) as c,
        c.stream("POST", replay_proxy.base_url + PATH, content=BODY) as r,
    ):
        for _ in r.iter_raw():
            times.append(time.monotonic())
    assert len(times) == 4
    # Three gaps of 200 ms, halved: 300 ms in all (600 ms if speed were ignored).
    assert 0.2 < times[-1] - times[0] < 0.5
    replay_proxy.serve(cassette(it), speed=0)
    start = time.monotonic()
    assert httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=5).status_code == 200
    assert time.monotonic() - start < 0.35


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
    chunks = [data for _, data in reads]
    expected = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames]
    # The terminator follows the last frame by 1 ms, so the two may share the last read.
    assert chunks[: len(frames) - 1] == expected[:-1]
    assert chunks[len(frames) - 1].startswith(expected[-1])
