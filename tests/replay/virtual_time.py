"""An asyncio event loop with a virtual clock, for asserting replay timing exactly.

``loop.time()`` reads a :class:`VirtualClock`. When the loop would sleep until its next timer
and no socket is ready, the clock jumps to that timer instead (plus ``late_ns``, to model a
late wake-up; ``late_once_ns`` for a single one), so a schedule of seconds runs in
microseconds and every offset is exact. Sockets are real: use ``socket.socketpair()`` (a write
there is readable at once, so no I/O is mistaken for idleness).
"""

from __future__ import annotations

import asyncio
import math
import selectors
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualClock:
    """Integer nanoseconds; ``late_ns`` is added to every timer wake-up."""

    def __init__(self, start_ns: int = 1_000_000_000_000, late_ns: int = 0) -> None:
        self.ns = start_ns
        self.late_ns = late_ns
        self.late_once_ns = 0

    def jump(self, seconds: float) -> None:
        late, self.late_once_ns = self.late_ns + self.late_once_ns, 0
        self.ns += math.ceil(seconds * 1e9) + late


class _Selector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[Any]:
        ready: list[Any] = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer: only I/O can wake us, and it should already be there
            ready = super().select(10.0)
            if not ready:
                raise RuntimeError("virtual-time loop idle with no timer and no I/O")
            return ready
        self.clock.jump(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(_Selector(clock))
        self.clock = clock

    def time(self) -> float:
        return self.clock.ns / 1e9


def run_virtual(main: Callable[[], Awaitable[T]], clock: VirtualClock) -> T:
    """Run ``main()`` to completion on a fresh virtual-time loop."""
    loop = VirtualTimeLoop(clock)
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()
