"""Event edits: drop, duplicate, reorder (swap with the next) and corrupt one event.

``event=N`` is the event's index (0 = first), the same numbering as ``events=N`` positions
(``events=N`` is the point just before event N). Each edit changes exactly that one event (or
pair, for reorder) and leaves every other byte and write time as recorded. Corrupting an SSE
event cuts its first ``data:`` payload in half (the line ending and blank line stay, so the
event still dispatches, with invalid JSON); corrupting an AWS event-stream message flips one
byte in its middle, so its CRC no longer matches.
"""

from __future__ import annotations

from replayproxy._core.faults.position import splice
from replayproxy._core.schedule.model import Schedule
from replayproxy._core.wire.events import EventSpan

__all__ = ["corrupt", "drop", "duplicate", "reorder"]


def drop(schedule: Schedule, span: EventSpan) -> Schedule:
    return splice(schedule, span.start, span.end, b"")


def duplicate(schedule: Schedule, span: EventSpan) -> Schedule:
    body = schedule.body
    return splice(schedule, span.end, span.end, body[span.start : span.end])


def reorder(schedule: Schedule, first: EventSpan, second: EventSpan) -> Schedule:
    body = schedule.body
    swapped = (
        body[second.start : second.end]
        + body[first.end : second.start]
        + body[first.start : first.end]
    )
    return splice(schedule, first.start, second.end, swapped)


def payload_span(raw: bytes) -> tuple[int, int] | None:
    """``[start, end)`` of the first ``data:`` value inside one SSE event's bytes."""
    pos = 0
    while pos < len(raw):
        nl = min(
            (i for i in (raw.find(b"\n", pos), raw.find(b"\r", pos)) if i >= 0), default=len(raw)
        )
        line = raw[pos:nl]
        if line.startswith(b"data:"):
            start = pos + 5 + (1 if line[5:6] == b" " else 0)
            return start, nl
        pos = nl + 1
    return None


def corrupt(schedule: Schedule, span: EventSpan, sse: bool) -> Schedule | None:
    """The schedule with event ``span`` corrupted, or ``None`` if it has no payload to cut."""
    raw = schedule.body[span.start : span.end]
    if not sse:
        mid = span.start + (span.end - span.start) // 2
        flipped = bytes([schedule.body[mid] ^ 0xFF])
        return splice(schedule, mid, mid + 1, flipped)
    found = payload_span(raw)
    if found is None or found[1] - found[0] < 2:
        return None
    start, end = found
    half = start + (end - start) // 2
    return splice(schedule, span.start + half, span.start + end, b"")
