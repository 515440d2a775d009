"""Was a stream delivered incrementally, or buffered and sent at once? (rule ``stream.buffered``)

Judged from the frames' arrival offsets (nanoseconds from the request, as the recorder stamps
them) and, per frame, how many events it completed once decoded: a frame that holds only a
gzip header or half an event delivers nothing a client can show. A stream is **buffered** when

- it has at least :data:`MIN_EVENTS` events (one event cannot be spread out),
- every frame that completes an event arrives within :data:`BURST_NS` of the first such frame,
- and that first frame comes :data:`WAIT_NS` or more after the request.

The wait keeps fast streams out: a replay at ``speed=0`` or a cached answer finishes in a few
milliseconds, and a stream that is over that quickly cannot be told from a buffered one. Real
provider streams take 200 ms to seconds before the first token, and a replay at recorded speed
keeps that, so an endpoint that streams spreads its events over the provider's gaps (20-50 ms
each), while one that buffers delivers them in one read (BerriAI/litellm#26102: all 49 tokens
"in the same millisecond"; Starlette's GZipMiddleware held 32 KiB at a time until
Kludex/starlette#2753, so a short answer came out in one write at the end). Pure: integers in,
a message out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["BURST_NS", "MIN_EVENTS", "WAIT_NS", "Arrival", "buffered"]

BURST_NS: Final = 1_000_000
"""Events that all arrive within 1 ms of each other arrived in one burst."""
WAIT_NS: Final = 50_000_000
"""A burst counts as buffering only after a wait of at least 50 ms from the request."""
MIN_EVENTS: Final = 2


@dataclass(frozen=True, slots=True)
class Arrival:
    """One frame as received: when (ns from the request), how many bytes, how many events it
    completed (after content decoding)."""

    at_ns: int
    size: int
    events: int


def _ms(ns: int) -> str:
    return f"{ns / 1_000_000:.1f} ms"


def buffered(arrivals: Sequence[Arrival]) -> str | None:
    """Why the stream looks buffered (frame count, first and last arrival, bytes), or ``None``
    when it arrived incrementally or cannot be judged (see the module doc)."""
    events = sum(a.events for a in arrivals)
    carrying = [a for a in arrivals if a.events]
    if events < MIN_EVENTS or not carrying:
        return None
    first, last = carrying[0], carrying[-1]
    spread = last.at_ns - first.at_ns
    if spread > BURST_NS or first.at_ns < WAIT_NS:
        return None
    total = sum(a.size for a in arrivals)
    head, tail = arrivals[0], arrivals[-1]
    frames = f"{len(arrivals)} frame(s), {total} bytes: {head.size} bytes at {_ms(head.at_ns)}"
    if len(arrivals) > 1:
        frames += f" ... {tail.size} bytes at {_ms(tail.at_ns)}"
    return (
        f"all {events} events arrived within {_ms(spread)} of each other, {_ms(first.at_ns)} "
        f"after the request ({frames}): the stream was buffered, not streamed; look for "
        "compression middleware or a reverse proxy without X-Accel-Buffering: no"
    )
