"""The origin's HTTP/1.1 request reader and connection handling, byte for byte.

Two ways in: ``read_request`` fed a real ``asyncio.StreamReader`` (the exact Request it
reads, or the exact reason it refuses), and the real ``Origin`` over a socketpair or loopback
TCP (the exact bytes a client gets back: a 400 naming the problem, ``100 Continue``, one
response per request, the connection closed when it should be).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.sync.client import connect

from replayproxy._core.cassette.model import Cassette, Request
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.replay.upstream import base_of as _base_of
from replayproxy._core.replay.upstream import on_upstream as _on_upstream
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._engine.http1_reader import MAX_HEAD, BadRequest, StampedReader, read_request
from replayproxy._engine.origin import (
    TOKEN_HEADER,
    WRITE_BUFFER_HIGH,
    Origin,
)
from replayproxy._engine.pacing import ABSORB_MAX, clock_start
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy.testing import CHAT_URL, MS, cassette, interaction, realtime_turns, ws_interaction
from tests.replay.test_origin_clock import exchange, pipelined, plain_exchange, schedule
from tests.replay.virtual_time import VirtualClock, run_virtual


async def _read(data: bytes) -> tuple[Request | str | None, bytes, bytes]:
    """Feed ``data`` to a StreamReader (origin's head limit) and read one request from it:
    (the Request, None, or the refusal's reason), what the reader wrote back, and what is left
    unread in the stream."""
    a, b = socket.socketpair()
    peer, peer_writer = await asyncio.open_connection(sock=a)
    _, writer = await asyncio.open_connection(sock=b)
    reader = asyncio.StreamReader(limit=MAX_HEAD)
    reader.feed_data(data)
    reader.feed_eof()
    result: Request | str | None
    try:
        result = await read_request(reader, writer)
    except BadRequest as e:
        result = str(e)
    await writer.drain()
    writer.close()
    sent = await peer.read()
    peer_writer.close()
    return result, sent, await reader.read()


def read(data: bytes) -> tuple[Request | str | None, bytes, bytes]:
    return asyncio.run(_read(data))


def test_a_request_is_read_field_for_field() -> None:
    """Method, target made absolute with the Host header, version, headers in order with
    their case and surrounding spaces trimmed, and exactly Content-Length bytes of body."""
    got, sent, rest = read(
        b"POST /v1/chat?q=1 HTTP/1.1\r\nHost: api.example.test:8080\r\n"
        b"X-Multi:  a:b  \r\nContent-Length: 2\r\n\r\n{}NEXT"
    )
    assert got == Request(
        "POST",
        "http://api.example.test:8080/v1/chat?q=1",
        "HTTP/1.1",
        ((b"Host", b"api.example.test:8080"), (b"X-Multi", b"a:b"), (b"Content-Length", b"2")),
        b"{}",
    )
    assert (sent, rest) == (b"", b"NEXT")


@pytest.mark.parametrize(
    ("head", "url"),
    [
        (b"GET /x HTTP/1.1\r\n", "http://127.0.0.1/x"),  # no Host: the origin's own address
        (b"GET http://up.test/x HTTP/1.1\r\nHost: other\r\n", "http://up.test/x"),
        (b"GET /x HTTP/1.1\r\nhOsT: h\r\n", "http://h/x"),  # header names in any case
    ],
    ids=["no host", "absolute-form target", "host in any case"],
)
def test_the_url_of_a_request(head: bytes, url: str) -> None:
    """The URL is the absolute target as sent, or the Host (default 127.0.0.1) plus the path."""
    got, _, _ = read(head + b"\r\n")
    assert isinstance(got, Request)
    assert (got.url, got.body) == (url, b"")


def test_the_request_line_keeps_spaces_in_its_last_part_and_reads_latin_1() -> None:
    """The request line splits at its first two spaces; bytes are latin-1 (never an error)."""
    got, _, _ = read(b"GET /caf\xe9 HTTP/1.1 extra\r\nhost: h\r\n\r\n")
    assert isinstance(got, Request)
    assert (got.method, got.url, got.http_version) == ("GET", "http://h/caf\xe9", "HTTP/1.1 extra")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"NONSENSE\r\n\r\n", "malformed request line b'NONSENSE'"),
        (b"GET /\r\nhost: h\r\n\r\n", "malformed request line b'GET /'"),
        (b"GET " + b"a" * 200 + b"\r\n\r\n", "malformed request line b'GET " + "a" * 76 + "'"),
        (b"GET\t/ HTTP/1.1\r\n\r\n", "malformed request line b'GET\\t/ HTTP/1.1'"),
        (b"GET / HTTP/1.1\r\nhost: h\r\nno colon\r\n\r\n", "malformed header line b'no colon'"),
        (b"GET / HTTP/1.1\r\n: empty name\r\n\r\n", "malformed header line b': empty name'"),
        (b"GET / HTTP/1.1\r\n  : v\r\n\r\n", "malformed header line b'  : v'"),
        (b"GET / HTTP/1.1\r\n" + b"x" * 100 + b"\r\n\r\n", f"malformed header line {b'x' * 80!r}"),
        (b"GET / HTTP/1.1\r\nhost: h\r\n", "connection closed inside a request head"),
        (b"G", "connection closed inside a request head"),
        (b"\r\n\r\nGET", "malformed request line b''"),
        (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "malformed or truncated request body"),
        (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "malformed or truncated request body"),
        (b"GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc", "malformed or truncated request body"),
        (
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
            "malformed or truncated request body",
        ),
        (
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            "malformed or truncated request body",
        ),
        (
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",
            "malformed or truncated request body",
        ),
        (
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-trailer: 1\r\n",
            "malformed or truncated request body",
        ),
    ],
    ids=[
        "one word",
        "two words",
        "long request line cut at 80 bytes",
        "a tab between the parts",
        "header line without a colon",
        "header line with an empty name",
        "header line with a blank name",
        "long header line cut at 80 bytes",
        "closed inside the head",
        "closed after one byte",
        "a blank line first",
        "content-length not a number",
        "content-length negative",
        "body shorter than content-length",
        "chunk size not hex",
        "closed inside a chunk",
        "closed before the last chunk",
        "closed inside the trailers",
    ],
)
def test_what_cannot_be_read_is_refused_with_its_reason(data: bytes, reason: str) -> None:
    """Each way a request can be malformed or cut short is refused with its own reason."""
    got, sent, _ = read(data)
    assert (got, sent) == (reason, b"")


@pytest.mark.parametrize("data", [b"", b"\r\n", b" \r\n\t"])
def test_a_peer_closing_between_requests_is_not_an_error(data: bytes) -> None:
    """Nothing (or only blank space) before the end of the stream: no request, no error."""
    assert read(data) == (None, b"", b"")


def test_a_head_over_the_limit_is_refused() -> None:
    """A head that does not end within the limit is refused naming the limit."""
    got, _, _ = read(b"GET / HTTP/1.1\r\nx: " + b"a" * MAX_HEAD + b"\r\n\r\n")
    assert got == f"request head larger than {MAX_HEAD // 1024} KiB"


def test_a_head_just_within_the_limit_is_read() -> None:
    """A head of exactly the limit (its blank line included) is still a request."""
    line = b"GET / HTTP/1.1\r\nx: "
    got, _, _ = read(line + b"a" * (MAX_HEAD - len(line) - 4) + b"\r\n\r\n")
    assert isinstance(got, Request)
    assert len(got.headers[0][1]) == MAX_HEAD - len(line) - 4


@pytest.mark.parametrize(
    ("expect", "sent"),
    [
        (b"Expect: 100-continue\r\n", b"HTTP/1.1 100 Continue\r\n\r\n"),
        (b"EXPECT: 100-Continue\r\n", b"HTTP/1.1 100 Continue\r\n\r\n"),
        (b"Expect: 100-continue-please\r\n", b""),
        (b"", b""),
    ],
    ids=["expect", "expect in other case", "another expectation", "no expect"],
)
def test_expect_100_continue_is_answered_before_the_body(expect: bytes, sent: bytes) -> None:
    """`Expect: 100-continue` (any case) gets the interim response, written before the body is
    awaited; anything else gets nothing."""

    async def main() -> tuple[Request | str | None, bytes, bytes]:
        # The body is not there yet: the interim response must not wait for it.
        head = b"POST / HTTP/1.1\r\nhost: h\r\n" + expect + b"content-length: 2\r\n\r\n"
        a, b = socket.socketpair()
        peer, peer_writer = await asyncio.open_connection(sock=a)
        _, writer = await asyncio.open_connection(sock=b)
        reader = asyncio.StreamReader(limit=MAX_HEAD)
        reader.feed_data(head)
        task = asyncio.create_task(read_request(reader, writer))
        interim = b""
        if sent:
            interim = await asyncio.wait_for(peer.readexactly(len(sent)), 5)
        await asyncio.sleep(0)
        assert not task.done()
        reader.feed_data(b"{}")
        got = await task
        writer.close()
        rest = await peer.read()
        peer_writer.close()
        return got, interim + rest, b""

    got, written, _ = asyncio.run(main())
    assert isinstance(got, Request) and got.body == b"{}"
    assert written == sent


@pytest.mark.parametrize(
    ("encoding", "body", "read_as"),
    [
        (b"chunked", b"5\r\nhello\r\n0\r\n\r\n", b"hello"),
        (b"Chunked", b"5\r\nhello\r\n0\r\n\r\n", b"hello"),
        (
            b"chunked",
            b"A\r\n0123456789\r\nf\r\n" + b"y" * 15 + b"\r\n0\r\n\r\n",
            b"0123456789" + b"y" * 15,
        ),
        (b"chunked", b"3;ext=1\r\nabc\r\n0;done\r\na: 1\r\nb: 2\r\n\r\n", b"abc"),
        (b"chunked", b"3;a=1;b=2\r\nabc\r\n0\r\n\r\n", b"abc"),
        (b"chunked", b"0\r\n\r\n", b""),
    ],
    ids=[
        "chunked",
        "any case",
        "hex sizes",
        "extensions and trailers",
        "two extensions on one size line",
        "empty",
    ],
)
def test_a_chunked_body_is_read_to_its_end(encoding: bytes, body: bytes, read_as: bytes) -> None:
    """A chunked body is joined from its chunks (hex sizes, extensions and trailers skipped)
    and nothing after its end is consumed."""
    got, _, rest = read(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: " + encoding + b"\r\n\r\n" + body + b"NEXT"
    )
    assert isinstance(got, Request) and (got.body, rest) == (read_as, b"NEXT")


@given(st.lists(st.binary(min_size=1, max_size=40), max_size=6), st.binary(max_size=40))
def test_any_chunked_body_reads_back(chunks: list[bytes], extra: bytes) -> None:
    """Any chunks, chunk-encoded, read back joined; what follows them stays unread."""
    body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    got, _, rest = read(b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n" + body + extra)
    assert isinstance(got, Request) and (got.body, rest) == (b"".join(chunks), extra)


# -- the connection, through the real Origin --------------------------------------------------


def _answer(data: bytes) -> Schedule:
    return Schedule(
        Head(0, 200, "OK", ()), (Write(1 * MS, data),), Finish(2 * MS, FinishKind.COMPLETE)
    )


def _get(token: str, extra: bytes = b"") -> bytes:
    return b"GET /v1 HTTP/1.1\r\nhost: x\r\n%s: %s\r\n%s\r\n" % (
        TOKEN_HEADER.encode(),
        token.encode(),
        extra,
    )


def _bad_request(reason: str) -> bytes:
    body = f"replayproxy: bad request: {reason}\n".encode()
    return (
        b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n%s" % (len(body), body)
    )


_OK = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n%s\r\n0\r\n\r\n"


def test_two_requests_on_one_connection_get_two_responses() -> None:
    """Keep-alive: each request on the connection gets its own response, in order."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(b"aa"), "GET"), origin.expect(_answer(b"bb"), "GET")
    assert pipelined(origin, [_get(t1), _get(t2)]) == _OK % b"aa" + _OK % b"bb"


@pytest.mark.parametrize("value", [b"close", b"Close", b"CLOSE"])
def test_connection_close_ends_the_connection_after_its_response(value: bytes) -> None:
    """After a request saying `Connection: close` (any case), the response is the last thing
    sent: a request pipelined behind it is not answered."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(b"aa"), "GET"), origin.expect(_answer(b"bb"), "GET")
    data = pipelined(origin, [_get(t1, b"Connection: " + value + b"\r\n"), _get(t2)])
    assert data == _OK % b"aa"


def test_connection_keep_alive_keeps_it() -> None:
    """`Connection: keep-alive` is not `close`: the next request is answered."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(b"aa"), "GET"), origin.expect(_answer(b"bb"), "GET")
    data = pipelined(origin, [_get(t1, b"Connection: keep-alive\r\n"), _get(t2)])
    assert data == _OK % b"aa" + _OK % b"bb"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"NONSENSE\r\n\r\n", "malformed request line b'NONSENSE'"),
        (b"GET / HTTP/1.1\r\nbad header\r\n\r\n", "malformed header line b'bad header'"),
        (b"GET / HTTP/1.1\r\ncontent-length: zz\r\n\r\n", "malformed or truncated request body"),
    ],
    ids=["request line", "header line", "body"],
)
def test_a_bad_request_gets_a_400_and_the_connection_closes(bad: bytes, reason: str) -> None:
    """A request that cannot be read gets a 400 naming why, with `connection: close`, and is
    the end of the connection (what follows is not read as a request)."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(b"aa"), "GET"), origin.expect(_answer(b"bb"), "GET")
    data = pipelined(origin, [_get(t1), bad, _get(t2)])
    assert data == _OK % b"aa" + _bad_request(reason)


def test_a_client_closing_mid_head_gets_a_400() -> None:
    """A client that closes its side inside a head still gets a 400 saying so."""
    origin = Origin()
    data = pipelined(origin, [b"GET /v1 HTTP/1.1\r\nhost: x\r\n"])
    assert data == _bad_request("connection closed inside a request head")


def test_a_client_closing_between_requests_gets_nothing_more() -> None:
    """A client that closes its side after a whole request gets that response, then the
    origin closes quietly (no 400 for the end of the stream)."""
    origin = Origin()
    token = origin.expect(_answer(b"aa"), "GET")
    assert pipelined(origin, [_get(token)]) == _OK % b"aa"
    assert pipelined(Origin(), []) == b""


def test_over_loopback_an_oversize_head_is_refused_and_close_ends_everything() -> None:
    """On a started origin (its own reader limit): a head over the limit gets the 400 naming
    it; close() ends a connection still waiting inside a head, stops listening, and can be
    called again."""

    async def main() -> tuple[bytes, bytes, bool]:
        origin = Origin()
        await origin.start()
        assert origin.url == f"http://127.0.0.1:{origin.port}" and origin.port > 0
        # asyncio refuses a head once more than limit + 3 bytes hold no blank line; sent as
        # exactly limit + 4 bytes, it is refused only after all of them were read, so closing
        # does not reset the connection under the 400.
        line = b"GET / HTTP/1.1\r\nx: "
        reader, writer = await asyncio.open_connection("127.0.0.1", origin.port)
        writer.write(line + b"a" * (MAX_HEAD + 4 - len(line)))
        refused = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        # A connection inside a head when the origin closes: cut, not left hanging.
        reader, writer = await asyncio.open_connection("127.0.0.1", origin.port)
        writer.write(b"GET / HTTP/1.1\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
        await asyncio.wait_for(origin.close(), 10)
        try:
            cut = await asyncio.wait_for(reader.read(), 10)
        except ConnectionError:
            cut = b"(reset)"
        writer.close()
        await origin.close()  # again: harmless
        try:
            _, w = await asyncio.open_connection("127.0.0.1", origin.port)
        except OSError:
            listening = False
        else:
            w.close()
            listening = True
        return refused, cut, listening

    refused, cut, listening = asyncio.run(main())
    assert refused == _bad_request(f"request head larger than {MAX_HEAD // 1024} KiB")
    assert cut in (b"", b"(reset)") and not listening


def test_a_connection_is_set_up_for_streaming() -> None:
    """Each connection gets TCP_NODELAY (a chunk is not held back waiting for the next) and
    the write-buffer bound that keeps a slow reader from holding more than it should."""

    async def main() -> tuple[int, int]:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            client = socket.create_connection(listener.getsockname()[:2])
            conn, _ = listener.accept()
        sr, sw = await asyncio.open_connection(sock=conn)
        origin = Origin()
        handler = asyncio.create_task(origin._handle(sr, sw))
        await asyncio.sleep(0)  # the handler sets the connection up, then waits for a request
        nodelay = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        high = sw.transport.get_write_buffer_limits()[1]
        client.close()
        await asyncio.wait_for(handler, 10)
        return nodelay, high

    nodelay, high = asyncio.run(main())
    assert nodelay != 0 and high == WRITE_BUFFER_HIGH


@pytest.mark.parametrize(
    ("upstream", "base"),
    [
        ("https://api.openai.com", ("https", "api.openai.com")),
        ("https://api.openai.com:443/v1", ("https", "api.openai.com")),
        ("http://h.test:80", ("http", "h.test")),
        ("https://h.test:80", ("https", "h.test:80")),
        ("http://h.test:443", ("http", "h.test:443")),
        ("http://127.0.0.1:8123", ("http", "127.0.0.1:8123")),
        ("http://[::1]:8080", ("http", "[::1]:8080")),
        ("https://[::1]", ("https", "[::1]")),
        ("http://", ("http", "")),
    ],
)
def test_the_upstream_base_is_shown_as_mitmproxy_shows_it(
    upstream: str, base: tuple[str, str]
) -> None:
    """Base-URL mode's stand-in host: scheme and host, the port only when not the scheme's
    default, IPv6 in brackets (as mitmproxy's reverse mode shows a forwarded URL)."""
    assert _base_of(upstream) == base


@pytest.mark.parametrize(
    ("url", "moved"),
    [
        ("http://127.0.0.1:5000/v1/chat?x=1", "https://api.test/v1/chat?x=1"),
        ("http://127.0.0.1:5000", "https://api.test/"),
        ("http://127.0.0.1:5000/a#frag", "https://api.test/a"),
    ],
)
def test_a_request_is_matched_as_if_sent_upstream(url: str, moved: str) -> None:
    """Only the URL's scheme and host change (path and query kept, `/` for none, no
    fragment); the rest of the request is untouched."""
    request = Request("POST", url, "HTTP/1.1", ((b"host", b"127.0.0.1:5000"),), b"{}")
    assert _on_upstream(request, ("https", "api.test")) == Request(
        "POST", moved, "HTTP/1.1", ((b"host", b"127.0.0.1:5000"),), b"{}"
    )


def test_an_origin_without_a_session_explains_a_failure_it_cannot_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no session to count failures, a request the origin fails to prepare still gets
    the explained 500 naming the request and the error (fail closed)."""
    from replayproxy._engine import origin as origin_module

    def broken(*_: object) -> None:
        raise RuntimeError("framing broke")

    monkeypatch.setattr(origin_module, "_compiled", broken)
    origin = Origin()
    token = origin.expect(_answer(b"aa"), "GET")
    body = (
        b"replayproxy: replay failed for GET /v1: RuntimeError: framing broke\n"
        b"The request was not sent anywhere (replay never contacts the network).\n"
    )
    assert plain_exchange(origin, _get(token)) == (
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"x-replayproxy-error: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


def test_offsets_are_exact_to_the_microsecond_half_an_hour_in() -> None:
    """A write 2000 s into a stream lands at exactly 2000 s (no relative error in turning
    nanoseconds into loop time), on the virtual clock."""
    head, chunks, end = exchange(schedule(0, [2_000_000, 2_000_000.5], 2_000_001), VirtualClock())
    assert head == 0
    assert [t for t, _ in chunks] == [2_000_000_000, 2_000_000_500]
    assert end == 2_000_001_000


def test_a_request_behind_a_no_response_is_not_read() -> None:
    """A recorded no-response closes the connection: a request pipelined behind it is never
    read (its schedule stays registered) and nothing is sent."""
    origin = Origin()
    nothing = Schedule(None, (), Finish(0, FinishKind.CLOSE))
    t1, t2 = origin.expect(nothing, "GET"), origin.expect(_answer(b"bb"), "GET")
    assert pipelined(origin, [_get(t1), _get(t2)]) == b""
    assert set(origin._handoffs._expected) == {t2}


def test_close_waits_for_every_connection_and_stops_listening() -> None:
    """close() returns once every connection's handler has ended and the server is closed;
    origins listen on 127.0.0.1, each on its own port the system chose."""

    async def main() -> None:
        first, second = Origin(), Origin()
        await first.start()
        await second.start()
        assert (first.host, second.host) == ("127.0.0.1", "127.0.0.1")
        assert first.port != second.port and min(first.port, second.port) >= 1024
        await second.close()
        clients = [await asyncio.open_connection("127.0.0.1", first.port) for _ in range(3)]
        for _, writer in clients:
            writer.write(b"GET / HT")
        while len(first._tasks) < 3:
            await asyncio.sleep(0.01)
        await first.close()  # directly: wait_for would give the handlers extra loop turns
        assert first._tasks == set() and first.listener is None
        for _, writer in clients:
            writer.close()

    asyncio.run(main())


def test_an_origin_can_listen_on_ipv6_loopback() -> None:
    """start() on ::1 reads back its address and port from the socket."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6")

    async def main() -> tuple[str, int]:
        origin = Origin()
        try:
            await origin.start("::1")
        except OSError:
            pytest.skip("::1 not available")
        try:
            _, writer = await asyncio.open_connection("::1", origin.port)
            writer.close()
            return origin.host, origin.port
        finally:
            await origin.close()

    host, port = asyncio.run(main())
    assert host == "::1" and port > 0


