"""The simulator seen by curl: raw chunk framing, pacing, HTTPS with the CA file, real RST."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from replayproxy.testing import STREAMS, Simulator

CURL = shutil.which("curl")
pytestmark = pytest.mark.skipif(CURL is None, reason="curl not installed")


def _curl(*args: str) -> subprocess.CompletedProcess[bytes]:
    assert CURL is not None
    return subprocess.run([CURL, "-sS", "--max-time", "20", *args], capture_output=True, timeout=30)


def _chunks(raw: bytes) -> list[bytes]:
    """Split a raw chunked body (curl --raw) into chunk payloads; asserts the terminator."""
    out = []
    pos = 0
    while True:
        m = re.compile(rb"([0-9a-fA-F]+)\r\n").match(raw, pos)
        assert m, raw[pos : pos + 40]
        size = int(m.group(1), 16)
        if size == 0:
            assert raw[m.end() :] == b"\r\n"
            return out
        out.append(raw[m.end() : m.end() + size])
        assert raw[m.end() + size : m.end() + size + 2] == b"\r\n"
        pos = m.end() + size + 2


def test_curl_sees_one_chunk_per_event_with_gaps(simulator: Simulator) -> None:
    """curl --raw shows exactly one HTTP chunk per event, spread over the configured gaps."""
    events = STREAMS["anthropic-text"].events
    t0 = time.monotonic()
    r = _curl("--raw", "-H", "x-sim-gap-ms: 40", "-d", "{}", simulator.url + "/v1/messages")
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert _chunks(r.stdout) == list(events)
    assert 0.8 * 0.04 * (len(events) - 1) < elapsed < 10


def test_curl_gemini_alt_sse(simulator: Simulator) -> None:
    """curl receives the Gemini stream with its CRLF framing intact."""
    url = simulator.url + "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    r = _curl("-N", "-d", "{}", url)
    assert r.returncode == 0, r.stderr
    assert r.stdout == STREAMS["gemini-text"].body
    assert r.stdout.count(b"\r\n\r\n") == len(STREAMS["gemini-text"].events)


def test_curl_https_with_ca_file(tls_simulator: Simulator, ca_pem: Path) -> None:
    """curl verifies the TLS simulator's certificate against the trustme CA file."""
    r = _curl("--cacert", str(ca_pem), "-d", '{"stream":true}', tls_simulator.url + "/v1/responses")
    assert r.returncode == 0, r.stderr
    assert r.stdout == STREAMS["openai-responses"].body
    bad = _curl("-d", "{}", tls_simulator.url + "/v1/responses")  # without the CA
    assert bad.returncode == 60  # CURLE_PEER_FAILED_VERIFICATION


@pytest.mark.parametrize("tls", [False, True])
def test_curl_sees_real_reset(make_simulator: object, ca_pem: Path, tls: bool) -> None:
    """reset_after is a real TCP RST (curl: 'Connection reset by peer'), over HTTP and HTTPS."""
    sim = make_simulator(tls=tls)  # type: ignore[operator]
    r = _curl("--cacert", str(ca_pem), "-H", "x-sim-reset-after: 2", "-d", "{}",
              sim.url + "/v1/messages")  # fmt: skip
    assert r.returncode == 56, r.stderr
    assert b"reset by peer" in r.stderr
    assert r.stdout == b"".join(STREAMS["anthropic-text"].events[:2])


def test_curl_close_is_partial_transfer(simulator: Simulator) -> None:
    """close_after ends the body without the chunked terminator: curl reports exit 18."""
    r = _curl("-H", "x-sim-close-after: 4", "-d", "{}", simulator.url + "/v1/messages")
    assert r.returncode == 18, r.stderr
    assert r.stdout == b"".join(STREAMS["anthropic-text"].events[:4])
