"""The SSE layer of the checker: generic ``text/event-stream`` rules, then JSON decoding and
hand-off of each event to the provider grammar.

Rules here (``sse.*``) hold for every SSE provider: no BOM, valid UTF-8, a blank line after the
last event, one line-ending style, no data-less events, valid ``id``/``retry`` fields, JSON
payloads. Everything is derived from the parser's blocks, never from how bytes were split.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, StreamEvent
from replayproxy._core.check.dialect import SNIFF_EVENTS
from replayproxy._core.check.jsonload import JSONDecodeError, loads
from replayproxy._core.wire.sse import (
    BAD_ID,
    BAD_RETRY,
    CR,
    CRLF,
    HAS_EVENT,
    HAS_ID,
    LF,
    SSEEvent,
    SSEParser,
)

__all__ = ["SSELayer"]

_STYLE = {LF: "LF", CR: "CR", CRLF: "CRLF"}


def _style(bits: int) -> str:
    return "+".join(name for bit, name in _STYLE.items() if bits & bit) or "none"


def _event_name(block: SSEEvent) -> str | None:
    """The ``event:`` field, or ``None`` when the block has no event line at all."""
    return block.event if block.flags & HAS_EVENT else None


class SSELayer:
    """Feeds bytes to an :class:`SSEParser` and checks its blocks; see the module doc."""

    def __init__(
        self,
        report: Report,
        grammar: Grammar,
        observe: Callable[[Any], None] | None = None,
    ) -> None:
        self.report = report
        self.grammar = grammar
        self._observe = observe  # sees the first SNIFF_EVENTS payloads (dialect detection)
        self._sniff_left = SNIFF_EVENTS if observe is not None else 0
        self._parser = SSEParser(include_ignored=True)
        self._bom_reported = False
        self._style = 0  # the line-ending bit of the first event
        self._mixed_reported = False
        self._id_seen = False
        self._end = 0
        self.dispatched = 0  # events handed to the grammar so far (delivery timing counts them)
        # Only some grammars look at raw blocks; skip the call per event for the others.
        overridden = type(grammar).block is not Grammar.block
        self._grammar_block = grammar.block if overridden else None

    def feed(self, data: bytes) -> None:
        self._end += len(data)
        blocks = self._parser.feed(data)
        if self._parser.bom and not self._bom_reported:
            self._bom_reported = True
            self.report.add(
                "sse.bom",
                "the body starts with a UTF-8 BOM (EF BB BF); openai-python and anthropic do not "
                "strip it, so the first event is lost (or loses its event: name): remove it",
                event=0,
                offset=0,
            )
        for block in blocks:
            self._block(block)

    def close(self) -> None:
        for block in self._parser.close():
            self._block(block)
        self.grammar.finish(self._end)

    def _block(self, block: SSEEvent) -> None:
        report = self.report
        if not block.utf8_ok:
            report.at("sse.utf8", block, "invalid UTF-8 in this event (shown as U+FFFD)")
        bits = block.endings
        if bits and not self._mixed_reported:
            if bits not in _STYLE or (self._style and bits != self._style):
                self._mixed_reported = True
                report.at(
                    "sse.line-endings",
                    block,
                    f"line endings mix {_style(self._style | bits)}; the anthropic SDK and "
                    "openai-python <= 2.24 dispatch such events late: use one style",
                )
            elif not self._style:
                self._style = bits
        flags = block.flags
        if flags:
            if flags & HAS_ID:
                self._id_seen = True
            if flags & BAD_ID:
                report.at("sse.id-nul", block, "id: field contains NUL; it is ignored")
            if flags & BAD_RETRY:
                retry = next((line for line in block.lines if line.startswith("retry")), "retry")
                report.at("sse.retry", block, f"{retry!r} is not all digits; it is ignored")
        if self._grammar_block is not None:
            self._grammar_block(block)
        kind = block.kind
        if kind == "event":
            self._event(block)
        elif kind == "partial":
            if any(not line.startswith(":") for line in block.lines):
                report.at(
                    "sse.unterminated",
                    block,
                    f"the stream ends inside an event ({block.end - block.start} bytes without "
                    "the closing blank line); every SSE decoder drops it silently",
                )
        elif kind == "fields":
            report.at(
                "sse.empty-event",
                block,
                "a block with event:/id:/retry: but no data:; openai-python dispatches it with "
                "empty data and .json() raises",
            )
        elif kind == "blank" and self._id_seen:
            report.at(
                "sse.empty-event",
                block,
                "an extra blank line after an id: was seen; openai-python dispatches it as an "
                "event with empty data and .json() raises",
            )

    def _event(self, block: SSEEvent) -> None:
        self.dispatched += 1
        data = block.data
        payload: object
        if data in self.grammar.sentinels:
            payload = None
        else:
            try:
                payload = loads(data)
            except JSONDecodeError as e:
                payload = INVALID
                shown = data if len(data) <= 60 else data[:57] + "..."
                self.report.at("sse.json", block, f"data is not JSON ({e.msg}): {shown!r}")
        if self._sniff_left and self._observe is not None:
            self._sniff_left -= 1
            self._observe(payload)
        self.grammar.event(
            StreamEvent(block.index, block.start, block.end, _event_name(block), data, payload)
        )
