"""engine/http1_writer.py exactly: the socket writes a schedule becomes (chunks, joins, slices of a
big frame, HEAD) and the bounded cache of framed schedules. Found untested by exact values by
the mutation sample: a skipped empty write that ended the body, a big frame's slices, HEAD
on the lazy path, the cache bound."""

from __future__ import annotations

import pytest

from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._engine import http1_writer

HEAD = Head(0, 200, "OK", ((b"content-type", b"text/event-stream"),))
WIRE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def sched(*writes: Write, end: int = 100) -> Schedule:
    return Schedule(HEAD, writes, Finish(end, FinishKind.COMPLETE))


def test_an_empty_write_is_skipped_and_the_body_goes_on() -> None:
    """An empty recorded write would be the chunked terminator: it is left out, and the
    writes after it are still sent."""
    got = list(
        http1_writer.steps(sched(Write(10, b"ab"), Write(20, b""), Write(30, b"cd")), "POST")
    )
    assert got == [
        (0, WIRE_HEAD),
        (10, b"2\r\nab\r\n"),
        (30, b"2\r\ncd\r\n"),
        (100, b"0\r\n\r\n"),
    ]


def test_a_frame_bigger_than_join_max_goes_out_whole_in_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk longer than JOIN_MAX: its size line, the data in JOIN_MAX slices, its CRLF,
    all due at its instant, joined up to JOIN_MAX per socket write: no byte lost or added."""
    monkeypatch.setattr(http1_writer, "JOIN_MAX", 4)
    got = list(http1_writer.steps(sched(Write(10, b"0123456789")), "POST"))
    assert [t for t, _ in got][1:-1] == [10] * (len(got) - 2)
    assert all(len(d) <= 4 for _, d in got[1:-1])
    assert b"".join(d for _, d in got[1:]) == b"a\r\n0123456789\r\n0\r\n\r\n"


def test_head_gets_the_head_alone_on_the_lazy_path_too() -> None:
    """A schedule too big to cache is framed lazily, and a HEAD request still gets only the
    head (without chunked framing): the method reaches the framer."""
    cache = http1_writer.WritesCache(max_item=1)
    got = list(cache.writes_for(sched(Write(10, b"ab")), "HEAD"))
    assert got == [(0, b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")]
    assert len(cache) == 0  # framed lazily: not kept


def test_the_cache_keeps_its_byte_bound() -> None:
    """Framed schedules are cached (the same object comes back) until the cache would pass
    its byte bound (CACHE_BYTES by default); then the oldest go first, and exactly at the
    bound nothing is evicted."""
    assert http1_writer.WritesCache().max_bytes == http1_writer.CACHE_BYTES
    first = sched(Write(10, b"ab"))
    size = http1_writer.compile_schedule(first, "POST").size
    cache = http1_writer.WritesCache(max_bytes=2 * size)
    a = cache.writes_for(first, "POST")
    assert cache.writes_for(first, "POST") is a  # cached
    second = sched(Write(10, b"cd"))
    cache.writes_for(second, "POST")
    assert cache.size == 2 * size  # at the bound: both kept
    assert cache.writes_for(first, "POST") is a
    cache.writes_for(sched(Write(10, b"ef")), "POST")  # over it: the oldest goes
    assert cache.size == 2 * size
    assert cache.writes_for(first, "POST") is not a


def test_a_new_schedule_never_gets_the_writes_of_a_freed_one() -> None:
    """Entries hold their schedule: a new schedule, even one in the memory of a freed one
    (where it would have its id()), is framed as itself, never served another's writes."""
    cache = http1_writer.WritesCache()
    for i in range(200):
        data = b"%03d" % i
        got = list(cache.writes_for(sched(Write(10, data)), "POST"))
        assert got[1] == (10, b"3\r\n%s\r\n" % data)


def test_a_cache_entry_for_another_method_is_not_used() -> None:
    """An entry for this very schedule but framed for another method is not returned, even
    under the same hash: a HEAD response never gets the body framed for a POST."""
    s = sched(Write(10, b"ab"))
    cache = http1_writer.WritesCache()
    post = cache.writes_for(s, "POST")
    ((key, framed),) = cache._entries.items()
    key._hash = http1_writer._Same(s, "HEAD")._hash  # the same hash, another method
    cache._entries = {key: framed}
    assert list(cache.writes_for(s, "HEAD")) == [
        (0, b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
    ]
    assert post[0] == (0, WIRE_HEAD)


def test_an_equal_but_distinct_schedule_is_framed_on_its_own() -> None:
    """Schedules are found by identity (hashing the value costs per write, on every request):
    an equal schedule that is another object gets its own entry, with the same bytes."""
    cache = http1_writer.WritesCache()
    first, twin = sched(Write(10, b"ab")), sched(Write(10, b"ab"))
    a = cache.writes_for(first, "POST")
    b = cache.writes_for(twin, "POST")
    assert b is not a and b == a
    assert len(cache) == 2


# -- the head ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "chunked", "expected"),
    [
        ([(b"content-type", b"a"), (b"Content-Length", b"5"), (b"x", b"1")], True,
         [(b"content-type", b"a"), (b"x", b"1"), (b"transfer-encoding", b"chunked")]),
        ([(b"Transfer-Encoding", b"chunked"), (b"CONNECTION", b"close"),
          (b"keep-alive", b"timeout=5"), (b"x-keep", b"1")], False,
         [(b"x-keep", b"1")]),
        ([], True, [(b"transfer-encoding", b"chunked")]),
        ([(b"content-length", b"0")], False, []),
    ],
)  # fmt: skip
def test_wire_headers_replace_the_recorded_framing(
    headers: list[tuple[bytes, bytes]], chunked: bool, expected: list[tuple[bytes, bytes]]
) -> None:
    """Framing and per-hop headers (any case) are dropped, the rest kept in order, and chunked
    framing added when there is a body."""
    assert http1_writer.wire_headers(headers, chunked=chunked) == expected


