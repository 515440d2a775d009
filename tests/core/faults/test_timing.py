"""Timing faults on a schedule (core/faults/timing.py): the exact planned writes and times."""

from __future__ import annotations

import random

import pytest

from replayproxy._core.faults.timing import (
    coalesce,
    jitter,
    keepalive,
    keepalive_count,
    shift_from,
    stall,
    throttle,
    throttle_count,
    ttfb,
)
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy.testing import MS, S

HEAD = Head(10 * MS, 200, "OK", ())
KA = b": ka\n\n"


def sched(
    writes: list[tuple[int, bytes]],
    finish: int,
    kind: FinishKind = FinishKind.COMPLETE,
    head: Head | None = HEAD,
) -> Schedule:
    return Schedule(head, tuple(Write(t, d) for t, d in writes), Finish(finish, kind))


BASE = sched([(20 * MS, b"ab"), (30 * MS, b"c")], 40 * MS)


def test_ttfb_moves_the_head_and_everything_after_it() -> None:
    """ttfb:delay=0.5: head, every write and the finish come 0.5 s later."""
    assert ttfb(BASE, 0.5) == sched(
        [(20 * MS + S // 2, b"ab"), (30 * MS + S // 2, b"c")],
        40 * MS + S // 2,
        head=Head(10 * MS + S // 2, 200, "OK", ()),
    )


def test_ttfb_without_a_head() -> None:
    """No head: the writes and the finish still move; delays round to the nanosecond."""
    got = ttfb(sched([(5, b"x")], 6, head=None), 1.5e-9)
    assert got == sched([(7, b"x")], 8, head=None)


@pytest.mark.parametrize(
    ("offset", "writes", "finish"),
    [
        (0, [(20 * MS + 7, b"ab"), (30 * MS + 7, b"c")], 40 * MS + 7),
        (1, [(20 * MS, b"a"), (20 * MS + 7, b"b"), (30 * MS + 7, b"c")], 40 * MS + 7),
        (2, [(20 * MS, b"ab"), (30 * MS + 7, b"c")], 40 * MS + 7),
        (3, [(20 * MS, b"ab"), (30 * MS, b"c")], 40 * MS + 7),
    ],
)
def test_shift_from_an_offset(offset: int, writes: list[tuple[int, bytes]], finish: int) -> None:
    """Bytes from the offset on (a write across it is split) and the finish move later."""
    assert shift_from(BASE, offset, 7) == sched(writes, finish)


def test_stall_is_a_shift_in_seconds() -> None:
    """stall:for=0.25 at byte 2 pauses 250 ms before the rest."""
    assert stall(BASE, 2, 0.25) == sched([(20 * MS, b"ab"), (280 * MS, b"c")], 290 * MS)


# A stream with a 10 s wait before its first event, 2 s between events, 8 s before the end.
LONG = sched([(10 * S, b"e1"), (12 * S, b"e2")], 20 * S, head=Head(0, 200, "OK", ()))


@pytest.mark.parametrize(
    ("boundaries", "every", "writes", "finish"),
    [
        (
            [0, 2, 4],
            3.0,
            [
                (3 * S, KA),
                (6 * S, KA),
                (9 * S, KA),
                (10 * S, b"e1"),
                (12 * S, b"e2"),
                (15 * S, KA),
                (18 * S, KA),
            ],
            20 * S,
        ),
        ([2], 3.0, [(10 * S, b"e1"), (12 * S, b"e2")], 20 * S),
        ([2], 1.5, [(10 * S, b"e1"), (11_500_000_000, KA), (12 * S, b"e2")], 20 * S),
        # A wait of exactly `every` gets no keepalive: it would coincide with the event.
        ([0], 5.0, [(5 * S, KA), (10 * S, b"e1"), (12 * S, b"e2")], 20 * S),
        ([1, 3], 1.0, [(10 * S, b"e1"), (12 * S, b"e2")], 20 * S),
    ],
)
def test_keepalive_fills_long_waits_at_event_boundaries(
    boundaries: list[int], every: float, writes: list[tuple[int, bytes]], finish: int
) -> None:
    """One keepalive every `every` s into each wait at a boundary, strictly before its end."""
    got = keepalive(LONG, boundaries, every, 300.0, KA)
    assert got == sched(writes, finish, head=LONG.head)
    assert keepalive_count(LONG, boundaries, every, 300.0) == len(writes) - 2


def test_keepalive_during_a_hang_runs_for_until_seconds() -> None:
    """A hang gets keepalives for `until` s after its last write; the hang starts after them."""
    hang = sched([(1 * S, b"e1")], 1 * S, FinishKind.HANG, head=Head(0, 200, "OK", ()))
    got = keepalive(hang, [2], 2.0, 7.0, KA)
    assert got == sched(
        [(1 * S, b"e1"), (3 * S, KA), (5 * S, KA), (7 * S, KA)],
        7 * S,
        FinishKind.HANG,
        head=hang.head,
    )
    assert keepalive_count(hang, [2], 2.0, 7.0) == 3


def test_keepalive_hang_counts_from_a_late_last_write() -> None:
    """A hang whose finish time is before its last write counts `until` from the write."""
    hang = sched([(4 * S, b"e1")], 1 * S, FinishKind.HANG, head=Head(0, 200, "OK", ()))
    got = keepalive(hang, [2], 2.0, 3.0, KA)
    assert got.writes == (Write(4 * S, b"e1"), Write(6 * S, KA))
    assert got.finish == Finish(6 * S, FinishKind.HANG)
    assert keepalive_count(hang, [2], 2.0, 3.0) == 1


def test_keepalive_never_moves_the_finish_earlier() -> None:
    """The finish is the later of its own time and the last write."""
    got = keepalive(LONG, [0], 3.0, 300.0, KA)
    assert got.finish == Finish(20 * S, FinishKind.COMPLETE)


def test_keepalive_needs_a_head_and_a_step() -> None:
    """No head: nothing is inserted; an interval that rounds to 0 ns changes nothing."""
    headless = sched([(10 * S, b"e1")], 20 * S, head=None)
    assert keepalive(headless, [0, 2], 1.0, 300.0, KA) == headless
    assert keepalive_count(headless, [0, 2], 1.0, 300.0) == 0
    assert keepalive(LONG, [0], 1e-10, 300.0, KA) is LONG
    assert keepalive_count(LONG, [0], 1e-10, 300.0) == 0


def test_keepalive_count_skips_empty_and_backward_waits() -> None:
    """A wait of zero length (or a finish before the last write) holds no keepalive."""
    odd = sched([(5 * S, b"a"), (5 * S, b"b")], 1 * S, head=Head(5 * S, 200, "OK", ()))
    assert keepalive_count(odd, [0, 1, 2], 1.0, 300.0) == 0
    assert keepalive(odd, [0, 1, 2], 1.0, 300.0, KA).writes == odd.writes


class FixedRng(random.Random):
    """A random source whose draws are fixed, so jitter's arithmetic can be checked exactly."""

    def __init__(self, uniform_at: str, lognormal: float = 2.0) -> None:
        super().__init__(0)
        self.uniform_at = uniform_at
        self.lognormal = lognormal
        self.calls: list[tuple[str, float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.calls.append(("uniform", a, b))
        return a if self.uniform_at == "low" else b

    def lognormvariate(self, mu: float, sigma: float) -> float:
        self.calls.append(("lognormal", mu, sigma))
        return self.lognormal


def test_uniform_jitter_adds_to_every_gap() -> None:
    """uniform: each gap (head, writes, finish) moves by a draw from U(-ms, +ms)."""
    rng = FixedRng("high")
    got = jitter(BASE, 2.0, "uniform", rng)
    # Gaps 10, 10, 10, 10 ms each grow by 2 ms.
    assert got == sched(
        [(24 * MS, b"ab"), (36 * MS, b"c")], 48 * MS, head=Head(12 * MS, 200, "OK", ())
    )
    assert rng.calls == [("uniform", -2.0 * MS, 2.0 * MS)] * 4


def test_jitter_never_makes_a_gap_negative() -> None:
    """A draw below -gap leaves that gap at 0: bytes never change order."""
    got = jitter(BASE, 15.0, "uniform", FixedRng("low"))
    assert got == sched([(0, b"ab"), (0, b"c")], 0, head=Head(0, 200, "OK", ()))


def test_lognormal_jitter_is_a_positive_delay_with_median_ms() -> None:
    """lognormal: each gap grows by ms * a LogNormal(0, 1) draw."""
    rng = FixedRng("high", lognormal=0.5)
    got = jitter(BASE, 4.0, "lognormal", rng)
    assert got == sched(
        [(24 * MS, b"ab"), (36 * MS, b"c")], 48 * MS, head=Head(12 * MS, 200, "OK", ())
    )
    assert rng.calls == [("lognormal", 0.0, 1.0)] * 4


def test_jitter_without_a_head() -> None:
    """Without a head the first gap is from 0 to the first write."""
    got = jitter(sched([(5 * MS, b"x")], 6 * MS, head=None), 1.0, "uniform", FixedRng("high"))
    assert got == sched([(6 * MS, b"x")], 8 * MS, head=None)


@pytest.mark.parametrize(
    ("bps", "writes", "finish"),
    [
        # 20 B/s: 1-byte pieces 50 ms apart.
        (
            20,
            [(20 * MS, b"a"), (70 * MS, b"b"), (120 * MS, b"c"), (170 * MS, b"d")],
            220 * MS,
        ),
        # 40 B/s: 2-byte pieces, each taking 50 ms.
        (40, [(20 * MS, b"ab"), (70 * MS, b"c"), (95 * MS, b"d")], 120 * MS),
        # 19 B/s: 1-byte pieces (never 0), each taking ceil(1e9 / 19) ns.
        (
            19,
            [
                (20 * MS, b"a"),
                (20 * MS + 52_631_579, b"b"),
                (20 * MS + 2 * 52_631_579, b"c"),
                (20 * MS + 3 * 52_631_579, b"d"),
            ],
            20 * MS + 4 * 52_631_579,
        ),
        # Fast enough: each write keeps its time; the finish stays.
        (1000, [(20 * MS, b"abc"), (30 * MS, b"d")], 40 * MS),
    ],
)
def test_throttle_paces_the_bytes(bps: int, writes: list[tuple[int, bytes]], finish: int) -> None:
    """throttle:bps=N: 50 ms slices of N/20 bytes, sent no faster than N bytes per second."""
    base = sched([(20 * MS, b"abc"), (30 * MS, b"d")], 40 * MS)
    got = throttle(base, bps)
    assert got == sched(writes, finish)
    assert throttle_count(base, bps) == len(writes)


def test_throttle_starts_no_earlier_than_the_head() -> None:
    """A write recorded before the head (hand-edited) waits for the head."""
    early = sched([(1 * MS, b"ab")], 2 * MS)
    assert throttle(early, 40) == sched([(10 * MS, b"ab")], 60 * MS)
    assert throttle(sched([(1 * MS, b"ab")], 2 * MS, head=None), 40) == sched(
        [(1 * MS, b"ab")], 51 * MS, head=None
    )


def test_throttle_count_rounds_pieces_up() -> None:
    """Each write is ceil(len / piece) pieces."""
    base = sched([(0, b"x" * 5), (0, b"y" * 4)], 0)
    assert throttle_count(base, 80) == 2 + 1  # pieces of 4 bytes
    assert throttle_count(base, 1) == 9


@pytest.mark.parametrize(
    ("window", "writes"),
    [
        (None, [(2_600 * MS, b"abcde")]),
        (0.0, [(2_600 * MS, b"abcde")]),
        (1.0, [(1_000 * MS, b"ab"), (2_000 * MS, b"c"), (2_600 * MS, b"de")]),
        (0.5, [(500 * MS, b"a"), (1_000 * MS, b"b"), (1_500 * MS, b"c"), (2_600 * MS, b"de")]),
        (10.0, [(2_600 * MS, b"abcde")]),
    ],
)
def test_coalesce_flushes_per_window(window: float | None, writes: list[tuple[int, bytes]]) -> None:
    """Bytes are held to the end of their window (counted from the head); the last flush is
    with the last byte."""
    base = sched(
        [
            (200 * MS, b"a"),
            (900 * MS, b"b"),
            (1_000 * MS, b"c"),
            (2_500 * MS, b"d"),
            (2_600 * MS, b"e"),
        ],
        3 * S,
        head=Head(0, 200, "OK", ()),
    )
    assert coalesce(base, window) == sched(writes, 3 * S, head=base.head)


def test_coalesce_windows_start_at_the_head() -> None:
    """With the head at 0.5 s, 1 s windows end at 1.5 s, 2.5 s, ..."""
    base = sched([(600 * MS, b"a"), (1_400 * MS, b"b"), (1_500 * MS, b"c"), (3 * S, b"d")], 3 * S,
                 head=Head(500 * MS, 200, "OK", ()))  # fmt: skip
    assert coalesce(base, 1.0).writes == (
        Write(1_500 * MS, b"ab"),
        Write(2_500 * MS, b"c"),
        Write(3 * S, b"d"),
    )


def test_coalesce_of_nothing_is_nothing() -> None:
    """A schedule without writes is returned as it is."""
    empty = sched([], 5)
    assert coalesce(empty, None) is empty
    assert coalesce(empty, 1.0) is empty


def test_keepalive_every_nanosecond() -> None:
    """The smallest interval, 1 ns: a 5 ns wait holds keepalives at 1, 2, 3 and 4 ns."""
    tiny = sched([(5, b"e")], 5, head=Head(0, 200, "OK", ()))
    assert keepalive_count(tiny, [0], 1e-9, 0.0) == 4
    assert keepalive(tiny, [0], 1e-9, 0.0, KA).writes == (
        Write(1, KA),
        Write(2, KA),
        Write(3, KA),
        Write(4, KA),
        Write(5, b"e"),
    )


def test_throttle_pieces_are_whole_bytes() -> None:
    """30 B/s: pieces of 1 byte (30 // 20), never 1.5."""
    base = sched([(0, b"abc")], 0)
    assert throttle_count(base, 30) == 3
    assert [w.data for w in throttle(base, 30).writes] == [b"a", b"b", b"c"]


def test_throttle_without_a_head_starts_at_zero() -> None:
    """No head: a write at 0 is sent at 0."""
    got = throttle(sched([(0, b"ab")], 0, head=None), 40)
    assert got.writes == (Write(0, b"ab"),)
