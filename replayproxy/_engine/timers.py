"""Event loops whose timers fire on time: sub-millisecond wake-ups without busy-waiting.

asyncio's loop on Linux waits in ``epoll_wait``, whose timeout is whole milliseconds:
:class:`selectors.EpollSelector` rounds every timeout *up* to the next millisecond, so a
timer due in 4.2 ms fires after 5 ms and every scheduled write of a replay is late by
0 to 1 ms (0.8 ms median measured here) on top of everything else. A replay exists to keep
the recorded timing, so the engine's loop (and the embedded mitmproxy's, where the forward
mode origin runs) waits differently: :class:`PreciseSelector` blocks in ``select()`` on
the epoll descriptor itself, whose timeout has microsecond resolution (the epoll
descriptor becomes readable when any of its sockets is ready), then collects the events
with a non-blocking ``epoll_wait`` when it is readable. At most one extra system call per
timed wait (none when the wait ends on its timeout), no spinning.

Where that cannot work it falls back to the stock behaviour: no epoll (macOS's kqueue
already takes a nanosecond timeout; Windows uses its own loop), or an epoll descriptor
numbered past ``select()``'s ``FD_SETSIZE`` (1024).

Usage: ``timers.run(coro)`` instead of ``asyncio.run(coro)``; ``timers.new_event_loop()``
where a loop is made by hand.
"""

from __future__ import annotations

import asyncio
import select
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["FD_SETSIZE", "PreciseSelector", "new_event_loop", "run"]

T = TypeVar("T")

FD_SETSIZE = 1024
"""``select()`` cannot watch a descriptor numbered this high or higher (glibc's limit)."""

if hasattr(selectors, "EpollSelector"):

    class PreciseSelector(selectors.EpollSelector):
        """An epoll selector whose timed waits end within microseconds of the timeout."""

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            fd = self.fileno()
            if timeout is None or timeout <= 0 or fd >= FD_SETSIZE:
                return super().select(timeout)
            # Wait with select()'s microsecond timeout on the epoll fd (readable once any
            # registered socket is ready), then collect without blocking: epoll_wait's
            # millisecond timeout would round up. A wait that ended on its timeout (a timer is
            # due, nothing to read) needs no second system call: most waits of a replay.
            readable, _, _ = select.select([fd], [], [], timeout)
            return super().select(0) if readable else []

    def new_event_loop() -> asyncio.AbstractEventLoop:
        """A new event loop whose timers fire within microseconds of when they are due."""
        return asyncio.SelectorEventLoop(PreciseSelector())

else:  # pragma: no cover - not Linux: the platform's loop already has fine timeouts
    PreciseSelector = None  # type: ignore[assignment,misc]

    def new_event_loop() -> asyncio.AbstractEventLoop:
        """The platform's default event loop (its timeouts are not rounded to milliseconds)."""
        return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """:func:`asyncio.run` on a loop from :func:`new_event_loop`."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
