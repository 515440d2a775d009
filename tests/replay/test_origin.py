"""The replay origin served directly (ReplayServer, no mitmproxy) over real loopback sockets."""

from __future__ import annotations

import gzip
import itertools
import socket
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette.model import EndKind
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.schedule.model import from_interaction, scale
from replayproxy._engine.http1_writer import compile_schedule as _compile
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import SSE_HEADERS, cassette, interaction, sse_frames
from replayproxy.testing.strategies import cuts
from tests.replay.helpers import frames_per_read, raw_reads, stream_raw

BODY = b'{"model":"m","stream":true}'
REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(BODY), BODY)
)


def test_each_frame_is_its_own_chunk_and_read_as_it_is_written() -> None:
    """A raw socket reads whole chunks, one per recorded frame (30 ms apart), streamed: never
    a split one (two may share a read on a loaded machine). Their offsets, exactly:
    test_pacing.py and test_origin_clock.py."""
    frames = sse_frames(6, size=37)
    with ReplayServer(cassette(interaction(frames, gap_ms=30))) as server:
        head, reads = raw_reads(server.port, REQUEST)
    assert b"transfer-encoding: chunked" in head.lower()
    expected = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames]
    # The terminator follows the last frame by 1 ms, so the two may share the last read.
    assert len(frames_per_read([data for _, data in reads], [*expected, b"0\r\n\r\n"])) > 1


def test_httpx_iter_raw_sees_recorded_frame_sizes() -> None:
    """httpx iter_raw yields exactly the recorded frames (sizes and bytes)."""
    frames = [b"data: a\n\n", b'data: {"split', b'": 1}\n\n', b"\xe2\x82", b"\xac\n\n"]
    with ReplayServer(cassette(interaction(frames, gap_ms=20))) as server, httpx.Client() as c:
        got = stream_raw(c, server.url + "/v1/chat/completions", BODY)
    assert got == frames


def test_framing_headers_are_replaced_and_content_encoding_kept() -> None:
    """Recorded content-length/connection go; chunked is sent; gzip bytes arrive untouched."""
    payload = gzip.compress(b"data: hi\n\n" * 20)
    headers = (
        (b"content-type", b"text/event-stream"),
        (b"content-encoding", b"gzip"),
        (b"content-length", b"%d" % len(payload)),
        (b"connection", b"close"),
        (b"x-request-id", b"req_1"),
    )
    it = interaction([payload[:30], payload[30:]], headers=headers, gap_ms=5)
    with (
        ReplayServer(cassette(it), speed=0) as server,
        httpx.Client() as c,
        c.stream("POST", server.url + "/v1/chat/completions", content=BODY) as r,
    ):
        raw = b"".join(r.iter_raw())
        assert r.headers["content-encoding"] == "gzip"
        assert r.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in r.headers and r.headers["x-request-id"] == "req_1"
    assert raw == payload


def test_recorded_reset_is_a_connection_error() -> None:
    """A recorded reset reaches the client as ECONNRESET after the recorded frames."""
    frames = sse_frames(3)
    it = interaction(frames, end=EndKind.RESET, gap_ms=10)
    with ReplayServer(cassette(it)) as server, httpx.Client() as c:
        got: list[bytes] = []
        with pytest.raises(httpx.ReadError):
            stream_raw(c, server.url + "/v1/chat/completions", BODY, into=got)
    assert b"".join(got) == b"".join(frames)


def test_incomplete_body_is_an_incomplete_body_error() -> None:
    """A recorded truncation (FIN without terminator) is an incomplete chunked read."""
    it = interaction(sse_frames(2), end=EndKind.INCOMPLETE, gap_ms=10)
    with (
        ReplayServer(cassette(it)) as server,
        httpx.Client() as c,
        pytest.raises(httpx.RemoteProtocolError, match="incomplete"),
    ):
        stream_raw(c, server.url + "/v1/chat/completions", BODY)


def test_hang_keeps_the_client_waiting() -> None:
    """A hang sends nothing more: the client times out instead of seeing an end."""
    it = interaction(sse_frames(1), end=EndKind.HANG, gap_ms=5)
    with (
        ReplayServer(cassette(it)) as server,
        httpx.Client(timeout=0.5) as c,
        pytest.raises(httpx.ReadTimeout),
    ):
        stream_raw(c, server.url + "/v1/chat/completions", BODY)


