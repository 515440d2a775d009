"""The schedule executor (replayproxy._engine.pacing) on the injected virtual clock and writer:
every socket write goes out at exactly its offset at recorded speed and at any ``--speed``, late
wake-ups neither drift nor delay what follows, an overdue start keeps the gaps, each finish
happens at its offset, and the timing faults' schedules are kept to the nanosecond. No sockets
and no wall clock: the offsets are asserted exactly."""

from __future__ import annotations

import asyncio
import random

import pytest

from replayproxy._core.faults.timing import jitter, keepalive, stall, throttle
from replayproxy._core.schedule.model import (
    Finish,
    FinishKind,
    Head,
    Schedule,
    Write,
    scale,
)
from replayproxy._engine.clock import VirtualClock, VirtualWriter
from replayproxy._engine.http1_writer import steps
from replayproxy._engine.pacing import execute
from replayproxy.testing import MS, S


def sse(head_ms: int, writes_ms: list[int], end_ms: int, kind: FinishKind) -> Schedule:
    return Schedule(
        Head(head_ms * MS, 200, "OK", ((b"content-type", b"text/event-stream"),)),
        tuple(Write(t * MS, b"data: %d\n\n" % i) for i, t in enumerate(writes_ms)),
        Finish(end_ms * MS, kind),
    )


RECORDED = sse(120, [300, 300, 750, 1500, 4000], 4200, FinishKind.COMPLETE)


def run(
    schedule: Schedule,
    clock: VirtualClock,
    t0: float = 0.0,
    *,
    eof_at: float | None = None,
) -> tuple[bool, VirtualWriter]:
    """Execute ``schedule`` (framed as the origin frames it) from ``t0`` on ``clock``; the
    client leaves at ``eof_at``. Returns whether the connection is kept, and the writer."""
    writer = clock.writer()

    async def main() -> bool:
        reader = asyncio.StreamReader()
        if eof_at is not None:
            clock.call_at(eof_at, reader.feed_eof)
        return await execute(schedule, steps(schedule, "POST"), t0, reader, writer, clock)

    return asyncio.run(main()), writer


def times(writer: VirtualWriter) -> list[int]:
    return [at for at, _ in writer.writes]


def test_frames_are_written_at_exactly_their_recorded_offsets() -> None:
    """Head, each chunk (two due together share a write) and the terminator go out at their
    recorded offsets from the request, to the nanosecond; the connection is kept."""
    kept, writer = run(RECORDED, VirtualClock())
    assert writer.writes == list(steps(RECORDED, "POST"))
    assert times(writer) == [120 * MS, 300 * MS, 750 * MS, 1500 * MS, 4000 * MS, 4200 * MS]
    assert kept
    assert writer.events[-1].kind == "write"  # COMPLETE: no close


def test_offsets_count_from_when_the_request_arrived() -> None:
    """A request that arrived at 100 s on the clock: every write is at 100 s + its offset."""
    clock = VirtualClock(start_ns=100 * S)
    _, writer = run(RECORDED, clock, t0=100.0)
    assert times(writer) == [100 * S + at for at, _ in steps(RECORDED, "POST")]


@pytest.mark.parametrize("speed", [0.5, 2.0, 10.0, 3.0])
def test_speed_divides_every_offset(speed: float) -> None:
    """At --speed N each write goes out at its recorded offset divided by N (rounded to the
    nanosecond), nothing else changes."""
    _, writer = run(scale(RECORDED, speed), VirtualClock())
    assert times(writer) == [round(at / speed) for at, _ in steps(RECORDED, "POST")]
    assert b"".join(d for _, d in writer.writes) == b"".join(d for _, d in steps(RECORDED, "POST"))


def test_speed_zero_sends_everything_at_once() -> None:
    """--speed 0: every write at the request's instant, no sleep waits for anything."""
    clock = VirtualClock()
    _, writer = run(scale(RECORDED, 0), clock)
    assert set(times(writer)) == {0}
    assert all(deadline <= began for began, deadline in clock.sleeps)


@pytest.mark.parametrize("late_ms", [1, 7])
def test_late_wake_ups_do_not_drift(late_ms: int) -> None:
    """Every wake-up late by the same amount: each write is late by exactly that amount, the
    last included (relative sleeps would add it once per write)."""
    _, writer = run(RECORDED, VirtualClock(late_ns=late_ms * MS))
    expected = [at + late_ms * MS for at, _ in steps(RECORDED, "POST")]
    assert times(writer) == expected


def test_one_late_wake_up_catches_up() -> None:
    """A first wake-up 500 ms late: the writes due by then go out at once, the later ones
    are back on their own offsets."""
    clock = VirtualClock()
    clock.late_once_ns = 500 * MS
    _, writer = run(RECORDED, clock)
    assert times(writer) == [620 * MS, 620 * MS, 750 * MS, 1500 * MS, 4000 * MS, 4200 * MS]


