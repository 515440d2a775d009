"""Where split cuts a body (core/faults/bytes.py): exact points per mode, exact counts, and the
seeded random pieces with fixed draws."""

from __future__ import annotations

import random

import pytest

from replayproxy._core.faults.bytes import split, split_count, split_points
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write


class Draws(random.Random):
    """randint() always at the low or the high end of its range; the calls are recorded."""

    def __init__(self, end: str) -> None:
        super().__init__(0)
        self.end = end
        self.calls: list[tuple[int, int]] = []

    def randint(self, a: int, b: int) -> int:
        self.calls.append((a, b))
        return a if self.end == "low" else b


UTF8 = "aé€😀".encode()  # lead bytes at 1, 3 and 6


@pytest.mark.parametrize(
    ("body", "at", "size", "points", "count"),
    [
        (b"0123456789", None, 3, [3, 6, 9], 3),
        (b"012345", None, 3, [3], 2),
        (UTF8, "utf8", None, [2, 4, 7], 3),
        (b"\xc0\xc1\xffa", "utf8", None, [1, 2, 3], 3),
        (b"\xbfa\xc3", "utf8", None, [], 1),
        (b"\xc3\xa9", "utf8", None, [1], 1),
        (b"a\r\nb\r\n", "crlf", None, [2, 5], 2),
        (b"a\rb\n", "crlf", None, [], 0),
        (b"data: abcd\r\ndata:\n: x data:\n", "midline", None, [5, 14], 3),
        (b"event: e\n", "midline", None, [], 0),
    ],
)
def test_split_points_and_counts(
    body: bytes, at: str | None, size: int | None, points: list[int], count: int
) -> None:
    """Each mode's cut points exactly, and the bound split_count gives for them."""
    assert split_points(body, at, size, 16, random.Random(0)) == points
    assert split_count(body, at, size, 16) == count


@pytest.mark.parametrize(
    ("n", "avg", "count"),
    [(100, 16, 13), (100, 1, 100), (100, 2, 101), (10, 3, 7), (0, 4, 1)],
)
def test_random_split_count(n: int, avg: int, count: int) -> None:
    """at=random: at most 2n // avg + 1 pieces (n when every piece is 1 byte)."""
    assert split_count(b"x" * n, "random", None, avg) == count


@pytest.mark.parametrize(
    ("n", "avg", "end", "points", "calls"),
    [
        # Pieces of 2 * avg - 1 bytes at most.
        (10, 3, "high", [5], [(1, 5), (1, 5)]),
        (12, 2, "high", [3, 6, 9], [(1, 3)] * 4),
        # Pieces of 1 byte, capped at split_count's bound (2 * 10 // 3 + 1 = 7).
        (10, 3, "low", [1, 2, 3, 4, 5, 6, 7], [(1, 5)] * 8),
        # avg=1: every byte, no draw.
        (5, 1, "high", [1, 2, 3, 4], []),
    ],
)
def test_random_points_follow_the_draws(
    n: int, avg: int, end: str, points: list[int], calls: list[tuple[int, int]]
) -> None:
    """Each piece is randint(1, 2 * avg - 1) bytes; points stay strictly inside the body."""
    draws = Draws(end)
    assert split_points(b"x" * n, "random", None, avg, draws) == points
    assert draws.calls == calls


def test_split_spaces_the_pieces_of_one_write_and_moves_later_writes_only_if_pushed() -> None:
    """Pieces of one write go gap apart; a later write keeps its time unless the pieces
    before it push it; the finish moves with the last piece."""
    sched = Schedule(
        Head(5, 200, "OK", ()),
        (Write(10, b"abcd"), Write(20, b"ef")),
        Finish(30, FinishKind.COMPLETE),
    )
    got = split(sched, [2, 5], 0.001)
    assert got.writes == (
        Write(10, b"ab"),
        Write(1_000_010, b"cd"),
        Write(1_000_010, b"e"),
        Write(2_000_010, b"f"),
    )
    assert got.finish == Finish(2_000_010, FinishKind.COMPLETE)
    assert split(sched, [], 0.001) == sched


def test_split_waits_for_the_head_and_keeps_a_later_finish() -> None:
    """No piece goes before the head; no head means from 0; no writes keeps the finish."""
    late_head = Schedule(Head(50, 200, "OK", ()), (Write(10, b"ab"),), Finish(99, FinishKind.CLOSE))
    assert split(late_head, [1], 0.0).writes == (Write(50, b"a"), Write(50, b"b"))
    headless = Schedule(None, (Write(0, b"ab"),), Finish(99, FinishKind.CLOSE))
    assert split(headless, [1], 0.0).writes == (Write(0, b"a"), Write(0, b"b"))
    empty = Schedule(Head(5, 200, "OK", ()), (), Finish(99, FinishKind.HANG))
    assert split(empty, [], 0.5) == empty
