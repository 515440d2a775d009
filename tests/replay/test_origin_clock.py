"""The origin's schedule executor on a virtual clock: writes land at their absolute offsets from
the request, late wake-ups neither accumulate (no drift) nor delay what comes after them (they
catch up). Real sockets (a socketpair) and the real Origin; only time is virtual, so the
offsets are asserted exactly. The loopback tests in test_origin.py keep generous bounds for
the end-to-end path."""

from __future__ import annotations

import asyncio
import socket

import pytest

from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._engine import pacing
from replayproxy._engine.origin import TOKEN_HEADER, Origin
from replayproxy.testing import MS, US
from tests.replay.virtual_time import VirtualClock, run_virtual


def schedule(head_ms: float, writes_ms: list[float], end_ms: float) -> Schedule:
    return Schedule(
        Head(round(head_ms * MS), 200, "OK", ((b"content-type", b"text/event-stream"),)),
        tuple(Write(round(t * MS), b"data: %d\n\n" % i) for i, t in enumerate(writes_ms)),
        Finish(round(end_ms * MS), FinishKind.COMPLETE),
    )


def _chunks(body: bytes, stamps: list[tuple[int, int]]) -> tuple[list[tuple[int, bytes]], int]:
    """Split a chunked body into (arrival, data) using ``stamps`` of (end position, arrival)."""

    def arrival(pos: int) -> int:
        return next(t for end, t in stamps if end >= pos)

    out: list[tuple[int, bytes]] = []
    pos = 0
    while True:
        eol = body.index(b"\r\n", pos)
        size = int(body[pos:eol], 16)
        if size == 0:
            return out, arrival(eol + 4)
        data = body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2
        out.append((arrival(pos), data))


def exchange(
    sched: Schedule,
    clock: VirtualClock,
    *,
    body_delay_ms: float = 0,
    arrived_ago_ms: float | None = None,
) -> tuple[int, list[tuple[int, bytes]], int]:
    """Serve ``sched`` to one request over a socketpair; return the head's, each chunk's and
    the terminator's arrival in microseconds after the request was complete (``arrived_ago_ms``:
    registered as having reached replayproxy that long before it was sent)."""

    async def main() -> tuple[int, list[tuple[int, bytes]], int]:
        a, b = socket.socketpair()
        origin = Origin()
        now = asyncio.get_running_loop().time()
        arrived = None if arrived_ago_ms is None else now - arrived_ago_ms / 1000
        token = origin.expect(sched, "POST", arrived=arrived)
        sr, sw = await asyncio.open_connection(sock=b)
        server = asyncio.create_task(origin._handle(sr, sw))
        reader, writer = await asyncio.open_connection(sock=a)
        body = b"{}"
        writer.write(
            b"POST /v1 HTTP/1.1\r\nhost: x\r\n%s: %s\r\ncontent-length: %d\r\n\r\n"
            % (TOKEN_HEADER.encode(), token.encode(), len(body))
        )
        if body_delay_ms:
            await asyncio.sleep(body_delay_ms / 1000)  # the request is not complete yet
        writer.write(body)
        t_request = clock.ns
        raw = b""
        stamps: list[tuple[int, int]] = []
        while not raw.endswith(b"0\r\n\r\n"):
            data = await reader.read(65536)
            assert data, "connection closed early"
            raw += data
            stamps.append((len(raw), clock.ns - t_request))
        writer.close()
        await server
        head_end = raw.index(b"\r\n\r\n") + 4
        assert raw.startswith(b"HTTP/1.1 200 OK\r\n")
        head_at = next(t for end, t in stamps if end >= head_end)
        rel = [(end - head_end, t) for end, t in stamps if end > head_end]
        chunks, end_at = _chunks(raw[head_end:], rel)
        return head_at, chunks, end_at

    head_at, chunks, end_at = run_virtual(main, clock)
    return (
        round(head_at / US),
        [(round(t / US), d) for t, d in chunks],
        round(end_at / US),
    )


def test_writes_land_at_their_offsets_from_the_request() -> None:
    """Head, each write (two of them due together) and the terminator arrive at their
    scheduled offsets, to the microsecond."""
    head, chunks, end = exchange(schedule(5, [10, 25, 25, 60.5], 70), VirtualClock())
    assert head == 5_000
    assert [t for t, _ in chunks] == [10_000, 25_000, 25_000, 60_500]
    assert [d for _, d in chunks] == [b"data: %d\n\n" % i for i in range(4)]
    assert end == 70_000


def test_offsets_count_from_the_complete_request() -> None:
    """A request whose body comes 30 ms after its head: offsets count from the body's arrival
    (the moment the request is complete, as when recording)."""
    head, chunks, end = exchange(schedule(1, [2], 3), VirtualClock(), body_delay_ms=30)
    assert (head, [t for t, _ in chunks], end) == (1_000, [2_000], 3_000)