def test_no_response_closes_the_connection() -> None:
    """An interaction recorded without a response head just closes the connection."""
    from replayproxy._core.cassette.model import Ending, Interaction, Request

    it = Interaction(
        Request("POST", "https://h/v1/x", body=BODY), None, Ending(EndKind.NO_RESPONSE, 0)
    )
    with (
        ReplayServer(cassette(it)) as server,
        httpx.Client() as c,
        pytest.raises(httpx.RemoteProtocolError, match="without sending"),
    ):
        c.post(server.url + "/v1/x", content=BODY)


def test_keep_alive_and_chunked_request_bodies() -> None:
    """Requests with chunked bodies are read whole; the connection serves several in turn."""
    a = interaction([b"data: 1\n\n"], body=b'{"n":1}')
    b = interaction([b"data: 2\n\n"], body=b'{"n":2}')
    with ReplayServer(cassette(a, b), speed=0) as server, httpx.Client() as c:
        r1 = c.post(server.url + "/v1/chat/completions", content=iter([b'{"n"', b":1}"]))
        r2 = c.post(server.url + "/v1/chat/completions", json={"n": 2})
    assert (r1.content, r2.content) == (b"data: 1\n\n", b"data: 2\n\n")
    assert server.summary().served == 2


def test_unmatched_request_gets_an_explained_500() -> None:
    """An unmatched request gets 500 + x-replayproxy-unmatched and names the nearest miss."""
    misses: list[Miss] = []
    it = interaction([b"data: 1\n\n"], body=b'{"model":"m","n":1}')
    with ReplayServer(cassette(it), on_miss=misses.append) as server, httpx.Client() as c:
        r = c.post(server.url + "/v1/chat/completions", json={"model": "m", "n": 2})
    assert r.status_code == 500 and r.headers["x-replayproxy-unmatched"] == "1"
    assert "#0" in r.text and "/n" in r.text and "POST /v1/chat/completions" in r.text
    assert len(misses) == 1
    summary = server.summary()
    assert (summary.served, summary.unmatched, summary.unused) == (0, 1, (0,))
    assert "0 interactions served, 1 unmatched request," in summary.line()


@pytest.mark.timing
def test_speed_zero_does_not_wait_and_speed_two_halves_gaps() -> None:
    """--speed 0 serves an 8 s recording at once; --speed 2 sends a 1 s one's last frame at
    500 ms, not before and well before 1 s. Exact offsets at each speed: test_pacing.py."""
    slow = interaction(sse_frames(4), gap_ms=1000, head_ms=4000)
    with ReplayServer(cassette(slow), speed=0) as server, httpx.Client(timeout=10) as c:
        start = time.monotonic()
        c.post(server.url + "/v1/chat/completions", content=BODY).raise_for_status()
        assert time.monotonic() - start < 2.0  # generous: ms measured; 8 s if timed
    it = interaction(sse_frames(4), gap_ms=200, head_ms=200)  # the last frame at 1 s
    with ReplayServer(cassette(it), speed=2) as server:
        start = time.monotonic()
        _, reads = raw_reads(server.port, REQUEST)
    last = next(t for t, data in reads if b'"i": 3' in data) - start
    assert 0.5 <= last < 1.0 + 0.5, last  # up to 500 ms late on a loaded machine


@pytest.mark.timing
def test_long_stream_does_not_drift() -> None:
    """Offsets are absolute: 40 frames 10 ms apart end at 400 ms, not before, and not 40
    late wake-ups later (generous: a loaded machine). Drift, exactly: test_pacing.py."""
    it = interaction(sse_frames(40, size=20), gap_ms=10, head_ms=0)
    with ReplayServer(cassette(it)) as server:
        start = time.monotonic()
        _, reads = raw_reads(server.port, REQUEST)
    assert 0.4 <= reads[-1][0] - start < 2.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(min_size=1, max_size=300), min_size=0, max_size=8))
def test_any_frames_arrive_byte_exact(frames: list[bytes]) -> None:
    """Whatever the frame bytes (CRLF, NULs, '0\\r\\n\\r\\n'), the client gets them exactly."""
    it = interaction(frames, headers=SSE_HEADERS, gap_ms=0)
    with ReplayServer(cassette(it), speed=0) as server, httpx.Client() as c:
        got = stream_raw(c, server.url + "/v1/chat/completions", BODY)
    assert b"".join(got) == b"".join(frames)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=8))
def test_speed_zero_keeps_each_recorded_frame_its_own_chunk(frames: list[bytes]) -> None:
    """At speed 0 (one socket write per response) the client still de-chunks every frame."""
    with ReplayServer(cassette(interaction(frames)), speed=0) as server, httpx.Client() as c:
        got = stream_raw(c, server.url + "/v1/chat/completions", BODY)
    assert got == frames


