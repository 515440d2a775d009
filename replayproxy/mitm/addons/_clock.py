"""mitmproxy's wall-clock timestamps moved to the event loop's clock, for the replay addon.

mitmproxy stamps requests and WebSocket messages with ``time.time()`` (11.x and 12.x alike);
the replay origin schedules on the loop's monotonic ``time()``. The replay addon converts a
stamp by its age, so that a schedule counts from when mitmproxy had the request or message
rather than from when the origin read it, and a stepped wall clock cannot burst or delay it.
"""

from __future__ import annotations

import asyncio
import time

from mitmproxy import http

__all__ = ["arrived_at", "loop_stamp", "loop_time"]

# A wall-clock stamp older than this is not latency but a clock step (NTP): ignore it rather
# than let a jumped clock fire a whole schedule at once.
_MAX_AGE_S = 5.0


def arrived_at(request: http.Request, loop_now: float, wall_now: float) -> float:
    """When ``request`` reached mitmproxy, in the event loop's clock (``loop.time()``).

    mitmproxy stamps requests with the wall clock (``time.time()``, in 11.x and 12.x alike):
    ``timestamp_end`` once the whole request is in (the analogue of the recorder's t0, taken
    when the complete request goes upstream), else ``timestamp_start`` (head parsed). Its age
    on the wall clock is moved to the monotonic loop clock; a negative or implausible age (the
    wall clock stepped) counts as 0.
    """
    stamp = request.timestamp_end
    if stamp is None:
        stamp = request.timestamp_start
    return loop_stamp(stamp, loop_now, wall_now)


def loop_stamp(stamp: float | None, loop_now: float, wall_now: float) -> float:
    """A mitmproxy wall-clock ``stamp`` in the loop's clock: its age on the wall clock moved
    to the monotonic loop clock; a missing stamp, or a negative or implausible age (the wall
    clock stepped), counts as now."""
    age = 0.0 if stamp is None else wall_now - stamp
    if not 0.0 <= age <= _MAX_AGE_S:
        age = 0.0
    return loop_now - age


def loop_time() -> float:
    """The origin's clock: the running loop's (hooks run on it); monotonic outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:  # a hook called directly, as mitmproxy's taddons tests do
        return time.monotonic()