@pytest.mark.parametrize("late_ms", [1, 4])
def test_late_wake_ups_do_not_accumulate(late_ms: int) -> None:
    """Every wake-up late by the same amount: each write is late by exactly that amount, the
    last of 100 included (relative sleeps would drift by 100 times it)."""
    clock = VirtualClock(late_ns=late_ms * MS)
    writes = [10.0 * i for i in range(1, 101)]
    head, chunks, end = exchange(schedule(0, writes, 1005), clock)
    assert head == 0  # due at once: no sleep, so not late
    assert [t for t, _ in chunks] == [round(w * 1000) + late_ms * 1000 for w in writes]
    assert end == 1005_000 + late_ms * 1000


def test_one_late_wake_up_catches_up() -> None:
    """A wake-up 35 ms late: the writes already due go out at once, and the ones after them
    are back on their own schedule."""
    clock = VirtualClock()
    clock.late_once_ns = 35 * MS
    head, chunks, end = exchange(schedule(0, [10, 20, 30, 40, 100], 120), clock)
    assert head == 0
    assert [t for t, _ in chunks] == [45_000, 45_000, 45_000, 45_000, 100_000]
    assert end == 120_000


def plain_exchange(origin: Origin, request: bytes, *, chunked: bool = False) -> bytes:
    """Send one raw request to ``origin`` over a socketpair; return the whole response (a
    Content-Length one, or with ``chunked`` one read to its terminator), read on the
    virtual-time loop."""

    async def main() -> bytes:
        a, b = socket.socketpair()
        sr, sw = await asyncio.open_connection(sock=b)
        server = asyncio.create_task(origin._handle(sr, sw))
        reader, writer = await asyncio.open_connection(sock=a)
        writer.write(request)
        if chunked:
            got = await reader.readuntil(b"0\r\n\r\n")
        else:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
            got = head + await reader.readexactly(length)
        writer.close()
        await server
        return got

    return run_virtual(main, VirtualClock())


def _get(token: str | None) -> bytes:
    extra = b"" if token is None else b"%s: %s\r\n" % (TOKEN_HEADER.encode(), token.encode())
    return b"GET /v1 HTTP/1.1\r\nhost: x\r\n%s\r\n" % extra


def test_an_unknown_or_forgotten_token_is_a_plain_500() -> None:
    """A token never issued, or one forgotten (its flow was killed), gets a 500 naming the
    problem, as text/plain with its length."""
    origin = Origin()
    token = origin.expect(schedule(0, [1], 2), "GET")
    origin.forget(token)
    expected = (
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n"
        b"content-length: 34\r\n\r\nreplayproxy: unknown replay token\n"
    )
    assert plain_exchange(origin, _get(token)) == expected
    assert plain_exchange(origin, _get("999")) == expected
    origin.forget("never issued")  # forgetting an unknown token is harmless


def test_without_a_token_or_session_the_origin_says_so() -> None:
    """An origin with no session cannot answer a request without a token: a plain 500."""
    assert plain_exchange(Origin(), _get(None)).endswith(
        b"content-length: 31\r\n\r\nreplayproxy: no replay session\n"
    )


def pipelined(origin: Origin, requests: list[bytes]) -> bytes:
    """Send ``requests`` back to back on one connection, close our side, and return every
    byte the origin sent until it closed (on the virtual-time loop)."""

    async def main() -> bytes:
        a, b = socket.socketpair()
        sr, sw = await asyncio.open_connection(sock=b)
        server = asyncio.create_task(origin._handle(sr, sw))
        reader, writer = await asyncio.open_connection(sock=a)
        writer.write(b"".join(requests))
        writer.write_eof()
        data = await reader.read()
        writer.close()
        await server
        return data

    return run_virtual(main, VirtualClock())


def _request(method: str, token: str, body: bytes = b"", chunked: bool = False) -> bytes:
    head = b"%s /v1 HTTP/1.1\r\nhost: x\r\n%s: %s\r\n" % (
        method.encode(),
        TOKEN_HEADER.encode(),
        token.encode(),
    )
    if chunked:
        return head + b"transfer-encoding: chunked\r\n\r\n" + body
    return head + b"content-length: %d\r\n\r\n%s" % (len(body), body)


def _answer(status: int, data: bytes = b"hi") -> Schedule:
    return Schedule(
        Head(0, status, "", ((b"content-length", b"2"), (b"x-a", b"1"))),
        (Write(1 * MS, data),),
        Finish(2 * MS, FinishKind.COMPLETE),
    )


def test_bodies_are_chunked_except_for_head_204_and_304() -> None:
    """Responses carry the recorded headers minus framing, then `transfer-encoding: chunked`
    and the chunks; a HEAD request and 204/304 responses get the head alone (and the next
    response follows it directly on the connection)."""
    origin = Origin()
    cases = [("GET", 200), ("HEAD", 200), ("GET", 204), ("GET", 304), ("GET", 305)]
    tokens = [origin.expect(_answer(status), method) for method, status in cases]
    data = pipelined(origin, [_request(m, t) for (m, _), t in zip(cases, tokens, strict=True)])
    chunked = b"x-a: 1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    assert data == (
        b"HTTP/1.1 200 OK\r\n" + chunked
        + b"HTTP/1.1 200 OK\r\nx-a: 1\r\n\r\n"
        + b"HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n"
        + b"HTTP/1.1 304 Not Modified\r\nx-a: 1\r\n\r\n"
        + b"HTTP/1.1 305 Use Proxy\r\n" + chunked
    )  # fmt: skip