def test_writes_due_at_the_same_instant_share_one_socket_write() -> None:
    """Head, chunks and terminator due at one offset form one write; other offsets do not."""
    frames = [b"data: a\n\n", b"data: b\n\n", b"data: c\n\n"]
    chunks = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames]
    it = interaction(frames, gap_ms=20)
    instant = scale(from_interaction(it), 0)
    [(at, data)] = _compile(instant, "POST").steps
    assert at == 0
    assert data.endswith(b"\r\n\r\n" + b"".join(chunks) + b"0\r\n\r\n")
    timed = _compile(from_interaction(it), "POST").steps
    assert [d for _, d in timed[1:4]] == chunks  # one write per frame
    # The terminator is due 1 ms after the last frame: a write of its own.
    assert timed[4:] == ((from_interaction(it).finish.at_ns, b"0\r\n\r\n"),)
    assert _compile(instant, "HEAD").steps[0][1].endswith(b"\r\n\r\n")  # no body for HEAD
    assert len(_compile(instant, "HEAD").steps) == 1


def test_a_missing_cassette_fails_before_listening(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A missing or corrupt cassette raises a one-line CassetteError from the constructor."""
    from replayproxy._errors import CassetteError

    with pytest.raises(CassetteError, match="no such cassette"):
        ReplayServer(tmp_path / "nope.cassette")
    bad = tmp_path / "bad.cassette"
    bad.write_bytes(b"\x00garbage")
    with pytest.raises(CassetteError):
        ReplayServer(bad)


def test_replay_time_fault_is_applied() -> None:
    """--fault reset:events=2 cuts a 4-event stream after 2 events with a connection error."""
    frames = sse_frames(4)
    it = interaction(frames, gap_ms=5)
    got: list[bytes] = []
    with (
        ReplayServer(cassette(it), speed=0, faults=["reset:events=2"]) as server,
        httpx.Client() as c,
        pytest.raises(httpx.ReadError),
    ):
        stream_raw(c, server.url + "/v1/chat/completions", BODY, into=got)
    assert b"".join(got) == b"".join(frames[:2])


def test_a_fault_that_cannot_apply_is_explained() -> None:
    """A fault past the end of the stream answers 500 saying why, and counts as unmatched."""
    it = interaction(sse_frames(2), gap_ms=5)
    with ReplayServer(cassette(it), speed=0, faults=["reset:events=9"]) as server:
        r = httpx.post(server.url + "/v1/chat/completions", content=BODY)
    assert r.status_code == 500 and r.headers["x-replayproxy-unmatched"] == "1"
    assert "cannot serve POST /v1/chat/completions" in r.text and "events=9" in r.text
    assert server.summary().unmatched == 1


def test_garbage_does_not_stop_the_server() -> None:
    """A malformed request gets a 400 saying why, then only its own connection closes; the
    next client is served."""
    it = interaction([b"data: 1\n\n"])
    with ReplayServer(cassette(it), speed=0) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"NONSENSE\r\n\r\n")
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 400 ")
            assert b"malformed request line" in reply
        r = httpx.post(server.url + "/v1/chat/completions", content=BODY)
    assert (r.status_code, r.content) == (200, b"data: 1\n\n")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts(len(REQUEST), max_cuts=6))
def test_a_request_split_anywhere_is_read_whole(cuts: list[int]) -> None:
    """However the request bytes are split across writes, the origin reads the same request."""
    pieces = [REQUEST[a:b] for a, b in itertools.pairwise([0, *cuts, len(REQUEST)])]
    it = interaction([b"data: 1\n\n"], gap_ms=0, head_ms=0)
    with (
        ReplayServer(cassette(it), speed=0) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(0.001)
        reply = b""
        while not reply.endswith(b"0\r\n\r\n"):
            data = sock.recv(65536)
            assert data, reply
            reply += data
    assert reply.startswith(b"HTTP/1.1 200 OK\r\n")
    assert server.summary().served == 1


def test_expect_100_continue_and_bodyless_statuses() -> None:
    """Expect: 100-continue gets its interim response; a recorded 204 is sent without a body."""
    it = interaction([], status=204, headers=((b"content-length", b"0"),), body=b'{"big":1}')
    with (
        ReplayServer(cassette(it), speed=0) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        body = b'{"big":1}'
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        reply = sock.recv(1000)
    assert reply.startswith(b"HTTP/1.1 204 No Content\r\n")
    assert reply.endswith(b"\r\n\r\n") and b"transfer-encoding" not in reply.lower()
    assert b"content-length" not in reply.lower()
