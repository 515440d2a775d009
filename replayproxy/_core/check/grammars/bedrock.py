"""Bedrock: the AWS event-stream layer and the ConverseStream / InvokeModelWithResponseStream
grammars.

:class:`EventStreamLayer` decodes messages (prelude and message CRCs, lengths, headers: the
decoder's error codes are the rule ids), checks the ``:message-type`` headers and JSON
payloads, and hands events to a grammar. :class:`Converse` checks the ConverseStream order
(``messageStart`` -> content blocks by ascending ``contentBlockIndex`` -> ``messageStop`` ->
``metadata``); :class:`InvokeChunks` unwraps ``{"bytes": base64}`` chunks, and
:mod:`.bedrock_invoke` checks what is inside by model family. Rules ``bedrock.*``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.jsonload import loads
from replayproxy._core.wire.eventstream import (
    EventStreamDecoder,
    EventStreamError,
    EventStreamMessage,
)

__all__ = ["Converse", "EventStreamLayer", "InvokeChunks"]

_MESSAGE_TYPES = frozenset({"event", "exception", "error"})


class EventStreamLayer:
    """Feeds bytes to an :class:`EventStreamDecoder` and checks each message."""

    def __init__(self, report: Report, grammar: Grammar) -> None:
        self.report = report
        self.grammar = grammar
        self._decoder = EventStreamDecoder()
        self._end = 0
        self._fatal = False

    def feed(self, data: bytes) -> None:
        self._end += len(data)
        for item in self._decoder.feed(data):
            self._item(item)

    def close(self) -> None:
        for item in self._decoder.close():
            self._item(item)
        # After a framing error the rest of the stream is unreadable: end-of-stream rules
        # (missing messageStop ...) would only repeat it.
        if not self._fatal:
            self.grammar.finish(self._end)

    def _item(self, item: EventStreamMessage | EventStreamError) -> None:
        if isinstance(item, EventStreamError):
            self._fatal = self._fatal or item.fatal
            self.report.add(item.code, item.message, event=item.index, offset=item.offset)
            return
        mtype = item.message_type
        if mtype not in _MESSAGE_TYPES:
            self.report.add(
                "bedrock.message-type",
                f":message-type is {mtype!r}, expected event, exception or error",
                event=item.index,
                offset=item.start,
            )
        elif mtype == "event" and (
            item.event_type is None or item.content_type != "application/json"
        ):
            self.report.add(
                "bedrock.message-type",
                f"an event with :event-type {item.event_type!r} and :content-type "
                f"{item.content_type!r} (expected a name and application/json)",
                event=item.index,
                offset=item.start,
            )
        data = item.payload.decode("utf-8", "replace")
        payload: Any
        try:
            payload = loads(item.payload) if item.payload else {}
        except ValueError as e:
            payload = INVALID
            self.report.add(
                "bedrock.json",
                f"the payload of {item.name} is not JSON ({e})",
                event=item.index,
                offset=item.start,
            )
        self.grammar.event(
            StreamEvent(
                item.index,
                item.start,
                item.end,
                item.name,
                data,
                payload,
                exception=mtype in ("exception", "error"),
            )
        )


@dataclass
class _Block:
    stopped: bool = False
    tool_input: list[str] = field(default_factory=list)


_ORDER = ["messageStart", "block", "messageStop", "metadata"]
# phase index -> the phases that may come right before it (-1: the start of the stream)
_ALLOWED_BEFORE = {0: {-1}, 1: {0, 1}, 2: {0, 1}, 3: {2}}


class _Terminal(Grammar):
    """Common part: an exception ends the stream."""

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.exception: StreamEvent | None = None
        self.after_reported = False

    def _after_exception(self, ev: StreamEvent) -> bool:
        if self.exception is not None:
            if not self.after_reported:
                self.after_reported = True
                self.report.at(
                    "bedrock.exception-terminal",
                    ev,
                    f"{ev.name} after the exception {self.exception.name} "
                    f"(message {self.exception.index}); botocore raised there",
                )
            return True
        if ev.exception:
            self.exception = ev
            return True
        return False


class Converse(_Terminal):
    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.phase = -1  # index into _ORDER of the last phase seen
        self.blocks: dict[int, _Block] = {}

    def event(self, ev: StreamEvent) -> None:
        if self._after_exception(ev):
            return
        name = str(ev.name)  # an event-stream message always has one (its message type at least)
        phase = "block" if name.startswith("contentBlock") else name
        if phase not in _ORDER:
            return  # unknown event types are ignored
        want = _ORDER.index(phase)
        ok = self.phase in _ALLOWED_BEFORE[want]
        if not ok:
            seen = _ORDER[self.phase] if self.phase >= 0 else "nothing"
            self.report.at(
                "bedrock.converse-order",
                ev,
                f"{name} after {seen}; expected messageStart, content blocks, messageStop, "
                "metadata",
            )
        self.phase = max(self.phase, want)
        if phase == "messageStop":
            self._unstopped(ev)
        if phase == "block" and isinstance(ev.payload, dict):
            self._block(ev, name, ev.payload)

    def _unstopped(self, ev: StreamEvent) -> None:
        for index, block in self.blocks.items():
            if not block.stopped:
                block.stopped = True
                self.report.at("bedrock.block-stop", ev, f"content block {index} is never stopped")

    def _block(self, ev: StreamEvent, name: str, p: dict[str, Any]) -> None:
        index = p.get("contentBlockIndex")
        if not isinstance(index, int):
            self.report.at("bedrock.block-index", ev, f"{name} has no contentBlockIndex")
            return
        block = self.blocks.get(index)
        if block is None:
            # contentBlockStart is optional for text blocks: the first delta opens the block.
            if name == "contentBlockStop" or index != len(self.blocks):
                self.report.at(
                    "bedrock.block-index",
                    ev,
                    f"{name} for block {index}, expected block {len(self.blocks)} to start",
                )
            open_blocks = [i for i, b in self.blocks.items() if not b.stopped]
            if open_blocks:
                self.report.at(
                    "bedrock.block-stop",
                    ev,
                    f"block {index} starts while block {open_blocks[0]} is open",
                )
            block = self.blocks[index] = _Block()
            if name == "contentBlockStop":
                block.stopped = True
            return
        if block.stopped or name == "contentBlockStart":
            what = "already stopped" if block.stopped else "already started"
            self.report.at("bedrock.block-index", ev, f"{name} for block {index}, {what}")
            return
        if name == "contentBlockDelta":
            delta = p.get("delta")
            tool = delta.get("toolUse") if isinstance(delta, dict) else None
            if isinstance(tool, dict) and isinstance(tool.get("input"), str):
                block.tool_input.append(tool["input"])
        elif name == "contentBlockStop":
            block.stopped = True
            joined = "".join(block.tool_input)
            if joined:  # "" for a tool without arguments: clients keep an empty input
                try:
                    loads(joined)
                except ValueError:
                    self.report.at(
                        "bedrock.tool-input",
                        ev,
                        f"block {index}'s toolUse.input does not parse as JSON: {joined[:60]!r}",
                    )

    def finish(self, end: int) -> None:
        if self.exception is None and self.phase < _ORDER.index("metadata"):
            missing = "messageStop and metadata" if self.phase < 2 else "metadata"
            self.report.add(
                "bedrock.converse-end",
                f"the stream ends without {missing} (truncated at a message boundary)",
                offset=end,
            )


class InvokeChunks(_Terminal):
    """InvokeModelWithResponseStream of a model whose chunks hold its own JSON (Amazon Nova
    and Titan, Meta, Mistral ...): the ``chunk`` wrapping is checked, not what is inside."""

    def event(self, ev: StreamEvent) -> None:
        if not self._after_exception(ev) and ev.payload is not INVALID:
            self._unwrap(ev)

    def _unwrap(self, ev: StreamEvent) -> StreamEvent | None:
        """The event inside a ``chunk`` (its decoded ``bytes``), or ``None`` (reported)."""
        p = ev.payload
        raw = p.get("bytes") if isinstance(p, dict) else None
        if ev.name != "chunk" or not isinstance(raw, str):
            self.report.at(
                "bedrock.invoke-chunk",
                ev,
                f"{ev.name} event without a string 'bytes' field; expected chunk events",
            )
            return None
        try:
            inner_data = base64.b64decode(raw, validate=True).decode("utf-8")
            inner = loads(inner_data)
        except (binascii.Error, UnicodeDecodeError, ValueError) as e:
            self.report.at("bedrock.invoke-chunk", ev, f"chunk bytes are not base64 JSON ({e})")
            return None
        name = inner.get("type") if isinstance(inner, dict) else None
        return StreamEvent(ev.index, ev.start, ev.end, name, inner_data, inner)
