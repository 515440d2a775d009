"""Timing faults: ttfb, stall, keepalive, jitter, throttle and coalesce.

They run after ``--speed`` scaling and their durations are real seconds: ``stall:for=2`` pauses
two seconds at any speed, ``--speed 0`` included. None of them changes the body bytes or their
order, except ``keepalive``, which inserts whole keepalive events between recorded events.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import replace

from replayproxy._core.faults.position import cut_writes
from replayproxy._core.schedule.model import Finish, FinishKind, Schedule, Write

__all__ = [
    "coalesce",
    "jitter",
    "keepalive",
    "keepalive_count",
    "shift_from",
    "stall",
    "throttle",
    "throttle_count",
    "ttfb",
]

_NS = 1_000_000_000


def _ns(seconds: float) -> int:
    return round(seconds * _NS)


def _head_at(schedule: Schedule) -> int:
    return schedule.head.at_ns if schedule.head else 0


def ttfb(schedule: Schedule, delay: float) -> Schedule:
    """The head (and so everything after it) comes ``delay`` seconds later."""
    d = _ns(delay)
    head = None if schedule.head is None else replace(schedule.head, at_ns=schedule.head.at_ns + d)
    writes = tuple(Write(w.at_ns + d, w.data) for w in schedule.writes)
    return Schedule(head, writes, replace(schedule.finish, at_ns=schedule.finish.at_ns + d))


def shift_from(schedule: Schedule, offset: int, delta_ns: int) -> Schedule:
    """Everything from body ``offset`` on (and the finish) happens ``delta_ns`` later."""
    before, after = cut_writes(schedule.writes, offset)
    moved = [Write(w.at_ns + delta_ns, w.data) for w in after]
    finish = replace(schedule.finish, at_ns=schedule.finish.at_ns + delta_ns)
    return replace(schedule, writes=(*before, *moved), finish=finish)


def stall(schedule: Schedule, offset: int, seconds: float) -> Schedule:
    return shift_from(schedule, offset, _ns(seconds))


def _waits(schedule: Schedule, until: float) -> list[tuple[int, int, int]]:
    """``(body offset, start, end)`` of every wait before a write and before the finish."""
    out = []
    pos = 0
    prev = _head_at(schedule)
    for w in schedule.writes:
        out.append((pos, prev, w.at_ns))
        pos += len(w.data)
        prev = w.at_ns
    nxt = schedule.finish.at_ns
    if schedule.finish.kind is FinishKind.HANG:
        nxt = max(nxt, prev) + _ns(until)
    out.append((pos, prev, nxt))
    return out


def keepalive_count(
    schedule: Schedule, boundaries: Sequence[int], every: float, until: float
) -> int:
    """How many keepalives :func:`keepalive` would insert, computed without building them."""
    step = _ns(every)
    if step <= 0 or schedule.head is None:
        return 0
    at_boundary = set(boundaries)
    return sum(
        (end - start - 1) // step
        for pos, start, end in _waits(schedule, until)
        if pos in at_boundary and end > start
    )


def keepalive(
    schedule: Schedule,
    boundaries: Sequence[int],
    every: float,
    until: float,
    data: bytes,
) -> Schedule:
    """Insert ``data`` every ``every`` s into each wait longer than that at an event boundary
    (body offsets in ``boundaries``); a hang gets keepalives for ``until`` s."""
    step = _ns(every)
    if step <= 0:
        return schedule
    at_boundary = set(boundaries)
    out: list[Write] = []
    pos = 0
    prev = _head_at(schedule)
    ends = [*schedule.writes, None]
    for w in ends:
        if w is None:
            nxt = schedule.finish.at_ns
            if schedule.finish.kind is FinishKind.HANG:
                nxt = max(nxt, prev) + _ns(until)
        else:
            nxt = w.at_ns
        if pos in at_boundary and schedule.head is not None:
            t = prev + step
            while t < nxt:
                out.append(Write(t, data))
                t += step
        if w is not None:
            out.append(w)
            pos += len(w.data)
            prev = w.at_ns
    finish = schedule.finish
    if out:  # a hang starts after its keepalives were scheduled, so the timeline stays ordered
        finish = replace(finish, at_ns=max(finish.at_ns, out[-1].at_ns))
    return replace(schedule, writes=tuple(out), finish=finish)


def jitter(schedule: Schedule, ms: float, dist: str, rng: random.Random) -> Schedule:
    """Perturb every gap (head, writes, finish) by a random amount; order is kept because a
    gap never goes below zero. ``uniform``: +-U(0, ms); ``lognormal``: a positive delay with
    median ``ms`` (sigma 1), the heavy tail of real networks."""
    scale = ms * 1_000_000

    def perturb(gap: int) -> int:
        if dist == "lognormal":
            delta = scale * rng.lognormvariate(0.0, 1.0)
        else:
            delta = rng.uniform(-scale, scale)
        return max(0, round(gap + delta))

    prev_old = 0
    prev_new = 0
    head = schedule.head
    if head is not None:
        new = prev_new + perturb(head.at_ns - prev_old)
        prev_old, prev_new = head.at_ns, new
        head = replace(head, at_ns=new)
    writes = []
    for w in schedule.writes:
        new = prev_new + perturb(w.at_ns - prev_old)
        prev_old, prev_new = w.at_ns, new
        writes.append(Write(new, w.data))
    finish_at = prev_new + perturb(schedule.finish.at_ns - prev_old)
    return Schedule(head, tuple(writes), Finish(finish_at, schedule.finish.kind))


def throttle_count(schedule: Schedule, bps: int) -> int:
    """How many writes :func:`throttle` would make, computed without building them."""
    piece = max(1, bps // 20)
    return sum(-(-len(w.data) // piece) for w in schedule.writes)


def throttle(schedule: Schedule, bps: int) -> Schedule:
    """A pipe of ``bps`` bytes/s: writes are cut into 50 ms slices sent no faster than that."""
    piece = max(1, bps // 20)
    cursor = _head_at(schedule)
    writes: list[Write] = []
    for w in schedule.writes:
        t = max(w.at_ns, cursor)
        for i in range(0, len(w.data), piece):
            chunk = w.data[i : i + piece]
            writes.append(Write(t, chunk))
            t += math.ceil(len(chunk) * _NS / bps)
        cursor = t
    finish = replace(schedule.finish, at_ns=max(schedule.finish.at_ns, cursor))
    return replace(schedule, writes=tuple(writes), finish=finish)


def coalesce(schedule: Schedule, window: float | None) -> Schedule:
    """A buffering intermediary: the body arrives in one write with the last byte, or in one
    write per ``window`` seconds (flushed at the end of each window, the last at the end)."""
    if not schedule.writes:
        return schedule
    last = schedule.writes[-1].at_ns
    if window is None or window <= 0:
        return replace(schedule, writes=(Write(last, schedule.body),))
    step = _ns(window)
    start = _head_at(schedule)
    groups: dict[int, list[bytes]] = {}
    for w in schedule.writes:
        flush = min(last, start + ((w.at_ns - start) // step + 1) * step)
        groups.setdefault(flush, []).append(w.data)
    writes = tuple(Write(at, b"".join(parts)) for at, parts in sorted(groups.items()))
    return replace(schedule, writes=writes)
