"""Event edits (core/faults/events.py): drop, duplicate, reorder and corrupt, byte for byte."""

from __future__ import annotations

import pytest

from replayproxy._core.faults.events import corrupt, drop, duplicate, payload_span, reorder
from replayproxy._core.faults.position import splice
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._core.wire.events import EventSpan


@pytest.mark.parametrize(
    ("raw", "span"),
    [
        (b"data: abc\n\n", (6, 9)),
        (b"data:abc\n\n", (5, 8)),
        (b"data:  abc\n", (6, 10)),  # only one space after the colon belongs to the field
        (b"data: abc", (6, 9)),  # no line end: the value runs to the end
        (b"data:", (5, 5)),
        (b"event: x\ndata: ab\n\n", (15, 17)),
        (b"event: x\r\ndata: ab\r\n\r\n", (16, 18)),
        (b"event: x\rdata: ab\r\r", (15, 17)),
        (b"\ndata: x\n", (7, 8)),
        (b"\rdata: x\r", (7, 8)),
        (b"data: first\ndata: second\n\n", (6, 11)),
        (b"id: 1\r\ndata: x\ny\n", (13, 14)),
        (b"id: 1\n", None),
        (b"", None),
        (b"xdata: 1\n", None),
        (b"event: a\ndata\n\n", None),
        (b": data: 1\n\n", None),
    ],
)
def test_payload_span(raw: bytes, span: tuple[int, int] | None) -> None:
    """[start, end) of the first data: value; CR, LF and CRLF all end a line."""
    assert payload_span(raw) == span


_HEAD = Head(5, 200, "OK", ())


def _sched(*writes: tuple[int, bytes]) -> Schedule:
    return Schedule(_HEAD, tuple(Write(t, d) for t, d in writes), Finish(99, FinishKind.COMPLETE))


@pytest.mark.parametrize(
    ("first", "corrupted"),
    [
        (b"data: abcd\n\n", (b"data: ab", b"\n\n")),
        (b"data: abc\n\n", (b"data: a", b"\n\n")),
        (b"data: ab\n\n", (b"data: a", b"\n\n")),
        (b"event: e\r\ndata:{}\r\n\r\n", (b"event: e\r\ndata:{", b"\r\n\r\n")),
    ],
)
def test_corrupt_cuts_the_second_half_of_the_first_data_value(
    first: bytes, corrupted: tuple[bytes, bytes]
) -> None:
    """SSE: the first data: value loses its second half (the write is cut there, both pieces
    at its time); line ends and later events stay."""
    sched = _sched((10, first), (20, b"data: x\n\n"))
    got = corrupt(sched, EventSpan(0, 0, len(first), "message"), sse=True)
    assert got == _sched((10, corrupted[0]), (10, corrupted[1]), (20, b"data: x\n\n"))


@pytest.mark.parametrize("first", [b"data: a\n\n", b"data:\n\n", b": c\nid: 1\n\n"])
def test_corrupt_needs_two_payload_bytes(first: bytes) -> None:
    """A value shorter than 2 bytes (or none) cannot be cut: corrupt says so with None."""
    sched = _sched((10, first))
    assert corrupt(sched, EventSpan(0, 0, len(first), "message"), sse=True) is None


def test_corrupt_flips_the_middle_byte_of_an_eventstream_message() -> None:
    """Event-stream: the byte in the middle of the message is inverted, nothing else moves."""
    sched = _sched((10, b"xx"), (20, b"0123456789"), (30, b"yy"))
    got = corrupt(sched, EventSpan(1, 2, 12, "m"), sse=False)
    assert got == _sched((10, b"xx"), (20, b"01234"), (20, b"\xca"), (20, b"6789"), (30, b"yy"))


def test_drop_duplicate_reorder_are_exact() -> None:
    """drop removes the span; duplicate writes it again right after; reorder swaps two spans
    (with what lies between them kept in place)."""
    sched = _sched((10, b"A1"), (20, b"--"), (30, b"B22"))
    a, b = EventSpan(0, 0, 2, "a"), EventSpan(1, 4, 7, "b")
    assert drop(sched, a) == _sched((20, b"--"), (30, b"B22"))
    assert duplicate(sched, a) == _sched((10, b"A1"), (10, b"A1"), (20, b"--"), (30, b"B22"))
    assert reorder(sched, a, b) == _sched((10, b"B22--A1"))


def test_splice_an_insertion_before_any_write() -> None:
    """Bytes inserted at 0 of a body with no writes before them go at the head's time (0
    without a head); removing nothing and inserting nothing changes nothing."""
    sched = _sched((10, b"ab"))
    assert splice(sched, 0, 0, b"x").writes == (Write(5, b"x"), Write(10, b"ab"))
    headless = Schedule(None, (Write(10, b"ab"),), Finish(99, FinishKind.COMPLETE))
    assert splice(headless, 0, 0, b"x").writes == (Write(0, b"x"), Write(10, b"ab"))
    assert splice(sched, 1, 1, b"").writes == (Write(10, b"a"), Write(10, b"b"))