def test_wire_headers_are_chunked_by_default() -> None:
    """Without ``chunked=``, the replayed response is chunked."""
    chunked = [(b"a", b"1"), (b"transfer-encoding", b"chunked")]
    assert http1_writer.wire_headers([(b"a", b"1")]) == chunked


@pytest.mark.parametrize(
    ("method", "status", "expected"),
    [
        ("GET", 200, True), ("POST", 201, True), ("GET", 205, True), ("GET", 500, True),
        ("HEAD", 200, False), ("GET", 100, False), ("GET", 199, False),
        ("GET", 204, False), ("GET", 304, False), ("get", 200, True),
    ],
)  # fmt: skip
def test_has_body(method: str, status: int, expected: bool) -> None:
    """No body for HEAD, 1xx, 204 and 304 (RFC 9112 section 6.3); a body for the rest."""
    assert http1_writer.has_body(method, status) is expected


@pytest.mark.parametrize(
    ("status", "reason", "headers", "expected"),
    [
        (200, "", [], b"HTTP/1.1 200 OK\r\n\r\n"),
        (404, "", [(b"a", b"1")], b"HTTP/1.1 404 Not Found\r\na: 1\r\n\r\n"),
        (200, "Fine", [(b"a", b"1"), (b"b", b"2")], b"HTTP/1.1 200 Fine\r\na: 1\r\nb: 2\r\n\r\n"),
        (299, "", [], b"HTTP/1.1 299 \r\n\r\n"),  # no standard phrase: none
        (200, "Tr\u00e8s bien", [], b"HTTP/1.1 200 Tr\xe8s bien\r\n\r\n"),
    ],
)  # fmt: skip
def test_head_bytes(
    status: int, reason: str, headers: list[tuple[bytes, bytes]], expected: bytes
) -> None:
    """The status line (the recorded reason, else the standard phrase; latin-1), the headers,
    the blank line."""
    assert http1_writer.head_bytes(status, reason, headers) == expected


# -- the body ----------------------------------------------------------------------------------


def test_no_head_means_no_writes() -> None:
    """A schedule without a head (the connection just finishes) has no socket writes."""
    empty = Schedule(None, (Write(10, b"ab"),), Finish(100, FinishKind.CLOSE))
    assert list(http1_writer.steps(empty, "POST")) == []


@pytest.mark.parametrize("status", [204, 304])
def test_a_bodiless_status_gets_the_head_without_chunking(status: int) -> None:
    """204 and 304: the head alone, no transfer-encoding, no terminator."""
    s = Schedule(Head(0, status, "", ()), (Write(10, b"ab"),), Finish(100, FinishKind.COMPLETE))
    got = list(http1_writer.steps(s, "GET"))
    assert got == [(0, http1_writer.head_bytes(status, "", []))]


@pytest.mark.parametrize("kind", [FinishKind.CLOSE, FinishKind.RESET, FinishKind.HANG])
def test_only_a_complete_finish_sends_the_terminator(kind: FinishKind) -> None:
    """An incomplete body (close, reset, hang) ends without the ``0`` chunk."""
    s = Schedule(HEAD, (Write(10, b"ab"),), Finish(100, kind))
    assert list(http1_writer.steps(s, "POST")) == [(0, WIRE_HEAD), (10, b"2\r\nab\r\n")]


