"""HTTP/2 in base-URL mode: the replay engine serves h2c (prior knowledge) beside HTTP/1.1.

Frames are counted with a raw-socket ``h2`` client of our own (tests/replay/h2probe.py); curl
and httpx are the clients nobody here wrote. Each recorded write is its own DATA frame, split
only where the client's window or frame size forces it; streams run concurrently on one
connection; faults end a stream as mitmproxy's HTTP/2 layer does in forward mode; a miss gets
the explained 500; a TLS client on the plain listener is refused at once with one log line.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind, Request
from replayproxy._engine.http2 import dispatch
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import CHAT_BODY, CHAT_URL, cassette, interaction, no_response
from tests.replay.h2probe import H2Probe, Reply

PATH = "/v1/chat/completions"
INTERNAL_ERROR = 2  # RFC 9113 §7
WRITES = [b"data: 1\n\n", b"d", b"ata: 2\n\n", b"x" * 40000, b"data: [DONE]\n\n"]


def _chat(chunks: list[bytes], **kw: object) -> ReplayServer:
    return ReplayServer(cassette(interaction(chunks)), speed=0, **kw)  # type: ignore[arg-type]


def _ask(probe: H2Probe, path: str, body: bytes = b"", **kw: str) -> Reply:
    """One request on the probe's connection, read to its end."""
    stream = probe.request(path, body, **kw)
    return probe.read()[stream]


def test_each_recorded_write_is_its_own_data_frame() -> None:
    """A 1-byte write, a write split mid-event and a 40,000-byte write each arrive as their own
    DATA frames; only the big one is split, at the client's 16 KiB frame size."""
    with _chat(WRITES) as server, H2Probe(server.port) as probe:
        stream = probe.request(PATH, CHAT_BODY)
        reply = probe.read()[stream]
    assert reply.status == 200 and reply.ended
    assert reply.headers[b"content-type"] == b"text/event-stream"
    assert b"content-length" not in reply.headers
    assert reply.frames == [*WRITES[:3], b"x" * 16384, b"x" * 16384, b"x" * 7232, WRITES[4]]


def test_flow_control_holds_the_write_until_the_window_opens() -> None:
    """With a 4-byte window and no updates the client gets 4 bytes and nothing more; each
    WINDOW_UPDATE lets exactly that much through; the rest of the write then ends the stream."""
    with _chat([b"0123456789"]) as server, H2Probe(server.port, window=4, auto_ack=False) as probe:
        stream = probe.request(PATH, CHAT_BODY)
        reply = probe.read(idle=0.5)[stream]
        assert reply.frames == [b"0123"] and not reply.done
        probe.open(stream, 3)
        probe.read(idle=0.5)
        assert reply.frames == [b"0123", b"456"] and not reply.done
        probe.open(stream, 100)
        probe.read()
    assert reply.frames == [b"0123", b"456", b"789"] and reply.ended


def test_streams_on_one_connection_are_served_concurrently() -> None:
    """Two requests on one connection: both streams are paced at once (the second's first frame
    arrives before the first's last), each with exactly its own frames."""
    a = interaction([b"a1", b"a2", b"a3"], body=b'{"n":1}', head_ms=0, at_ms=[0, 400, 800])
    b = interaction([b"b1", b"b2"], body=b'{"n":2}', head_ms=0, at_ms=[200, 600])
    with ReplayServer(cassette(a, b)) as server, H2Probe(server.port) as probe:
        first = probe.request(PATH, b'{"n":1}')
        second = probe.request(PATH, b'{"n":2}')
        replies = probe.read()
    assert replies[first].frames == [b"a1", b"a2", b"a3"] and replies[first].ended
    assert replies[second].frames == [b"b1", b"b2"] and replies[second].ended
    assert replies[second].times[0] < replies[first].times[-1]


@pytest.mark.timing
def test_recorded_gaps_are_kept() -> None:
    """At speed 1 the frames keep their recorded 1 s gap (generous bounds: a loaded machine)."""
    it = interaction([b"data: 1\n\n", b"data: 2\n\n"], gap_ms=1000)
    with ReplayServer(cassette(it)) as server, H2Probe(server.port) as probe:
        stream = probe.request(PATH, CHAT_BODY)
        reply = probe.read()[stream]
    assert 0.5 < reply.times[1] - reply.times[0] < 5


@pytest.mark.parametrize("fault", ["reset:events=1", "close:events=1"])
def test_reset_and_close_end_the_stream_with_rst_stream_internal_error(fault: str) -> None:
    """After the frames before the position, RST_STREAM INTERNAL_ERROR on that stream (what
    mitmproxy sends an HTTP/2 client for either); the connection serves the next stream."""
    chunks = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"]
    with _chat(chunks, faults=[fault], allow_repeats=True) as server, H2Probe(server.port) as p:
        stream = p.request(PATH, CHAT_BODY)
        reply = p.read()[stream]
        assert (reply.frames, reply.reset, reply.ended) == (chunks[:1], INTERNAL_ERROR, False)
        again = p.request(PATH, CHAT_BODY)
        assert p.read()[again].reset == INTERNAL_ERROR
        assert p.goaway is None