def _head_arrives_after(arrived_in_ms: float | None, head_ms: float = 10) -> int:
    """Microseconds from a request to the head of a schedule whose head is due at ``head_ms``,
    registered with ``arrived`` that many ms from when the request is sent (virtual clock)."""
    clock = VirtualClock()

    async def main() -> int:
        a, b = socket.socketpair()
        origin = Origin()
        now = asyncio.get_running_loop().time()
        arrived = None if arrived_in_ms is None else now + arrived_in_ms / 1000
        sched = schedule(head_ms, [head_ms + 10], head_ms + 20)
        token = origin.expect(sched, "GET", arrived=arrived)
        sr, sw = await asyncio.open_connection(sock=b)
        server = asyncio.create_task(origin._handle(sr, sw))
        reader, writer = await asyncio.open_connection(sock=a)
        sent = clock.ns
        writer.write(_get(token))
        await reader.readuntil(b"\r\n\r\n")
        head_at = clock.ns - sent
        await reader.readuntil(b"0\r\n\r\n")
        writer.close()
        await server
        return round(head_at / 1000)

    return run_virtual(main, clock)


@pytest.mark.parametrize(
    ("arrived_in_ms", "head_us"),
    [(None, 10_000), (-4, 6_000), (0, 10_000), (5, 10_000)],
    ids=["not given", "4 ms before", "as sent", "in the future: ignored"],
)
def test_offsets_count_from_when_the_caller_says_the_request_arrived(
    arrived_in_ms: float | None, head_us: int
) -> None:
    """`expect(arrived=...)` moves the clock's start back to when the request reached
    replayproxy (behind mitmproxy, its timestamp), never into the future."""
    assert _head_arrives_after(arrived_in_ms) == head_us


