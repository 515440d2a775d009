"""``cassette edit --set-event-field N POINTER JSON``: set one JSON field inside event N (pure).

The event's JSON payload is decoded, the value at the RFC 6901 ``POINTER`` replaced (or, for a
last token naming a new member of an existing object, added), and the payload written back in
the style it was recorded in (compact or spaced separators, ASCII escapes or not; member order
kept). Only the payload's bytes change: an SSE event keeps its ``event:``/``id:`` lines, line
endings and blank line; an AWS event-stream message keeps its headers and gets new lengths and
CRCs. The new bytes are written in the frames and at the times the old ones were: each frame
the payload spanned gets as many of the new bytes as it had of the old (the last one the rest),
so the frame count and timing stay as recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from replayproxy._core.faults.events import payload_span
from replayproxy._core.json.limits import loads
from replayproxy._core.json.pointer import format_pointer, parse_pointer
from replayproxy._core.schedule.model import Schedule, Write
from replayproxy._core.wire.events import EventSpan
from replayproxy._core.wire.eventstream import (
    EventStreamDecoder,
    EventStreamMessage,
    encode_message,
)
from replayproxy._errors import UsageError

__all__ = ["FieldEdit", "parse_field_edit", "set_event_field"]

_INDEX_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class FieldEdit:
    """Set ``pointer`` (its tokens) in event ``event`` to ``value``."""

    event: int
    pointer: str
    value: Any

    @property
    def spec(self) -> str:
        return f"--set-event-field {self.event} {self.pointer} {json.dumps(self.value)}"


def parse_field_edit(event: int, pointer: str, value: str) -> FieldEdit:
    """Check the option's three parts; a one-line UsageError names the one that is wrong."""
    where = f"--set-event-field {event} {pointer} {value}"
    if event < 0:
        raise UsageError(f"{where}: N must be an event number (0 = first)")
    try:
        tokens = parse_pointer(pointer)
    except UsageError as e:
        raise UsageError(f"{where}: {e}") from None
    if not tokens:
        raise UsageError(f"{where}: the pointer must name a field (e.g. /choices/0/finish_reason)")
    try:
        parsed = loads(value)
    except ValueError as e:
        raise UsageError(
            f"{where}: the value is not JSON ({e}); a string needs its quotes: '\"length\"'"
        ) from None
    return FieldEdit(event, pointer, parsed)


class _Missing(Exception):
    """The pointer's token ``depth`` names nothing."""

    def __init__(self, depth: int) -> None:
        self.depth = depth


def _set(doc: Any, tokens: tuple[str, ...], value: Any, depth: int = 0) -> Any:
    """A copy of ``doc`` with ``value`` at ``tokens[depth:]``."""
    head, last = tokens[depth], depth == len(tokens) - 1
    if isinstance(doc, dict):
        if not last and head not in doc:
            raise _Missing(depth)
        out = dict(doc)
        out[head] = value if last else _set(doc[head], tokens, value, depth + 1)
        return out
    if isinstance(doc, list):
        if not (head and set(head) <= _INDEX_DIGITS and int(head) < len(doc)):
            raise _Missing(depth)
        items = list(doc)
        items[int(head)] = value if last else _set(items[int(head)], tokens, value, depth + 1)
        return items
    raise _Missing(depth)


def _dumps(doc: Any, like: str) -> str:
    """``doc`` as JSON written like the text ``like``: spaced or compact, ASCII or not."""
    spaced = '": ' in like or '", ' in like
    return json.dumps(
        doc, separators=(", ", ": ") if spaced else (",", ":"), ensure_ascii=like.isascii()
    )


def _new_payload(text: str, edit: FieldEdit, what: str) -> bytes:
    try:
        doc = loads(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"{what} is not JSON ({shown!r})") from None
    tokens = parse_pointer(edit.pointer)
    try:
        changed = _set(doc, tokens, edit.value)
    except _Missing as e:
        at = format_pointer(tokens[: e.depth + 1])
        raise UsageError(f"{what} has no {at} (in the pointer {edit.pointer})") from None
    return _dumps(changed, text).encode("utf-8")


def _replace(schedule: Schedule, start: int, end: int, data: bytes) -> Schedule:
    """Body bytes ``[start, end)`` replaced by ``data``, frame by frame: each write keeps its
    bytes outside the range and holds as many new bytes as it held old ones (the last write
    in the range the rest), at its own time."""
    writes = list(schedule.writes)
    spans: list[tuple[int, int, int]] = []  # (write, from, to): the range's part in each write
    pos = 0
    for i, w in enumerate(writes):
        lo, hi = max(start, pos), min(end, pos + len(w.data))
        if lo < hi or (start == end and pos <= start <= pos + len(w.data) and not spans):
            spans.append((i, lo - pos, max(lo, hi) - pos))
        pos += len(w.data)
    if not spans:  # an empty body: nothing to replace (an event always has bytes)
        return schedule
    taken = 0
    for k, (i, a, b) in enumerate(spans):
        share = data[taken:] if k == len(spans) - 1 else data[taken : taken + b - a]
        taken += len(share)
        old = writes[i].data
        writes[i] = Write(writes[i].at_ns, old[:a] + share + old[b:])
    return replace(schedule, writes=tuple(w for w in writes if w.data))


def set_event_field(schedule: Schedule, span: EventSpan, sse: bool, edit: FieldEdit) -> Schedule:
    """The schedule with ``edit`` applied to the event at ``span`` (see the module doc);
    UsageError when the event is not JSON or the pointer's parent is missing."""
    raw = schedule.body[span.start : span.end]
    what = f"event {edit.event} ({span.name})"
    if sse:
        data_lines = [line for line in raw.splitlines() if line.startswith(b"data")]
        if len(data_lines) > 1:
            raise UsageError(f"{what} has its data on {len(data_lines)} lines; one is edited")
        found = payload_span(raw)
        if found is None:  # a bare "data" line: the empty payload
            raise UsageError(f"{what} is not JSON (no data)")
        start, end = found
        text = raw[start:end].decode("utf-8", "replace")
        new = _new_payload(text, edit, what)
        return _replace(schedule, span.start + start, span.start + end, new)
    [message] = [m for m in EventStreamDecoder().feed(raw) if isinstance(m, EventStreamMessage)]
    new = _new_payload(message.payload.decode("utf-8", "replace"), edit, what)
    return _replace(schedule, span.start, span.end, encode_message(message.headers, new))
