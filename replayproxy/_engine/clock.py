"""The engine's clock and writer as injected dependencies (as httpcore's network backends):
what executing a schedule reads the time from, sleeps on, and writes frames to.

The default is the real thing: :data:`LOOP_CLOCK` reads and sleeps on the running event
loop's monotonic clock (the engine's loop fires timers to the microsecond,
:mod:`~replayproxy._engine.timers`), and an :class:`asyncio.StreamWriter` is the writer.
Tests inject a :class:`VirtualClock` instead: its time advances only when the code waits
(to the earliest deadline, once nothing else can run), so a schedule of minutes runs in
microseconds and every sleep and write is recorded at its exact virtual time; its
:meth:`VirtualClock.writer` is a :class:`Writer` that records what is written, when.

Times are loop-clock seconds (floats, what ``loop.time()`` returns and ``arrived`` stamps
carry); the virtual clock keeps integer nanoseconds underneath, so a recorded offset of
``at_ns`` after a start at 0 is recorded as exactly ``at_ns``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "LOOP_CLOCK",
    "Clock",
    "LoopClock",
    "Timer",
    "VirtualClock",
    "VirtualWriter",
    "Writer",
    "Written",
]


class Timer(Protocol):
    """A scheduled callback that can be cancelled (an :class:`asyncio.TimerHandle`)."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Where the engine reads the time and waits: loop-clock seconds."""

    def time(self) -> float:
        """Now, in seconds."""
        ...

    async def sleep_until(self, when: float) -> None:
        """Return at ``when`` (at once if it has passed)."""
        ...

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Timer:
        """Run ``callback(*args)`` at ``when``, unless the returned timer is cancelled first."""
        ...


class Transport(Protocol):
    """The part of a transport the engine uses to end a connection its own way."""

    def abort(self) -> None: ...

    def is_closing(self) -> bool: ...


class Writer(Protocol):
    """The sink a schedule's bytes go to (an :class:`asyncio.StreamWriter`)."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def get_extra_info(self, name: str, default: Any = None) -> Any: ...

    @property
    def transport(self) -> Any: ...


class LoopClock:
    """The running event loop's clock: what the engine uses unless given another."""

    __slots__ = ()

    def time(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, when: float) -> None:
        # One timer and one future, as a bare asyncio.sleep: the replay loop's hot path.
        delay = when - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.sleep(delay)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Timer:
        return asyncio.get_running_loop().call_at(when, callback, *args)


LOOP_CLOCK = LoopClock()
"""The default clock (stateless: one is shared by every connection)."""


@dataclass(frozen=True)
class Written:
    """One event on a :class:`VirtualWriter`: ``kind`` is ``"write"`` (with ``data``),
    ``"close"`` or ``"abort"``, at virtual time ``at_ns``."""

    at_ns: int
    kind: str
    data: bytes = b""


class _VirtualTimer:
    __slots__ = ("args", "callback", "cancelled")

    def __init__(self, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


_IDLE_PASSES = 2
"""Loop iterations in a row with nothing else ready before virtual time moves on: one lets
callbacks scheduled by the last one run, the second a socket read the loop just polled."""


class VirtualClock:
    """A :class:`Clock` whose time advances only when the code waits on it.

    A wait (``sleep_until``, ``call_at``) is kept in order of its deadline; once nothing
    else on the event loop can run, the clock jumps to the earliest deadline (plus
    ``late_ns``, to model a late wake-up; ``late_once_ns`` for the next one only) and
    wakes that waiter. ``sleeps`` records every ``sleep_until`` as (when it began, its
    deadline) in nanoseconds. Use it on a plain event loop with in-memory readers and the
    :meth:`writer` (no real I/O is waited for).
    """

    def __init__(self, start_ns: int = 0, *, late_ns: int = 0) -> None:
        self.ns = start_ns
        self.late_ns = late_ns
        self.late_once_ns = 0
        self.sleeps: list[tuple[int, int]] = []
        self._timers: list[tuple[int, int, _VirtualTimer]] = []
        self._seq = itertools.count()
        self._ticking = False
        self._idle = 0

    def time(self) -> float:
        return self.ns / 1e9

    async def sleep_until(self, when: float) -> None:
        deadline = round(when * 1e9)
        self.sleeps.append((self.ns, deadline))
        if deadline <= self.ns:
            await asyncio.sleep(0)  # a real sleep(0) yields too
            return
        future = asyncio.get_running_loop().create_future()
        timer = self._push(deadline, _wake, (future,))
        try:
            await future
        finally:
            timer.cancel()

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` from now."""
        await self.sleep_until(self.time() + seconds)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Timer:
        return self._push(round(when * 1e9), callback, args)

    def writer(self) -> VirtualWriter:
        """A writer that records every write, close and abort at this clock's time."""
        return VirtualWriter(self)

    def _push(
        self, deadline: int, callback: Callable[..., object], args: tuple[Any, ...] = ()
    ) -> _VirtualTimer:
        timer = _VirtualTimer(callback, args)
        heapq.heappush(self._timers, (deadline, next(self._seq), timer))
        if not self._ticking:
            self._ticking = True
            self._idle = 0
            asyncio.get_running_loop().call_soon(self._tick)
        return timer

    def _tick(self) -> None:
        """Move time on to the next deadline once the loop has nothing else to run."""
        loop = asyncio.get_running_loop()
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        if not self._timers:
            self._ticking = False
            return
        ready = getattr(loop, "_ready", None)  # CPython's queue of runnable callbacks
        self._idle = 0 if ready else self._idle + 1
        if self._idle < _IDLE_PASSES:
            loop.call_soon(self._tick)
            return
        deadline, _, timer = heapq.heappop(self._timers)
        late, self.late_once_ns = self.late_ns + self.late_once_ns, 0
        self.ns = max(self.ns, deadline + late)
        self._idle = 0
        loop.call_soon(self._tick)
        timer.callback(*timer.args)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class VirtualWriter:
    """A :class:`Writer` that records what is written to it, at its clock's virtual time."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.events: list[Written] = []
        self._closing = False

    @property
    def writes(self) -> list[tuple[int, bytes]]:
        """Every write as (virtual time in ns, bytes), in order."""
        return [(e.at_ns, e.data) for e in self.events if e.kind == "write"]

    def write(self, data: bytes) -> None:
        self.events.append(Written(self.clock.ns, "write", bytes(data)))

    async def drain(self) -> None:
        if self._closing:
            raise ConnectionResetError("the virtual writer is closed")

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self.events.append(Written(self.clock.ns, "close"))

    def abort(self) -> None:
        if not self._closing:
            self._closing = True
            self.events.append(Written(self.clock.ns, "abort"))

    def is_closing(self) -> bool:
        return self._closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default  # no socket: a reset is an abort

    @property
    def transport(self) -> VirtualWriter:
        return self  # abort() and is_closing(), as a transport has them
