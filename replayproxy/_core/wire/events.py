"""One view of "the events of a response body", whatever its wire format.

:func:`event_spans` lists the events of an SSE body (``text/event-stream``) or an AWS
event-stream body (``application/vnd.amazon.eventstream``, Bedrock) as :class:`EventSpan` s:
index, ``[start, end)`` byte span and a name. Faults (``events=N``, drop/duplicate/reorder/
corrupt event N) and cassette edits use these spans to cut the body at event boundaries.

What is listed:

- SSE: dispatched events only (blocks with a ``data`` line; see :mod:`replayproxy._core.wire.sse`).
  Comment-only keepalives, stray blank lines and an unterminated last block are not events.
  ``name`` is the ``event:`` field, or ``"message"`` when there is none (OpenAI Chat, Gemini).
- Event-stream: every well-framed message with a valid message CRC, ``name`` being
  ``:event-type`` (or ``:exception-type`` for exceptions). Decoding stops at the first framing
  error (bad prelude CRC, impossible length); a partial last message is not listed.

A body that is not an event stream (JSON, a Gemini JSON array, plain text) raises
:class:`NotAStreamError`, a :class:`~replayproxy._errors.UsageError`, with a one-line message.
With ``content_type=None`` the format is sniffed from the first bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Literal

from replayproxy._core.wire.eventstream import EventStreamDecoder, EventStreamMessage
from replayproxy._core.wire.sse import parse_events
from replayproxy._errors import UsageError

__all__ = ["EventSpan", "NotAStreamError", "StreamFormat", "event_spans", "stream_format"]

StreamFormat = Literal["sse", "eventstream"]

_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":", b"data\n", b"data\r")


class NotAStreamError(UsageError):
    """The body is not an SSE or event-stream body, so it has no events to address."""


@dataclass(frozen=True, slots=True)
class EventSpan:
    """Event ``index`` of a body occupies ``body[start:end]``; ``name`` says what it is."""

    index: int
    start: int
    end: int
    name: str


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _looks_like_eventstream(body: bytes) -> bool:
    if len(body) < 16:
        return False
    total, _hlen, crc = struct.unpack_from(">III", body)
    return bool(zlib.crc32(body[:8]) == crc and total >= 16)


def stream_format(body: bytes, content_type: str | None) -> StreamFormat:
    """``"sse"`` or ``"eventstream"``; raises :class:`NotAStreamError` for anything else."""
    if content_type:
        media = _media_type(content_type)
        if media == "text/event-stream":
            return "sse"
        if media == "application/vnd.amazon.eventstream":
            return "eventstream"
        raise NotAStreamError(
            f"the body is {media}, not an event stream "
            "(text/event-stream or application/vnd.amazon.eventstream): it has no events"
        )
    if _looks_like_eventstream(body):
        return "eventstream"
    head = body.removeprefix(b"\xef\xbb\xbf").lstrip(b"\r\n")
    if head.startswith(_SSE_STARTS):
        return "sse"
    raise NotAStreamError(
        "the body does not look like an event stream (no content type given, and it starts "
        f"with {body[:16]!r})"
    )


def event_spans(body: bytes, content_type: str | None) -> list[EventSpan]:
    """The events of ``body`` with their byte spans, in stream order (see module doc)."""
    if stream_format(body, content_type) == "sse":
        return [EventSpan(e.index, e.start, e.end, e.event) for e in parse_events(body)]
    decoder = EventStreamDecoder()
    spans: list[EventSpan] = []
    for item in decoder.feed(body):
        if isinstance(item, EventStreamMessage):
            spans.append(EventSpan(len(spans), item.start, item.end, item.name))
        elif item.fatal:
            break
    return spans