def test_a_recorded_reset_is_rst_stream_too() -> None:
    """A reset recorded in the cassette (not a fault) ends the stream the same way."""
    it = interaction([b"data: 1\n\n"], end=EndKind.RESET)
    with ReplayServer(cassette(it), speed=0) as server, H2Probe(server.port) as probe:
        reply = _ask(probe, PATH, CHAT_BODY)
    assert (reply.frames, reply.reset) == ([b"data: 1\n\n"], INTERNAL_ERROR)


def test_no_response_is_rst_stream_without_a_head() -> None:
    """A recording with no response at all: RST_STREAM INTERNAL_ERROR and no HEADERS (over
    HTTP/1.1 the connection would close; here the connection goes on)."""
    it = no_response(Request("POST", CHAT_URL, body=CHAT_BODY))
    with ReplayServer(cassette(it), speed=0) as server, H2Probe(server.port) as probe:
        reply = _ask(probe, PATH, CHAT_BODY)
    assert (reply.status, reply.frames, reply.reset) == (None, [], INTERNAL_ERROR)
    assert probe.goaway is None


def test_hang_sends_no_more_frames_and_keeps_the_stream_open() -> None:
    """``hang``: the frames before the position, then nothing (no END_STREAM, no reset) until
    the client gives up; the client's RST_STREAM ends it and the connection goes on."""
    chunks = [b"data: 1\n\n", b"data: 2\n\n"]
    server = _chat(chunks, faults=["hang:events=1"], allow_repeats=True)
    with server, H2Probe(server.port) as probe:
        stream = probe.request(PATH, CHAT_BODY)
        reply = probe.read(idle=0.5)[stream]
        assert reply.frames == chunks[:1] and not reply.done
        probe.reset(stream)
        probe.replies.pop(stream)
        again = probe.request(PATH, CHAT_BODY)
        assert probe.read(idle=0.5)[again].frames == chunks[:1]


def test_truncate_and_status_are_clean_ends() -> None:
    """``truncate`` ends the stream cleanly without the terminal event; ``status`` answers
    with the recorded-provider error status and body, as over HTTP/1.1."""
    chunks = [b"data: 1\n\n", b"data: [DONE]\n\n"]
    with _chat(chunks, faults=["truncate"]) as server, H2Probe(server.port) as probe:
        reply = _ask(probe, PATH, CHAT_BODY)
    assert (reply.frames, reply.ended) == (chunks[:1], True)
    with _chat(chunks, faults=["status:code=529"]) as server, H2Probe(server.port) as probe:
        reply = _ask(probe, PATH, CHAT_BODY)
    assert reply.status == 529 and reply.ended
    assert b"Overloaded" in reply.body


def test_a_miss_over_h2_gets_the_explained_500() -> None:
    """An unmatched request gets the same explained 500 as over HTTP/1.1, counted as a miss."""
    with _chat([b"data: 1\n\n"]) as server:
        with H2Probe(server.port) as probe:
            reply = _ask(probe, "/v1/other", CHAT_BODY)
        http1 = httpx.post(server.url + "/v1/other", content=CHAT_BODY, timeout=10)
        assert server.summary().unmatched == 2
    assert reply.status == 500 and reply.ended
    assert reply.headers[b"x-replayproxy-unmatched"] == b"1"
    assert (
        reply.headers[b"x-replayproxy-explanation"].decode()
        == http1.headers["x-replayproxy-explanation"]
    )
    assert b"path: recorded /v1/chat/completions, requested /v1/other" in reply.body


