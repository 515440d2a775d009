"""What a person sees of a cassette: the rows behind ``cassette show``, ``cassette frames`` and
``cassette events``.

The row builders return frozen dataclasses (plain values, no formatting decisions beyond
:func:`~replayproxy._core.cassette.texttokens.escape`, the one way bytes are printed anywhere)
so the CLI can print them as a table or as JSON.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._core.cassette.texttokens import escape
from replayproxy._core.websocket.inspect import end_text
from replayproxy._core.wire.events import NotAStreamError, event_spans

__all__ = [
    "EventRow",
    "FrameRow",
    "InteractionRow",
    "event_rows",
    "format_ns",
    "frame_rows",
    "interaction_row",
    "interaction_rows",
]


def format_ns(ns: int) -> str:
    """Nanoseconds as milliseconds for people: ``12.345ms`` (exact to the microsecond shown)."""
    sign = "-" if ns < 0 else ""
    whole, frac = divmod(abs(ns), 1_000_000)
    return f"{sign}{whole}.{frac // 1000:03d}ms"


@dataclass(frozen=True, slots=True)
class InteractionRow:
    index: int
    method: str
    url: str
    status: int | None
    http_version: str
    """The response's HTTP version as recorded (``HTTP/2.0``: over HTTP/2), else the
    request's; forward replay answers with it by default (the ``http_version`` option)."""
    frames: int
    bytes: int
    ttfb_ns: int | None
    duration_ns: int
    end: str
    end_message: str
    faults: tuple[str, ...]


def interaction_row(index: int, interaction: Interaction) -> InteractionRow:
    """One summary row: what ``cassette show`` prints per interaction."""
    resp = interaction.response
    last = max(
        [interaction.end.offset_ns]
        + [f.offset_ns for f in interaction.frames]
        + ([resp.head_offset_ns] if resp else [])
    )
    row = InteractionRow(
        index=index,
        method=interaction.request.method,
        url=interaction.request.url,
        status=None if resp is None else resp.status,
        http_version=interaction.request.http_version if resp is None else resp.http_version,
        frames=len(interaction.frames),
        bytes=sum(len(f.data) for f in interaction.frames),
        ttfb_ns=None if resp is None else resp.head_offset_ns,
        duration_ns=last,
        end=interaction.end.kind.value,
        end_message=interaction.end.message,
        faults=interaction.faults,
    )
    ws = interaction.websocket
    if ws is not None:  # a WebSocket session: its messages are the "frames"
        times = [last, ws.close.offset_ns, *(m.offset_ns for m in ws.messages)]
        row = replace(
            row,
            frames=len(ws.messages),
            bytes=sum(len(m.data) for m in ws.messages),
            duration_ns=max(times),
            end=end_text(ws),
            end_message="",
        )
    return row


def interaction_rows(cassette: Cassette) -> list[InteractionRow]:
    return [interaction_row(i, x) for i, x in enumerate(cassette.interactions)]


@dataclass(frozen=True, slots=True)
class FrameRow:
    index: int
    offset_ns: int
    gap_ns: int
    """Time since the previous frame (since the response head for the first frame)."""
    start: int
    """Where the frame starts in the response body, in bytes."""
    size: int
    text: str
    """The frame's bytes through :func:`escape`."""


def frame_rows(interaction: Interaction) -> list[FrameRow]:
    resp = interaction.response
    if resp is None:
        return []
    rows: list[FrameRow] = []
    previous = resp.head_offset_ns
    start = 0
    for i, frame in enumerate(resp.frames):
        rows.append(
            FrameRow(
                i,
                frame.offset_ns,
                frame.offset_ns - previous,
                start,
                len(frame.data),
                escape(frame.data),
            )
        )
        previous = frame.offset_ns
        start += len(frame.data)
    return rows


@dataclass(frozen=True, slots=True)
class EventRow:
    index: int
    start: int
    end: int
    """``[start, end)`` byte span in the response body."""
    first_frame: int
    last_frame: int
    """The frames the event's bytes arrived in (equal when it came in one frame)."""
    cuts: tuple[int, ...]
    """Byte offsets, relative to ``start``, where a frame boundary falls inside the event."""
    offset_ns: int
    """When the event was complete: the offset of the frame holding its last byte."""
    name: str
    text: str
    """The event's bytes through :func:`escape`, with ``│`` where a frame boundary falls."""


def _frame_starts(interaction: Interaction) -> list[int]:
    starts: list[int] = []
    pos = 0
    for frame in interaction.frames:
        starts.append(pos)
        pos += len(frame.data)
    return starts


def _frame_at(starts: list[int], pos: int) -> int:
    """The index of the frame holding body byte ``pos`` (``pos`` < the body's length): the
    last frame starting at or before it. That is never an empty frame: the frame after an
    empty one starts where it does, and is further on, so it is found first."""
    return bisect.bisect_right(starts, pos) - 1


def event_rows(interaction: Interaction) -> list[EventRow]:
    """The SSE / event-stream events of the response, each tied to the frames it came in.

    Raises :class:`~replayproxy._core.wire.events.NotAStreamError` if the body is not an event
    stream.
    """
    resp = interaction.response
    if resp is None:
        raise NotAStreamError("the interaction has no response, so no events")
    body = resp.body
    spans = event_spans(body, resp.header("content-type"))
    starts = _frame_starts(interaction)
    rows: list[EventRow] = []
    for i, span in enumerate(spans):
        first = _frame_at(starts, span.start)
        last = _frame_at(starts, max(span.start, span.end - 1))
        cuts = tuple(s - span.start for s in starts if span.start < s < span.end)
        pieces: list[str] = []
        prev = span.start
        for cut in cuts:
            pieces.append(escape(body[prev : span.start + cut]))
            prev = span.start + cut
        pieces.append(escape(body[prev : span.end]))
        rows.append(
            EventRow(
                index=i,
                start=span.start,
                end=span.end,
                first_frame=first,
                last_frame=last,
                cuts=cuts,
                offset_ns=resp.frames[last].offset_ns,  # an event has bytes, so frames
                name=span.name,
                text="│".join(pieces),
            )
        )
    return rows