@pytest.mark.parametrize(
    ("arrived_in_ms", "head_us"),
    [(-8, 42_000), (-10, 40_000), (-30, 40_000), (-300, 40_000)],
    ids=["8 ms: absorbed", "10 ms: absorbed", "30 ms: 10 absorbed", "300 ms: 10 absorbed"],
)
def test_at_most_absorb_max_of_proxy_latency_is_absorbed(
    arrived_in_ms: float, head_us: int
) -> None:
    """Behind mitmproxy, up to ABSORB_MAX (10 ms) of latency moves the clock's start back;
    beyond it (a saturated proxy, a slow hook) the rest is added: a head due at 50 ms comes
    40 ms after the request however long ago mitmproxy stamped it."""
    assert ABSORB_MAX == 0.010
    assert _head_arrives_after(arrived_in_ms, head_ms=50) == head_us


@given(
    received=st.floats(0, 1e6, allow_nan=False),
    arrived=st.none() | st.floats(-1e6, 2e6, allow_nan=False),
)
def test_the_clock_starts_between_the_cap_and_the_receipt(
    received: float, arrived: float | None
) -> None:
    """clock_start is never after the origin received the request, never more than
    ABSORB_MAX before, and exactly the arrival when that lies in between."""
    start = clock_start(received, arrived)
    assert received - ABSORB_MAX <= start <= received
    if arrived is None:
        assert start == received
    elif received - ABSORB_MAX <= arrived <= received:
        assert start == arrived