def test_the_same_schedule_twice_and_tokens_kept_apart() -> None:
    """One schedule object served twice (compiled once) sends the same bytes; outstanding
    tokens each find their own schedule, whatever order they are used in."""
    origin = Origin()
    shared = _answer(200)
    t1, t2 = origin.expect(shared, "GET"), origin.expect(shared, "GET")
    t3 = origin.expect(_answer(200, b"yo"), "GET")
    assert len({t1, t2, t3}) == 3
    data = pipelined(origin, [_request("GET", t) for t in (t3, t1, t2)])
    assert data.count(b"2\r\nhi\r\n") == 2 and data.index(b"2\r\nyo\r\n") < data.index(b"hi")


def test_request_bodies_chunked_with_extensions_are_read_whole() -> None:
    """A chunked request body (hex sizes, chunk extensions, trailers) is read to its end, so
    the next request on the connection is read correctly."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(200), "POST"), origin.expect(_answer(200, b"yo"), "GET")
    body = b"a;name=value\r\n0123456789\r\n1A\r\n" + b"z" * 26 + b"\r\n0\r\nx-trailer: 1\r\n\r\n"
    data = pipelined(origin, [_request("POST", t1, body, chunked=True), _request("GET", t2)])
    assert data.count(b"HTTP/1.1 200 OK") == 2 and data.endswith(b"2\r\nyo\r\n0\r\n\r\n")


def test_a_plain_500_keeps_the_connection_for_the_next_request() -> None:
    """After an unknown-token 500 the connection stays open: the next request is answered."""
    origin = Origin()
    token = origin.expect(_answer(200, b"ok"), "GET")
    data = pipelined(origin, [_get("nope"), _request("GET", token)])
    assert data.count(b"HTTP/1.1 500 ") == 1 and data.endswith(b"2\r\nok\r\n0\r\n\r\n")


def test_two_chunk_extensions_are_skipped() -> None:
    """A chunk size line with two extensions (`a;x=1;y=2`) still reads as size 0xa."""
    origin = Origin()
    t1, t2 = origin.expect(_answer(200), "POST"), origin.expect(_answer(200, b"yo"), "GET")
    body = b"a;x=1;y=2\r\n0123456789\r\n0\r\n\r\n"
    data = pipelined(origin, [_request("POST", t1, body, chunked=True), _request("GET", t2)])
    assert data.endswith(b"2\r\nyo\r\n0\r\n\r\n")


def test_the_compiled_schedule_cache_stays_bounded() -> None:
    """Framing more distinct schedules than the cache holds evicts the oldest: it never grows
    past its byte bound, and every schedule still frames to its own bytes."""
    from replayproxy._engine import http1_writer

    cache = http1_writer.WritesCache(max_bytes=4096)
    keep = [_answer(200, b"%02x" % (i % 256)) for i in range(300)]
    for s in keep:
        steps = tuple(cache.writes_for(s, "GET"))
        assert steps[1][1] == b"2\r\n%s\r\n" % s.writes[0].data
        assert cache.size <= 4096


def test_each_origin_frames_a_reused_schedule_once_in_its_own_cache() -> None:
    """The same schedule asked for twice on one origin is framed once, in that origin's cache
    (none is shared between origins or kept by the process); both answers are the same bytes."""
    origin, other = Origin(), Origin()
    answer = _answer(200, b"yo")
    tokens = [origin.expect(answer, "GET"), origin.expect(answer, "GET")]
    data = pipelined(origin, [_request("GET", t) for t in tokens])
    first, second = data.split(b"0\r\n\r\n")[:2]
    assert first == second and first.endswith(b"2\r\nyo\r\n")
    assert len(origin._writes) == 1
    assert len(other._writes) == 0 and origin._writes is not other._writes


def test_an_overdue_first_write_starts_the_schedule_late_keeping_its_gaps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request that reached replayproxy 300 ms before the origin had it (ABSORB_MAX lifted),
    head due at 100 ms, writes at 150 and 200: the head goes at once, 200 ms overdue, and the
    schedule moves back by that much, so the writes keep their recorded gaps (50 and 100 ms
    after the request) instead of all going out at once."""
    monkeypatch.setattr(pacing, "ABSORB_MAX", 1.0)
    head, chunks, end = exchange(schedule(100, [150, 200], 250), VirtualClock(), arrived_ago_ms=300)
    assert (head, [t for t, _ in chunks], end) == (0, [50_000, 100_000], 150_000)


def test_the_clock_rule_stays_importable_from_the_origin() -> None:
    """clock_start and ABSORB_MAX moved to pacing.py; imports from origin.py still give them."""
    from replayproxy._engine import origin

    assert origin.clock_start is pacing.clock_start
    assert origin.ABSORB_MAX == pacing.ABSORB_MAX
    assert {"ABSORB_MAX", "clock_start"} <= set(origin.__all__)
