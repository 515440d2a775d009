"""Incremental, byte-level Server-Sent Events parser (WHATWG rules) that reports byte spans.

``SSEParser.feed(bytes)`` returns the events completed by those bytes; every event carries
the ``[start, end)`` byte span it came from in the whole stream (the first byte of its first
line to the end of the blank line that dispatched it), so faults and edits can target events
and frame boundaries can be related to them. Any split of the input into ``feed`` calls gives
the same events with the same spans.

Parsing follows the WHATWG ``text/event-stream`` rules: lines end in CRLF, LF or CR (a CR at the
end of one feed and an LF at the start of the next are one line end); one leading UTF-8 BOM is
stripped; ``:`` starts a comment; ``name:value`` drops one space after the colon; a line without
a colon is a field with an empty value; ``data`` lines join with ``\\n``; an ``id`` containing
NUL is ignored; ``retry`` counts only when all ASCII digits. Each line is decoded as UTF-8 once
it is complete (so characters split across feeds are safe); invalid bytes become U+FFFD and
set ``utf8_ok=False``, while spans stay in bytes.

**What counts as an event.** A *block* is a run of non-blank lines ended by a blank line (or a
lone blank line). Only blocks with at least one ``data`` line are *events*: WHATWG dispatches
exactly those, so an Anthropic ``ping`` (it has ``data:``) is an event and ``: keepalive`` is
not. Events are numbered ``0, 1, 2, ...``; "event N" always means the N-th dispatched event.
By default the parser returns events only. ``SSEParser(include_ignored=True)`` also returns
the other blocks, each flagged by ``kind`` (never ``"event"``) and carrying the ``index`` of the
event that follows it (so a keepalive before event 3 has ``index == 3``):

- ``"comment"``: only comment lines (keepalives);
- ``"fields"``: ``event``/``id``/``retry``/unknown fields but no ``data`` (WHATWG drops it;
  openai-python dispatches it with empty data);
- ``"blank"``: a blank line with nothing before it (an extra blank line);
- ``"partial"``: from :meth:`SSEParser.close`, the unterminated last block (WHATWG discards it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BAD_ID",
    "BAD_RETRY",
    "CR",
    "CRLF",
    "HAS_EVENT",
    "HAS_ID",
    "LF",
    "SSEEvent",
    "SSEParser",
    "parse_blocks",
    "parse_events",
]

# Bits of ``SSEEvent.endings``: which line endings the block's lines (and its blank line) used.
LF: Final = 1
CR: Final = 2
CRLF: Final = 4

# Bits of ``SSEEvent.flags``: facts about the block's lines that a checker needs without
# re-reading them.
HAS_EVENT: Final = 1  # an `event` field line is present (even if it says "message")
HAS_ID: Final = 2  # a valid, non-empty `id` (clients resend it as Last-Event-ID)
BAD_ID: Final = 4  # an `id` containing NUL (ignored)
BAD_RETRY: Final = 8  # a `retry` that is not all ASCII digits (ignored)

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_BITS = {b"\n": LF, b"\r": CR, b"\r\n": CRLF}


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One block of the stream: a dispatched event (``kind == "event"``) or an ignored block."""

    index: int
    start: int
    end: int
    event: str  # the `event:` field, "message" when absent (WHATWG default)
    data: str  # `data:` lines joined with "\n"
    id: str | None = None  # the valid `id:` set in THIS block (WHATWG's last-event-id persists)
    retry: int | None = None  # a valid `retry:` in this block
    comments: tuple[str, ...] = ()  # comment lines, without ":" and one leading space
    kind: str = "event"  # "event" | "comment" | "fields" | "blank" | "partial"
    lines: tuple[str, ...] = ()  # the block's non-blank lines, decoded, without line endings
    endings: int = 0  # bitmask of LF / CR / CRLF used by its lines, blank line included
    utf8_ok: bool = True  # False when some line was not valid UTF-8 (decoded with U+FFFD)
    flags: int = 0  # HAS_EVENT | HAS_ID | BAD_ID | BAD_RETRY

    @property
    def dispatched(self) -> bool:
        """True for a real event (a block with a ``data`` line)."""
        return self.kind == "event"


