"""Sending one schedule on a connection against the clock: when it starts, then each write
at its absolute offset, then the finish.

When the clock starts (docs/guides/replay.md, "Timing"): offsets count from the
moment the *whole request* reached replayproxy, the analogue of the recording, whose offsets count
from when the complete request was sent upstream (the origin, :mod:`~replayproxy._engine.origin`,
says when that was). The time spent parsing, matching, running hooks and (behind mitmproxy) opening
the hop to the origin is absorbed by the schedule instead of being added to it, up to the first
write's offset: a request that arrives after its first write was due starts the schedule late,
keeping the recorded gaps (:func:`execute`). Behind mitmproxy at most
:data:`ABSORB_MAX` is absorbed (:func:`clock_start`).

Every write goes out at its *absolute* offset from that start (no drift: a late wake-up does
not delay the writes after it), then the finish: nothing more (COMPLETE: the terminator is the
last write, the connection is kept alive), a FIN (CLOSE), a TCP RST (RESET) or silence until
the peer leaves (HANG).

The clock and the writer are injected (:mod:`~replayproxy._engine.clock`): the event loop's
clock and the connection's :class:`asyncio.StreamWriter` when serving, a
:class:`~replayproxy._engine.clock.VirtualClock` and its recording writer in tests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from replayproxy._core.schedule.model import FinishKind, Schedule
from replayproxy._engine.clock import LOOP_CLOCK, Clock, Writer
from replayproxy._engine.sockets import reset_after_drain

__all__ = ["ABSORB_MAX", "clock_start", "execute", "late_start", "sleep_until"]

ABSORB_MAX = 0.010
"""At most this many seconds of proxy-side latency are absorbed by a schedule (see
"Timing" in docs/guides/replay.md). A healthy mitmproxy hop takes a few
milliseconds; a request that took longer reached us through a saturated proxy, and starting
its schedule at once would put its first writes in the middle of that proxy's backlog (200
streams starting together: gap error p99 1.5x plain mitmdump's); the rest of the latency is
added, as a slow network would add it."""


def clock_start(received: float, arrived: float | None) -> float:
    """Where a schedule's clock starts: when the request reached replayproxy (``arrived``,
    given behind mitmproxy), but never after the origin ``received`` it (whatever the caller's
    clock said) and at most :data:`ABSORB_MAX` before."""
    if arrived is None:
        return received
    return max(min(received, arrived), received - ABSORB_MAX)


async def _reset(writer: Writer) -> None:
    """End the connection with a TCP RST, after the bytes already written reached the peer."""
    sock = writer.get_extra_info("socket")
    transport = writer.transport
    if sock is None or not await reset_after_drain(transport, sock):
        transport.abort()  # the peer left, or no SO_LINGER: end it anyway


async def sleep_until(t0: float, at_ns: int, clock: Clock = LOOP_CLOCK) -> None:
    """Sleep until ``at_ns`` after ``t0`` (``clock`` time): absolute deadlines, so a late
    wake-up does not delay the writes after it."""
    await clock.sleep_until(t0 + at_ns / 1e9)


def late_start(t0: float, first_ns: int, clock: Clock = LOOP_CLOCK) -> float:
    """The clock's start once the first write (due ``first_ns`` after ``t0``) is about to go.

    A request that reached us after its first write was due (a proxy or machine so busy its
    latency exceeds the recorded time to first byte) starts late: the later writes keep their
    recorded gaps from this one instead of all the overdue ones going out in one catch-up
    burst. Only what is left of the first offset is absorbed; the rest is added, as a slow
    network would add it."""
    return max(t0, clock.time() - first_ns / 1e9)


async def execute(
    schedule: Schedule,
    writes: Iterable[tuple[int, bytes]],
    t0: float,
    reader: asyncio.StreamReader,
    writer: Writer,
    clock: Clock = LOOP_CLOCK,
) -> bool:
    """Send ``schedule`` (``writes``: its framed socket writes) to ``writer``, each at its
    offset from ``t0`` on ``clock``; return whether the connection can serve another request."""
    sleep = clock.sleep_until  # bound once: the loop below runs per write
    for i, (at_ns, data) in enumerate(writes):
        if i == 0:
            t0 = late_start(t0, at_ns, clock)
        await sleep(t0 + at_ns / 1e9)
        writer.write(data)
        await writer.drain()
    finish = schedule.finish
    await sleep(t0 + finish.at_ns / 1e9)
    if schedule.head is None:
        writer.close()
        return False
    if finish.kind is FinishKind.COMPLETE:
        return True
    if finish.kind is FinishKind.CLOSE:
        writer.close()
    elif finish.kind is FinishKind.RESET:
        await _reset(writer)
    else:  # HANG: say nothing more, keep the socket open until the peer goes away
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass
    return False
