"""When mitmproxy received a WebSocket client message, in the replay origin's clock.

mitmproxy stamps each WebSocket message with the wall clock (``message.timestamp``, taken when
the whole message was read, before any addon's hook; ``time.time()`` in 11.x and 12.x alike).
The origin runs on the event loop's monotonic clock, so the stamp's *age* is carried over,
never the stamp itself, as for requests (``arrived_at`` in the replay addon); a negative or
implausible age (the wall clock stepped) counts as 0, so a stepped clock can neither burst
nor delay a turn.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["MAX_AGE_S", "message_arrived_at"]

MAX_AGE_S = 5.0
"""An age beyond this (or negative) means the wall clock stepped: it counts as 0."""


def message_arrived_at(
    stamp: float, loop_now: float | None = None, wall_now: float | None = None
) -> float:
    """When a message stamped ``stamp`` (wall clock) reached mitmproxy, in the loop's clock.

    ``loop_now`` defaults to the running loop's ``time()`` (the hooks and the origin share
    mitmproxy's loop), or the monotonic clock outside a loop; ``wall_now`` to ``time.time()``.
    """
    if loop_now is None:
        try:
            loop_now = asyncio.get_running_loop().time()
        except RuntimeError:  # a hook called directly, as mitmproxy's taddons tests do
            loop_now = time.monotonic()
    age = (time.time() if wall_now is None else wall_now) - stamp
    if not 0.0 <= age <= MAX_AGE_S:
        age = 0.0
    return loop_now - age