def _decode(line: bytes) -> tuple[str, bool]:
    try:
        return line.decode("utf-8"), True
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace"), False


class SSEParser:
    """Incremental parser: ``feed`` bytes as they arrive, then ``close`` at end of stream."""

    def __init__(self, *, include_ignored: bool = False) -> None:
        self.include_ignored = include_ignored
        self.bom = False  # a leading BOM was stripped
        self.last_event_id = ""  # WHATWG's persistent last event ID buffer
        self._offset = 0  # stream offset of the next byte to be fed
        self._parts: list[bytes] = []  # pieces of the current, still unterminated line
        self._line_start = 0
        self._cr_line: bytes | None = None  # a line ended by CR at the end of the last feed
        self._at_start = True  # no byte processed yet (a BOM may still be arriving)
        self._head = b""  # the first bytes, held back while they could be a BOM
        self._block: list[bytes] = []  # raw lines of the open block
        self._block_start = 0
        self._endings = 0
        self._count = 0  # events dispatched so far
        self._closed = False

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume ``data``; return the blocks it completed (events, or all when asked)."""
        if self._closed:
            raise ValueError("SSEParser.feed() after close()")
        out: list[SSEEvent] = []
        if not data:
            return out
        if self._at_start:
            # Hold back the first bytes until we know whether they are a BOM (it may arrive
            # split over several feeds), then strip it once.
            self._head += data
            if len(self._head) < 3 and _BOM.startswith(self._head):
                return out
            data, self._head, self._at_start = self._head, b"", False
            if data.startswith(_BOM):
                self.bom = True
                data = data[3:]
                self._offset = self._line_start = 3
        self._process(data, out)
        return out

    def _process(self, data: bytes, out: list[SSEEvent]) -> None:
        base = self._offset
        self._offset += len(data)
        pos = 0
        if self._cr_line is not None and data:
            # The previous feed ended with CR: only now do we know whether it was CRLF, which
            # decides the line's end offset (and so the span of the event it may dispatch).
            line, self._cr_line = self._cr_line, None
            if data[0] == 0x0A:
                pos = 1
                self._line(line, base + 1, CRLF, out)
            else:
                self._line(line, base, CR, out)
            self._line_start = base + pos
        if not self._parts and not self._block:
            pos = self._whole_blocks(data, base, pos, out)
            self._line_start = base + pos
        n = len(data)
        for m in _EOL.finditer(data, pos):
            s, e = m.span()
            piece = data[pos:s]
            if self._parts:
                self._parts.append(piece)
                line = b"".join(self._parts)
                self._parts = []
            else:
                line = piece
            if e == n and e - s == 1 and data[s] == 0x0D:
                self._cr_line = line
                pos = e
                break
            self._line(line, base + e, _BITS[m.group()], out)
            pos = e
            self._line_start = base + e
        else:
            if pos < n:
                self._parts.append(data[pos:])

    def _whole_blocks(self, data: bytes, base: int, pos: int, out: list[SSEEvent]) -> int:
        """Fast path for the usual case: at a block boundary, with one line-ending style in
        ``data``, cut whole blocks at the blank line and decode each block at once. Returns
        where it stopped; the line-by-line path takes the rest (same results, tested)."""
        if b"\r" not in data:
            nl, bit = b"\n", LF
        elif data.count(b"\r") == data.count(b"\n") == data.count(b"\r\n"):
            nl, bit = b"\r\n", CRLF
        else:
            return pos
        blank = nl + nl
        step = len(nl)
        find = data.find
        while True:
            if data.startswith(nl, pos):  # a lone blank line
                self._emit(self._build([], True, base + pos, base + pos + step, bit), out)
                pos += step
                continue
            idx = find(blank, pos)
            if idx < 0:
                return pos
            raw = data[pos:idx]
            try:
                texts, ok = raw.decode("utf-8").split(nl.decode()), True
            except UnicodeDecodeError:
                texts, ok = [line.decode("utf-8", "replace") for line in raw.split(nl)], False
            self._emit(self._build(texts, ok, base + pos, base + idx + 2 * step, bit), out)
            pos = idx + 2 * step

    def _emit(self, block: SSEEvent, out: list[SSEEvent]) -> None:
        if block.kind == "event":
            self._count += 1
            out.append(block)
        elif self.include_ignored:
            out.append(block)

    def close(self) -> list[SSEEvent]:
        """End of stream: finish a pending CR line; an unterminated block is discarded
        (WHATWG) and returned as ``kind="partial"`` only with ``include_ignored``."""
        if self._closed:
            return []
        out: list[SSEEvent] = []
        if self._at_start:
            self._at_start = False
            self._process(self._head, out)  # fewer than 3 bytes: not a BOM
        if self._cr_line is not None:
            line, self._cr_line = self._cr_line, None
            self._line(line, self._offset, CR, out)
            self._line_start = self._offset
        tail = b"".join(self._parts)
        self._parts = []
        if tail:
            # The last line has no line end: it still belongs to the partial block.
            self._line(tail, self._offset, 0, out, terminated=False)
        if self._block:
            block = self._build_open(self._offset, "partial")
            self._block = []
            if self.include_ignored:
                out.append(block)
        self._closed = True
        return out

    def _line(
        self, line: bytes, end: int, bit: int, out: list[SSEEvent], terminated: bool = True
    ) -> None:
        start = self._line_start
        if line or not terminated:
            if not self._block:
                self._block_start = start
                self._endings = 0
            self._block.append(line)
            self._endings |= bit
            return
        # A blank line: dispatch the open block, or report a lone blank line.
        if not self._block:
            self._block_start = start
            self._endings = 0
        self._endings |= bit
        block = self._build_open(end, None)
        self._block = []
        self._emit(block, out)

    def _build_open(self, end: int, kind: str | None) -> SSEEvent:
        texts: list[str] = []
        ok = True
        for raw in self._block:
            text, good = _decode(raw)
            ok = ok and good
            texts.append(text)
        return self._build(texts, ok, self._block_start, end, self._endings, kind)

    def _build(
        self,
        texts: list[str],
        ok: bool,
        start: int,
        end: int,
        endings: int,
        kind: str | None = None,
    ) -> SSEEvent:
        data: list[str] = []
        comments: list[str] = []
        event = ""
        ident: str | None = None
        retry: int | None = None
        has_fields = False
        flags = 0
        for text in texts:
            name, colon, value = text.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                data.append(value)
                has_fields = True
            elif not name and colon:
                comments.append(value)
            elif name == "event":
                event = value
                flags |= HAS_EVENT
                has_fields = True
            elif name == "id":
                has_fields = True
                if "\0" in value:
                    flags |= BAD_ID
                else:
                    ident = value
                    if value:
                        flags |= HAS_ID
            elif name == "retry":
                has_fields = True
                if value.isascii() and value.isdigit():
                    retry = int(value)
                else:
                    flags |= BAD_RETRY
            else:
                has_fields = True
        if kind is None:
            if data:
                kind = "event"
            elif has_fields:
                kind = "fields"
            elif comments:
                kind = "comment"
            else:
                kind = "blank"
        if ident is not None and kind != "partial":
            self.last_event_id = ident
        return SSEEvent(
            self._count,
            start,
            end,
            event or "message",
            "\n".join(data),
            ident,
            retry,
            tuple(comments),
            kind,
            tuple(texts),
            endings,
            ok,
            flags,
        )


def parse_events(data: bytes) -> list[SSEEvent]:
    """All dispatched events of a complete stream."""
    parser = SSEParser()
    return parser.feed(data) + parser.close()


def parse_blocks(data: bytes) -> list[SSEEvent]:
    """Every block of a complete stream, events and ignored blocks alike, in stream order."""
    parser = SSEParser(include_ignored=True)
    return parser.feed(data) + parser.close()