def test_without_a_session_a_request_without_a_token_is_a_plain_500() -> None:
    """An origin serving only registered schedules answers a request without a token with
    an exact plain-text 500 saying why (and keeps the connection)."""
    body = b"replayproxy: no replay session\n"
    assert plain_exchange(Origin(), b"GET /v1 HTTP/1.1\r\nhost: x\r\n\r\n") == (
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )


def test_base_url_mode_matches_requests_as_sent_to_the_upstream() -> None:
    """With `upstream`, a request to the replay server is matched as if sent to that host, so
    a cassette recorded there matches even when hosts are compared."""
    it = interaction([b"data: 1\n\n"], gap_ms=0, url="https://api.test/v1/chat/completions")
    options = MatchOptions(match_host=True)
    with ReplayServer(cassette(it), speed=0, options=options, upstream="https://api.test") as s:
        r = httpx.post(s.url + "/v1/chat/completions", content=b'{"model":"m","stream":true}')
    assert (r.status_code, r.content) == (200, b"data: 1\n\n")


def test_a_websocket_session_is_served_after_the_upgrade() -> None:
    """A recorded WebSocket session is replayed on the upgraded connection: the client gets
    every server message of the recording, in order."""
    turns = realtime_turns(ttfb_ms=1, gap_ms=1, deltas=2)
    with (
        ReplayServer(Cassette((ws_interaction(turns),)), speed=0) as server,
        connect(server.url.replace("http", "ws", 1) + "/v1/realtime?model=gpt-realtime") as ws,
    ):
        got = [json.loads(ws.recv(timeout=5))["type"]]
        ws.send(json.dumps({"type": "session.update", "session": {"x": 1}}))
        got.append(json.loads(ws.recv(timeout=5))["type"])
        ws.send(json.dumps({"type": "response.create"}))
        while got[-1] != "response.done":
            got.append(json.loads(ws.recv(timeout=5))["type"])
    expected = [json.loads(m.data)["type"] for m in turns if not m.from_client]
    assert got == expected


