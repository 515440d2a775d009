"""engine/framing.py exactly: the socket writes a schedule becomes (chunks, joins, slices of a
big frame, HEAD) and the bounded cache of framed schedules. Found untested by exact values by
the mutation sample: a skipped empty write that ended the body, a big frame's slices, HEAD
on the lazy path, the cache bound."""

from __future__ import annotations

import pytest

from replayproxy.core.schedule import Finish, FinishKind, Head, Schedule, Write
from replayproxy.engine import framing

HEAD = Head(0, 200, "OK", ((b"content-type", b"text/event-stream"),))
WIRE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def sched(*writes: Write, end: int = 100) -> Schedule:
    return Schedule(HEAD, writes, Finish(end, FinishKind.COMPLETE))


def test_an_empty_write_is_skipped_and_the_body_goes_on() -> None:
    """An empty recorded write would be the chunked terminator: it is left out, and the
    writes after it are still sent."""
    got = list(framing.steps(sched(Write(10, b"ab"), Write(20, b""), Write(30, b"cd")), "POST"))
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
    monkeypatch.setattr(framing, "JOIN_MAX", 4)
    got = list(framing.steps(sched(Write(10, b"0123456789")), "POST"))
    assert [t for t, _ in got][1:-1] == [10] * (len(got) - 2)
    assert all(len(d) <= 4 for _, d in got[1:-1])
    assert b"".join(d for _, d in got[1:]) == b"a\r\n0123456789\r\n0\r\n\r\n"


def test_head_gets_the_head_alone_on_the_lazy_path_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schedule too big to cache is framed lazily, and a HEAD request still gets only the
    head (without chunked framing): the method reaches the framer."""
    monkeypatch.setattr(framing, "CACHE_ITEM", 1)
    got = list(framing.writes_for(sched(Write(10, b"ab")), "HEAD"))
    assert got == [(0, b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")]


def test_the_cache_keeps_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Framed schedules are cached (the same object comes back) until the cache would pass
    CACHE_BYTES; then the oldest go first, and exactly at the bound nothing is evicted."""
    monkeypatch.setattr(framing, "_CACHE", {})
    monkeypatch.setattr(framing, "_cached_bytes", 0)
    first = sched(Write(10, b"ab"))
    size = framing.compile_schedule(first, "POST").size
    monkeypatch.setattr(framing, "CACHE_BYTES", 2 * size)
    a = framing.writes_for(first, "POST")
    assert framing.writes_for(first, "POST") is a  # cached
    second = sched(Write(10, b"cd"))
    framing.writes_for(second, "POST")
    assert framing._cached_bytes == 2 * size  # at the bound: both kept
    assert framing.writes_for(first, "POST") is a
    framing.writes_for(sched(Write(10, b"ef")), "POST")  # over it: the oldest goes
    assert framing._cached_bytes == 2 * size
    assert framing.writes_for(first, "POST") is not a