def test_an_overdue_first_write_starts_late_and_keeps_the_gaps() -> None:
    """The request reached us 2 s before the executor started (first write due at 120 ms):
    the first write goes at once and the rest keep their recorded gaps from it, no burst."""
    clock = VirtualClock(start_ns=2 * S)
    _, writer = run(RECORDED, clock, t0=0.0)
    shift = 2 * S - 120 * MS
    assert times(writer) == [shift + at for at, _ in steps(RECORDED, "POST")]


@pytest.mark.parametrize(
    ("kind", "ending"), [(FinishKind.CLOSE, "close"), (FinishKind.RESET, "abort")]
)
def test_a_cut_ends_at_its_finish_offset(kind: FinishKind, ending: str) -> None:
    """CLOSE (a FIN) and RESET (no socket here: an abort) happen at the finish's offset,
    after the last write and without the terminator; the connection is not kept."""
    schedule = sse(100, [200, 900], 2500, kind)
    kept, writer = run(schedule, VirtualClock())
    assert not kept
    assert times(writer) == [100 * MS, 200 * MS, 900 * MS]
    assert (writer.events[-1].at_ns, writer.events[-1].kind) == (2500 * MS, ending)


def test_a_hang_says_nothing_until_the_client_leaves() -> None:
    """HANG: after the last write nothing is written, the connection is neither closed nor
    kept, and the executor returns when the client leaves (at 60 s here)."""
    clock = VirtualClock()
    kept, writer = run(sse(100, [200], 300, FinishKind.HANG), clock, eof_at=60.0)
    assert not kept
    assert times(writer) == [100 * MS, 200 * MS]
    assert [e.kind for e in writer.events] == ["write", "write"]
    assert clock.ns == 60 * S


def test_no_response_closes_at_the_finish_offset() -> None:
    """A schedule with no response (recorded: the upstream never answered) closes the
    connection at its finish offset, having written nothing."""
    schedule = Schedule(None, (), Finish(3 * S, FinishKind.CLOSE))
    kept, writer = run(schedule, VirtualClock())
    assert not kept
    assert [(e.at_ns, e.kind) for e in writer.events] == [(3 * S, "close")]


def test_a_stall_delays_everything_after_it_by_its_duration() -> None:
    """stall:for=2 at the third chunk's body offset: the writes before it keep their
    offsets, it and everything after (terminator included) go out exactly 2 s later."""
    offset = sum(len(w.data) for w in RECORDED.writes[:2])
    _, writer = run(stall(RECORDED, offset, 2.0), VirtualClock())
    assert times(writer) == [120 * MS, 300 * MS, 2750 * MS, 3500 * MS, 6000 * MS, 6200 * MS]


def test_keepalives_fill_a_long_gap_every_interval() -> None:
    """keepalive every 1 s at an event boundary: a 2.5 s gap (1.5 s -> 4 s) gets keepalive
    writes at 2.5 s and 3.5 s exactly, between the recorded writes."""
    offset = sum(len(w.data) for w in RECORDED.writes[:4])
    ping = b": keepalive\n\n"
    schedule = keepalive(RECORDED, [offset], 1.0, 0.0, ping)
    _, writer = run(schedule, VirtualClock())
    pings = [at for at, data in writer.writes if ping in data]
    assert pings == [2500 * MS, 3500 * MS]
    assert times(writer)[-2:] == [4000 * MS, 4200 * MS]


def test_throttle_paces_slices_at_the_byte_rate() -> None:
    """throttle at 200 B/s: a 40-byte write goes out in 10-byte slices (bps/20) 50 ms
    apart, starting at its recorded offset."""
    schedule = Schedule(Head(0, 200, "OK", ()), (Write(S, b"x" * 40),), Finish(S, FinishKind.CLOSE))
    _, writer = run(throttle(schedule, 200), VirtualClock())
    assert times(writer) == [0, S, S + 50 * MS, S + 100 * MS, S + 150 * MS]
    assert writer.events[-1].at_ns == S + 200 * MS  # the finish waits for the last slice


def test_jitter_is_executed_exactly_as_planned_and_in_order() -> None:
    """A jittered schedule (seeded) is sent exactly at its perturbed offsets, which never go
    backwards: the executor adds no timing of its own."""
    planned = jitter(RECORDED, 50.0, "uniform", random.Random(7))
    _, writer = run(planned, VirtualClock())
    assert times(writer) == [at for at, _ in steps(planned, "POST")]
    assert times(writer) == sorted(times(writer))
    assert times(writer) != [at for at, _ in steps(RECORDED, "POST")]
