"""Anthropic Messages stream grammar (``POST /v1/messages``, ``stream: true``).

``event: <type>`` + ``data: {"type": <type>, ...}``; ``message_start`` first (pings aside);
content blocks started in index order, deltas that fit the block type, each block stopped;
``message_delta`` with the stop reason; ``message_stop`` last; ``error`` terminal. Also used for
the Anthropic events inside Bedrock InvokeModelWithResponseStream chunks. Rules ``anthropic.*``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.jsonload import loads

__all__ = ["Anthropic"]

STOP_REASONS = frozenset(
    {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)
# Which delta types each block type accepts; block types not listed are not checked.
_DELTAS = {
    "text": {"text_delta", "citations_delta"},
    "thinking": {"thinking_delta", "signature_delta"},
    "redacted_thinking": set(),
    "tool_use": {"input_json_delta"},
    "server_tool_use": {"input_json_delta"},
    "mcp_tool_use": {"input_json_delta"},
}


@dataclass
class _Block:
    type: str
    stopped: bool = False
    json_parts: list[str] = field(default_factory=list)


class Anthropic(Grammar):
    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.started = False
        self.stopped: StreamEvent | None = None
        self.error: StreamEvent | None = None
        self.after_reported = False
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.output_tokens: int | None = None  # the last usage.output_tokens seen

    def event(self, ev: StreamEvent) -> None:
        report = self.report
        payload = ev.payload
        if payload is INVALID or payload is None:
            return
        if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
            report.at("anthropic.event-name", ev, "the payload is not an object with a 'type'")
            return
        kind: str = payload["type"]
        if ev.name is None:
            report.at(
                "anthropic.event-name",
                ev,
                f"no event: line for a {kind!r} event; the anthropic SDK silently ignores it",
            )
        elif ev.name != kind:
            report.at(
                "anthropic.event-name",
                ev,
                f"event: {ev.name} but data.type is {kind!r}; the SDK dispatches on the name",
            )
        if self.stopped is not None or self.error is not None:
            if not self.after_reported:
                self.after_reported = True
                if self.error is not None:
                    report.at(
                        "anthropic.error-terminal",
                        ev,
                        f"{kind} after the error event (event {self.error.index}); the SDK "
                        "raised there",
                    )
                else:
                    report.at(
                        "anthropic.message-stop-last",
                        ev,
                        f"{kind} after message_stop; the stream should end there",
                    )
            return
        if kind == "ping":
            return
        if kind == "error":
            self.error = ev
            return
        if kind == "message_start":
            if self.started:
                report.at("anthropic.message-start-first", ev, "a second message_start")
            self.started = True
            message = payload.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(message, dict) and not isinstance(usage, dict):
                report.at(
                    "anthropic.usage",
                    ev,
                    "message_start has no message.usage; anthropic-python's get_final_message() "
                    "raises AttributeError, anthropic-node and the Vercel AI SDK raise too",
                )
            self._tokens(ev, usage)
            return
        if not self.started:
            self.started = True  # report once, then check the rest as if it had started
            report.at(
                "anthropic.message-start-first",
                ev,
                f"{kind} before message_start; MessageStream raises 'Unexpected event order'",
            )
        if kind == "content_block_delta":
            self._block_delta(ev, payload)
        elif kind == "content_block_start":
            self._block_start(ev, payload)
        elif kind == "content_block_stop":
            self._block_stop(ev, payload)
        elif kind == "message_delta":
            self._message_delta(ev, payload)
        elif kind == "message_stop":
            self._message_stop(ev)
        # unknown types are ignored, as the SDK does

    def _tokens(self, ev: StreamEvent, usage: Any) -> None:
        tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
        if isinstance(tokens, int):
            if self.output_tokens is not None and tokens < self.output_tokens:
                self.report.at(
                    "anthropic.usage-decrease",
                    ev,
                    f"usage.output_tokens drops from {self.output_tokens} to {tokens}; it is "
                    "cumulative and the SDK assigns it",
                )
            self.output_tokens = tokens

    def _block_start(self, ev: StreamEvent, payload: dict[str, Any]) -> None:
        index = payload.get("index")
        block = payload.get("content_block")
        btype = block.get("type") if isinstance(block, dict) else None
        expected = len(self.blocks)
        # Only an index equal to the count is looked up: a list or dict one is unhashable.
        taken = index == expected and index in self.blocks
        if index != expected or taken:
            what = (
                f"repeats index {index!r}, which already started"
                if taken
                else f"has index {index!r}, expected {expected}"
            )
            self.report.at(
                "anthropic.block-index",
                ev,
                f"content_block_start {what}; the SDK appends blocks without checking, so "
                "later deltas go to the wrong block",
            )
        open_blocks = [i for i, b in self.blocks.items() if not b.stopped]
        if open_blocks:
            self.report.at(
                "anthropic.block-interleave",
                ev,
                f"block {index} starts while block {open_blocks[0]} is still open",
            )
        if isinstance(index, int) and index not in self.blocks:
            self.blocks[index] = _Block(str(btype))

    def _open_block(self, ev: StreamEvent, payload: dict[str, Any], what: str) -> _Block | None:
        index = payload.get("index")
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None or block.stopped:
            state = "never started" if block is None else "already stopped"
            self.report.at(
                "anthropic.block-nesting",
                ev,
                f"{what} for block {index!r}, which is {state}; the SDK indexes "
                "content[index] (IndexError or a finished block changes)",
            )
            return None
        return block

    def _block_delta(self, ev: StreamEvent, payload: dict[str, Any]) -> None:
        block = self._open_block(ev, payload, "content_block_delta")
        if block is None:
            return
        delta = payload.get("delta")
        dtype = delta.get("type") if isinstance(delta, dict) else None
        allowed = _DELTAS.get(block.type)
        if allowed is not None and dtype not in allowed:
            self.report.at(
                "anthropic.delta-type",
                ev,
                f"a {dtype!r} delta in a {block.type!r} block",
            )
        if dtype == "input_json_delta" and isinstance(delta, dict):
            part = delta.get("partial_json")
            if isinstance(part, str):
                block.json_parts.append(part)

    def _block_stop(self, ev: StreamEvent, payload: dict[str, Any]) -> None:
        block = self._open_block(ev, payload, "content_block_stop")
        if block is None:
            return
        block.stopped = True
        joined = "".join(block.json_parts)
        if joined:  # one empty delta for an input of {}: the SDK keeps the start's input
            try:
                loads(joined)
            except ValueError:
                shown = joined if len(joined) <= 60 else joined[:57] + "..."
                self.report.at(
                    "anthropic.partial-json",
                    ev,
                    f"the joined partial_json of block {payload.get('index')} does not parse: "
                    f"{shown!r}",
                )

    def _unstopped(self, ev: StreamEvent, where: str) -> None:
        for index, block in self.blocks.items():
            if not block.stopped:
                block.stopped = True  # report each block once
                self.report.at(
                    "anthropic.block-nesting", ev, f"block {index} is not stopped before {where}"
                )

    def _message_delta(self, ev: StreamEvent, payload: dict[str, Any]) -> None:
        self._unstopped(ev, "message_delta")
        delta = payload.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if reason is not None:
            if reason not in STOP_REASONS:
                self.report.at("anthropic.stop-reason", ev, f"unknown stop_reason {reason!r}")
            self.stop_reason = str(reason)
        self._tokens(ev, payload.get("usage"))

    def _message_stop(self, ev: StreamEvent) -> None:
        self._unstopped(ev, "message_stop")
        if self.stop_reason is None:
            self.report.at(
                "anthropic.stop-reason",
                ev,
                "message_stop without a message_delta carrying stop_reason",
            )
        self.stopped = ev

    def finish(self, end: int) -> None:
        if self.error is None and self.stopped is None:
            self.report.add(
                "anthropic.message-stop-last",
                "the stream ends without message_stop; the anthropic SDK ends quietly, so a "
                "truncated message looks complete",
                offset=end,
            )
