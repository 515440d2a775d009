"""The engine's injectable clock (replayproxy._engine.clock): the virtual clock moves only when
the code waits, wakes waiters in deadline order at their exact times, records every sleep and
write; the loop clock is the real one. What the engine times on it is in test_pacing.py."""

from __future__ import annotations

import asyncio

import pytest

from replayproxy._engine.clock import LOOP_CLOCK, VirtualClock, Written
from replayproxy._engine.http1_reader import RequestTimeout, StampedReader
from replayproxy._engine.websocket import _Wakeup
from replayproxy.testing import MS, S


def test_time_stands_still_until_the_code_sleeps() -> None:
    """Work that does not wait takes no virtual time; a sleep moves the clock to its deadline."""
    clock = VirtualClock(start_ns=7 * S)

    async def main() -> list[int]:
        seen = [clock.ns]
        await asyncio.sleep(0)
        seen.append(clock.ns)
        await clock.sleep_until(9.5)
        seen.append(clock.ns)
        return seen

    assert asyncio.run(main()) == [7 * S, 7 * S, 9_500_000_000]
    assert clock.sleeps == [(7 * S, 9_500_000_000)]


def test_concurrent_sleepers_wake_in_deadline_order_at_their_deadlines() -> None:
    """Two tasks sleeping to 5 s and 3 s: the 3 s one wakes first, each at its own deadline
    (a clock that jumped per sleeper would wake both at 5 s)."""
    clock = VirtualClock()
    woke: list[tuple[str, int]] = []

    async def sleeper(name: str, until: float) -> None:
        await clock.sleep_until(until)
        woke.append((name, clock.ns))

    async def main() -> None:
        await asyncio.gather(sleeper("late", 5.0), sleeper("early", 3.0))

    asyncio.run(main())
    assert woke == [("early", 3 * S), ("late", 5 * S)]


def test_a_sleep_into_the_past_returns_at_once() -> None:
    """A deadline already passed does not move the clock (absolute deadlines, no catch-up
    sleep)."""
    clock = VirtualClock(start_ns=4 * S)

    async def main() -> None:
        await clock.sleep_until(1.0)

    asyncio.run(main())
    assert clock.ns == 4 * S
    assert clock.sleeps == [(4 * S, S)]


def test_a_cancelled_timer_neither_runs_nor_moves_the_clock() -> None:
    """call_at's timer cancelled before it is due: its callback never runs, and the clock
    stops at the next real deadline instead of its."""
    clock = VirtualClock()
    ran: list[int] = []

    async def main() -> None:
        timer = clock.call_at(10.0, ran.append, 1)
        clock.call_at(2.0, ran.append, 2)
        timer.cancel()
        await clock.sleep_until(3.0)

    asyncio.run(main())
    assert ran == [2]
    assert clock.ns == 3 * S


def test_late_wake_ups_are_added_to_each_deadline() -> None:
    """late_ns models a loop that wakes late: every wake-up comes that much after its deadline;
    late_once_ns only the next one."""
    clock = VirtualClock(late_ns=2 * MS)
    clock.late_once_ns = 30 * MS
    times: list[int] = []

    async def main() -> None:
        for t in (1.0, 2.0):
            await clock.sleep_until(t)
            times.append(clock.ns)

    asyncio.run(main())
    assert times == [S + 32 * MS, 2 * S + 2 * MS]


def test_the_virtual_writer_records_writes_closes_and_aborts_at_their_times() -> None:
    """Each write, the close and a later abort are recorded with the virtual time they
    happened at; an abort after the close is not a second ending."""
    clock = VirtualClock()
    writer = clock.writer()

    async def main() -> None:
        writer.write(b"a")
        await clock.sleep_until(1.5)
        writer.write(b"b")
        await writer.drain()
        writer.close()
        writer.transport.abort()

    asyncio.run(main())
    assert writer.writes == [(0, b"a"), (1_500_000_000, b"b")]
    assert writer.events[-1] == Written(1_500_000_000, "close")
    assert writer.transport.is_closing()


def test_the_loop_clock_is_the_running_loops_clock() -> None:
    """LOOP_CLOCK reads loop.time() and its sleep ends no earlier than the deadline."""

    async def main() -> tuple[float, float, float]:
        loop = asyncio.get_running_loop()
        before = loop.time()
        read = LOOP_CLOCK.time()
        await LOOP_CLOCK.sleep_until(read + 0.01)
        return before, read, loop.time()

    before, read, after = asyncio.run(main())
    assert before <= read
    assert after >= read + 0.01


def test_a_wake_up_is_cut_short_by_a_miss_at_its_virtual_time() -> None:
    """The WebSocket sender's wait for a send due at 10 s ends at 4 s when a miss is set then
    (the explained close goes out at once), on the injected clock."""
    clock = VirtualClock()
    wakeup = _Wakeup(clock)

    async def main() -> int:
        clock.call_at(4.0, wakeup.set)
        await wakeup.sleep(10.0)
        return clock.ns

    assert asyncio.run(main()) == 4 * S
    assert wakeup.is_set


def _watched(clock: VirtualClock, head_s: float, body_s: float) -> StampedReader:
    reader = StampedReader()
    reader.clock = clock
    reader.watch(head_s, body_s)
    return reader


@pytest.mark.parametrize("head_s", [0.5, 5.0, 30.0])
def test_a_silent_client_times_out_exactly_at_head_timeout(head_s: float) -> None:
    """No request head at all: the read fails with the head timeout at exactly head_timeout
    seconds on the reader's clock."""
    clock = VirtualClock()

    async def main() -> RequestTimeout:
        reader = _watched(clock, head_s, 1.0)
        reader.reading("head")
        with pytest.raises(RequestTimeout) as caught:
            await reader.readuntil(b"\r\n\r\n")
        return caught.value

    error = asyncio.run(main())
    assert clock.ns == round(head_s * S)
    assert "head_timeout" in str(error)
    assert not error.partial


def test_a_trickled_head_still_times_out_at_head_timeout_from_its_start() -> None:
    """Head bytes arriving every second do not extend the head timeout (5 s from when the
    head began), unlike a body's pause timeout."""
    clock = VirtualClock()

    async def main() -> RequestTimeout:
        reader = _watched(clock, 5.0, 1.0)
        reader.reading("head")
        for t in range(1, 8):
            clock.call_at(float(t), reader.feed_data, b"x")
        with pytest.raises(RequestTimeout) as caught:
            await reader.readuntil(b"\r\n\r\n")
        return caught.value

    error = asyncio.run(main())
    assert clock.ns == 5 * S
    assert error.partial


def test_a_body_times_out_body_timeout_after_its_last_bytes() -> None:
    """A body whose bytes stop at 1.5 s times out at 1.5 s + body_timeout exactly (the pause,
    not the whole body, is bounded)."""
    clock = VirtualClock()

    async def main() -> None:
        reader = _watched(clock, 5.0, 2.0)
        reader.reading("body")
        clock.call_at(0.5, reader.feed_data, b"ab")
        clock.call_at(1.5, reader.feed_data, b"cd")
        with pytest.raises(RequestTimeout, match="body_timeout"):
            await reader.readexactly(10)

    asyncio.run(main())
    assert clock.ns == 3_500_000_000
