"""Byte re-splitting: the same bytes, cut into more writes at the places parsers get wrong.

``bytes=K`` cuts the body every K bytes; ``at=utf8`` inside every multi-byte UTF-8 character
(after its lead byte); ``at=midline`` in the middle of every ``data:`` line; ``at=crlf``
between every CR and LF; ``at=random`` at random places (mean piece ``avg`` bytes, seeded).
Recorded write boundaries stay. The pieces of one recorded write are sent ``gap`` seconds
apart so that they reach the client as separate reads even through a proxy; later writes move
only if that pushes them (the timeline stays ordered, the bytes never change).
"""

from __future__ import annotations

import random
import re

from replayproxy._core.faults.position import split_writes
from replayproxy._core.schedule.model import Finish, Schedule, Write

__all__ = ["split", "split_count", "split_points"]

_NS = 1_000_000_000
_DATA_LINE = re.compile(rb"^data:[^\r\n]*", re.MULTILINE)


def split_count(body: bytes, at: str | None, size: int | None, avg: int) -> int:
    """An upper bound of ``len(split_points(...))``, computed without building the points
    (for ``at=random``, the most points :func:`split_points` draws)."""
    n = len(body)
    if size is not None:
        return n // size
    if at == "utf8":
        return sum(body.count(bytes((b,))) for b in range(0xC0, 0x100))
    if at == "crlf":
        return body.count(b"\r\n")
    if at == "midline":
        return body.count(b"data:")
    return n if avg <= 1 else 2 * n // avg + 1  # random pieces are at least 1 byte, mean avg


def split_points(
    body: bytes, at: str | None, size: int | None, avg: int, rng: random.Random
) -> list[int]:
    """Body offsets where a write boundary goes (each strictly inside the body)."""
    n = len(body)
    if size is not None:
        return list(range(size, n, size))
    if at == "utf8":
        # A lead byte is 0b11xxxxxx; cutting right after it leaves the character split.
        return [i + 1 for i, b in enumerate(body) if b >= 0xC0 and i + 1 < n]
    if at == "crlf":
        return [m.start() + 1 for m in re.finditer(rb"\r\n", body)]
    if at == "midline":
        # A data line is at least "data:", so its middle is strictly inside it.
        return [m.start() + (m.end() - m.start()) // 2 for m in _DATA_LINE.finditer(body)]
    # Pieces of 1..2*avg-1 bytes (mean avg), at most split_count of them: the cap keeps the
    # bound _bounded() checked before building true. It only bites when the draw averaged
    # under half of avg, which a body of more than a few avg bytes practically never does.
    most = split_count(body, at, size, avg)
    points: list[int] = []
    pos = rng.randint(1, 2 * avg - 1) if avg > 1 else 1
    while pos < n and len(points) < most:
        points.append(pos)
        pos += rng.randint(1, 2 * avg - 1) if avg > 1 else 1
    return points


def split(schedule: Schedule, points: list[int], gap: float) -> Schedule:
    """Cut the writes at ``points``; the pieces of one recorded write go ``gap`` s apart."""
    step = round(gap * _NS)
    pieces = split_writes(schedule.writes, points)
    original_starts = set()
    pos = 0
    for w in schedule.writes:
        original_starts.add(pos)
        pos += len(w.data)
    out: list[Write] = []
    cursor = schedule.head.at_ns if schedule.head else 0
    pos = 0
    for w in pieces:
        t = max(w.at_ns, cursor) if pos in original_starts else cursor + step
        t = max(t, w.at_ns)
        out.append(Write(t, w.data))
        cursor = t
        pos += len(w.data)
    finish = schedule.finish
    if out and finish.at_ns < cursor:
        finish = Finish(cursor, finish.kind)
    return Schedule(schedule.head, tuple(out), finish)