def test_a_frame_of_exactly_join_max_is_one_chunk_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of JOIN_MAX bytes is framed whole (size line, data, CRLF in one piece); one
    byte more and it is sliced: size line, JOIN_MAX slices, CRLF, each its own piece."""
    monkeypatch.setattr(http1_writer, "JOIN_MAX", 4)
    pieces = list(http1_writer._pieces(sched(Write(10, b"0123"), Write(20, b"01234")), "POST"))
    assert pieces[1:] == [
        (10, b"4\r\n0123\r\n"),
        (20, b"5\r\n"),
        (20, b"0123"),
        (20, b"4"),
        (20, b"\r\n"),
        (100, b"0\r\n\r\n"),
    ]


def test_pieces_at_one_instant_are_joined_up_to_join_max(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same-instant pieces join while the write stays within JOIN_MAX (exactly JOIN_MAX is
    allowed); a piece that would pass it starts the next write; another instant always does."""
    monkeypatch.setattr(http1_writer, "JOIN_MAX", 13)
    s = Schedule(
        Head(5, 200, "OK", ()),
        (Write(5, b"a"), Write(5, b"bc"), Write(5, b"d"), Write(7, b"e")),
        Finish(7, FinishKind.COMPLETE),
    )
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    assert list(http1_writer.steps(s, "POST")) == [
        (5, head),  # longer than JOIN_MAX alone: never joined with what follows
        (5, b"1\r\na\r\n2\r\nbc\r\n"),  # 6 + 7 = 13: exactly JOIN_MAX
        (5, b"1\r\nd\r\n"),  # 13 + 6 > 13: the next write
        (7, b"1\r\ne\r\n0\r\n\r\n"),  # another instant; 6 + 5 = 11
    ]
    monkeypatch.setattr(http1_writer, "JOIN_MAX", 12)  # one byte under: not joined
    assert list(http1_writer.steps(s, "POST"))[1] == (5, b"1\r\na\r\n")


def test_compiled_size_is_the_bytes_written() -> None:
    """Compiled.size is the total of its socket writes' lengths."""
    c = http1_writer.compile_schedule(sched(Write(10, b"ab")), "POST")
    assert c.steps == ((0, WIRE_HEAD), (10, b"2\r\nab\r\n"), (100, b"0\r\n\r\n"))
    assert c.size == len(WIRE_HEAD) + 7 + 5


# -- the cache ---------------------------------------------------------------------------------


def test_small_schedules_are_cached_per_method() -> None:
    """Up to max_item (CACHE_ITEM by default) body bytes a schedule is framed once per method;
    one byte over, it is framed lazily each time and never cached."""
    assert http1_writer.WritesCache().max_item == http1_writer.CACHE_ITEM
    cache = http1_writer.WritesCache(max_item=4)
    at_bound = sched(Write(10, b"ab"), Write(20, b"cd"))
    post = cache.writes_for(at_bound, "POST")
    assert isinstance(post, tuple)
    assert cache.writes_for(at_bound, "POST") is post
    head = cache.writes_for(at_bound, "HEAD")
    assert list(head) == [(0, b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")]
    assert cache.writes_for(at_bound, "HEAD") is head
    size = sum(len(d) for _, d in post) + sum(len(d) for _, d in head)
    assert cache.size == size
    over = sched(Write(10, b"ab"), Write(20, b"cde"))
    lazy = cache.writes_for(over, "POST")
    assert not isinstance(lazy, tuple)
    assert list(lazy)[1:] == [(10, b"2\r\nab\r\n"), (20, b"3\r\ncde\r\n"), (100, b"0\r\n\r\n")]
    assert len(cache) == 2 and cache.size == size


def test_a_cache_entry_for_another_schedule_is_not_used() -> None:
    """An entry whose key hashes like this schedule's but holds another schedule (what an id()
    reused after the first was freed would give) is not returned: the schedule is framed
    afresh."""
    s = sched(Write(10, b"ab"))
    stale = http1_writer.Compiled(((0, b"stale"),))
    cache = http1_writer.WritesCache()
    key = http1_writer._Same(sched(), "POST")
    key._hash = http1_writer._Same(s, "POST")._hash  # the same hash, another object
    cache._entries[key] = stale
    got = cache.writes_for(s, "POST")
    assert list(got) == [(0, WIRE_HEAD), (10, b"2\r\nab\r\n"), (100, b"0\r\n\r\n")]


def test_the_recorded_reason_reaches_the_wire() -> None:
    """The schedule's recorded reason phrase is the one sent, not the standard one."""
    s = Schedule(Head(0, 200, "Fine", ()), (), Finish(0, FinishKind.COMPLETE))
    assert list(http1_writer.steps(s, "POST")) == [
        (0, b"HTTP/1.1 200 Fine\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n")
    ]


def test_the_head_joins_the_first_chunk_up_to_join_max(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head and a chunk due at its instant are one write when together they are exactly
    JOIN_MAX bytes, two when one byte more."""
    s = Schedule(HEAD, (Write(0, b"ab"),), Finish(100, FinishKind.COMPLETE))
    monkeypatch.setattr(http1_writer, "JOIN_MAX", len(WIRE_HEAD) + 7)
    assert list(http1_writer.steps(s, "POST"))[:2] == [
        (0, WIRE_HEAD + b"2\r\nab\r\n"),
        (100, b"0\r\n\r\n"),
    ]
    monkeypatch.setattr(http1_writer, "JOIN_MAX", len(WIRE_HEAD) + 6)
    assert list(http1_writer.steps(s, "POST"))[:2] == [(0, WIRE_HEAD), (0, b"2\r\nab\r\n")]