def test_a_request_a_record_mode_would_forward_is_refused_with_a_502(tmp_path: Path) -> None:
    """Directly (no mitmproxy) nothing can be forwarded: a request the record mode says to
    forward gets an exact plain 502 saying so (never a connection upstream)."""
    session = ReplaySession(str(tmp_path / "c.cassette"), record_mode="all")
    body = b"replayproxy: this replay server cannot forward or record\n"
    assert plain_exchange(Origin(session), b"GET /v1 HTTP/1.1\r\nhost: x\r\n\r\n") == (
        b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )


def test_an_unmatched_request_gets_a_500_with_its_standard_reason() -> None:
    """The explained miss is sent with the standard status line."""
    it = interaction([b"data: 1\n\n"])
    with ReplayServer(cassette(it), speed=0) as server:
        reply = _exchange_raw(server.port, b"GET /nothing HTTP/1.1\r\nhost: x\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")


def _exchange_raw(port: int, request: bytes, until: bytes = b"\r\n\r\n") -> bytes:
    """Send ``request``, then read until the reply holds ``until`` (by default: a complete
    response head) and nothing more arrives for 0.3 s (or it closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        reply = b""
        sock.settimeout(5)
        while until not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                return reply
            reply += chunk
        sock.settimeout(0.3)
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                reply += chunk
    return reply


def test_a_head_request_gets_the_head_alone_and_the_next_response_follows() -> None:
    """A matched HEAD request gets its recorded head without a body (whatever the method's
    case in the cassette), so the response to the request behind it starts right after."""
    head_it = replace(interaction([b"data: 1\n\n"]), request=Request("HEAD", CHAT_URL))
    post_it = interaction([b"data: 2\n\n"], gap_ms=0, head_ms=0)
    post = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (
        len(post_it.request.body),
        post_it.request.body,
    )
    with ReplayServer(cassette(head_it, post_it), speed=0) as server:
        # Until the second response's last chunk: on a loaded machine it may come later
        # than 0.3 s after the first head.
        reply = _exchange_raw(
            server.port,
            b"HEAD /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n" + post,
            until=b"data: 2\n\n\r\n0\r\n\r\n",
        )
    first, _, rest = reply.partition(b"\r\n\r\n")
    assert first == b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream"
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and rest.endswith(b"data: 2\n\n\r\n0\r\n\r\n")


def test_a_plain_request_for_a_websocket_recording_gets_a_426_and_the_end() -> None:
    """A request without an upgrade, for a recorded WebSocket session, gets the explained 426
    (`connection: close`), and the connection ends there: a request behind it is not read."""
    turns = realtime_turns(ttfb_ms=1, gap_ms=1, deltas=1)
    get = b"GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\nhost: x\r\n\r\n"
    with (
        ReplayServer(Cassette((ws_interaction(turns),)), speed=0) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        sock.sendall(get + get)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    body = b"replayproxy: a WebSocket was recorded here; send an upgrade request\n"
    assert reply == (
        b"HTTP/1.1 426 Upgrade Required\r\nupgrade: websocket\r\nconnection: close\r\n"
        b"content-type: text/plain\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


def test_the_clock_starts_at_the_read_that_completed_the_request() -> None:
    """On a busy loop the handler wakes after the read that delivered the request; offsets
    count from that read (stamped by the reader), not from the wake-up (virtual clock)."""
    clock = VirtualClock()

    async def main() -> int:
        a, b = socket.socketpair()
        origin = Origin()
        token = origin.expect(schedule(10, [20], 30), "GET")
        _, server_writer = await asyncio.open_connection(sock=b)
        peer, peer_writer = await asyncio.open_connection(sock=a)
        reader = StampedReader(limit=MAX_HEAD)
        handler = asyncio.create_task(origin._handle(reader, server_writer))
        await asyncio.sleep(0)  # the handler now waits for a request
        reader.feed_data(_get(token))
        stamped = clock.ns
        clock.ns += 5 * MS  # the loop is busy: the handler wakes 5 ms after the read
        await peer.readuntil(b"\r\n\r\n")
        head_at = clock.ns - stamped
        await peer.readuntil(b"0\r\n\r\n")
        reader.feed_eof()
        await handler
        peer_writer.close()
        return round(head_at / 1000)

    assert run_virtual(main, clock) == 10_000


def test_an_origin_before_it_starts() -> None:
    """Before start(): where it will listen (127.0.0.1, port 0 = not yet chosen), the
    upstream it stands in for as given, and close() is harmless."""
    origin = Origin(upstream="https://api.test")
    assert (origin.host, origin.port, origin.upstream) == ("127.0.0.1", 0, "https://api.test")
    assert Origin().upstream is None
    asyncio.run(origin.close())


def test_a_failure_is_counted_by_the_origins_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a session and no handler given, a request replay fails to prepare is counted in
    that session (its failures) as well as answered with the explained 500."""
    from replayproxy._engine import origin as origin_module

    def broken(*_: object) -> None:
        raise RuntimeError("framing broke")

    monkeypatch.setattr(origin_module, "_compiled", broken)
    session = ReplaySession(cassette(interaction([b"data: 1\n\n"])))
    post = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
    body = interaction([]).request.body
    reply = plain_exchange(Origin(session), post % (len(body), body))
    assert reply.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert [(f.request, f.summary) for f in session.failures] == [
        ("POST /v1/chat/completions", "RuntimeError: framing broke")
    ]