def test_a_failure_over_h2_gets_the_explained_500(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay failing inside the engine answers the stream with the fail-closed 500."""

    async def broken(*args: object) -> object:
        raise RuntimeError("planted")

    monkeypatch.setattr("replayproxy._engine.origin.resolving.resolve", broken)
    server = _chat([b"data: 1\n\n"], on_error=lambda failure: None)
    with server, H2Probe(server.port) as probe:
        reply = _ask(probe, PATH, CHAT_BODY)
    assert reply.status == 500 and reply.headers[b"x-replayproxy-error"] == b"1"
    assert b"RuntimeError: planted" in reply.body


def test_the_recorded_request_matches_by_url_over_h2() -> None:
    """An h2 request is matched as if sent to the upstream stood in for, like HTTP/1.1."""
    it = interaction([b"ok"], request=Request("GET", "https://api.example.invalid/v1/models"))
    with ReplayServer(
        cassette(it), speed=0, upstream="https://api.example.invalid", match_host=True
    ) as server, H2Probe(server.port) as probe:  # fmt: skip
        reply = _ask(probe, "/v1/models", method="GET")
    assert (reply.status, reply.frames) == (200, [b"ok"])


# -- the first-bytes dispatch --------------------------------------------------------------------


def test_a_tls_client_is_refused_at_once_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A TLS handshake on the plain listener fails at once (no hang) and the log says why."""
    caplog.set_level(logging.WARNING, logger=dispatch.log.name)
    with _chat([b"data: 1\n\n"]) as server:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        started = time.monotonic()
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        with raw, pytest.raises((ssl.SSLError, ConnectionError)):
            context.wrap_socket(raw, server_hostname="127.0.0.1")
        assert time.monotonic() - started < 5
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    (line,) = [r.getMessage() for r in caplog.records if r.name == dispatch.log.name]
    assert line.startswith(f"replayproxy: a TLS connection to the plain-HTTP listener {server.url}")
    assert "http://" in line and "forward mode" in line


def _raw_http1(port: int, pieces: list[bytes], *, half_close: bool = False) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        for piece in pieces:
            s.sendall(piece)
            time.sleep(0.05)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    return got


def test_http1_bytes_that_begin_like_the_preface_are_still_http1() -> None:
    """A request line sent a byte at a time (``P`` could start ``PRI``), then the rest, and
    a request sent whole before the client half-closes: both are read as HTTP/1.1."""
    head = (
        b"POST " + PATH.encode() + b" HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n" % len(CHAT_BODY)
    )
    with _chat([b"data: 1\n\n"], allow_repeats=True) as server:
        split = _raw_http1(server.port, [b"P", b"O", head[2:] + CHAT_BODY])
        half = _raw_http1(server.port, [head + CHAT_BODY], half_close=True)
    for got in (split, half):
        assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"9\r\ndata: 1\n\n\r\n0\r\n\r\n")


def test_a_preface_sent_in_pieces_is_h2() -> None:
    """The 24-byte preface split across reads is still recognised."""
    with _chat([b"data: 1\n\n"]) as server, H2Probe(server.port) as probe:
        stream = probe.request(PATH, CHAT_BODY)
        reply = probe.read()[stream]
    assert reply.frames == [b"data: 1\n\n"]
    server = _chat([b"data: 1\n\n"])
    with server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"PRI * HTTP/2.0\r\n")
        time.sleep(0.1)
        s.sendall(b"\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        frame = s.recv(9)
    assert frame[3] == 0x04  # the server's SETTINGS frame: served as HTTP/2


# -- clients nobody here wrote, against the CLI ----------------------------------------------------

CLIENTS = """
import os, subprocess, httpx
url = os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions'
body = '{"model":"m","stream":true}'
r = subprocess.run(['curl', '-sS', '-N', '--http2-prior-knowledge', '--data-binary', body,
                    '-w', ' %{http_version}', url], capture_output=True, text=True)
print('curl', r.returncode, repr(r.stdout), r.stderr.strip())
with httpx.Client(http1=False, http2=True) as client:
    try:
        with client.stream('POST', url, content=body) as resp:
            print('httpx', resp.http_version, repr(b''.join(resp.iter_raw())))
    except httpx.HTTPError as e:
        print('httpx', type(e).__name__, e)
"""


def _replay_cli(path: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", "from replayproxy._cli import main; main()", "replay", str(path),
         "--upstream", "https://api.openai.invalid", "--listen", "127.0.0.1:0", "--speed", "0",
         "--allow-repeats",
         *args, "--", sys.executable, "-c", CLIENTS],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    return done.stdout.splitlines()[1:]


def test_curl_and_httpx_with_prior_knowledge_get_the_recording(tmp_path: Path) -> None:
    """``replayproxy replay --upstream``: curl --http2-prior-knowledge and httpx http1=False
    get the recorded body over HTTP/2; with ``--fault reset:events=1`` both report the stream
    error (curl exit 92 INTERNAL_ERROR, httpx RemoteProtocolError) after the first event."""
    path = tmp_path / "chat.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n", b"data: 2\n\n"])))
    assert _replay_cli(path) == [
        "curl 0 'data: 1\\n\\ndata: 2\\n\\n 2' ",
        "httpx HTTP/2 b'data: 1\\n\\ndata: 2\\n\\n'",
    ]
    curl, client = _replay_cli(path, "--fault", "reset:events=1")
    assert curl.startswith("curl 92 'data: 1\\n\\n 2' ")
    assert "HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR" in curl
    assert client.startswith("httpx RemoteProtocolError ") and "error_code:2" in client
