"""Gemini ``streamGenerateContent?alt=sse`` grammar.

Only ``data: `` lines (with the space) and blank lines, CRLF line ends, each payload a
``GenerateContentResponse``; exactly one ``finishReason`` per candidate, on its last chunk;
stable ``responseId``/``modelVersion``; ``usageMetadata`` on the final chunk; no ``[DONE]``.
Rules ``gemini.*``.
"""

from __future__ import annotations

import binascii
from typing import Any

from replayproxy._core.check.base import Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.wire.sse import CRLF, SSEEvent

__all__ = ["Gemini"]


class Gemini(Grammar):
    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.crlf_reported = False
        self.first: dict[str, Any] = {}
        self.changed: set[str] = set()
        self.candidates: dict[int, int | None] = {}  # candidate index -> finishReason event
        self.after_finish_reported: set[int] = set()
        self.last: StreamEvent | None = None  # the last chunk (not the error)
        self.error: StreamEvent | None = None
        self.after_error_reported = False
        self.blocked = False  # promptFeedback.blockReason: the prompt was refused, no candidates

    def block(self, block: SSEEvent) -> None:
        for line in block.lines:
            if not line.startswith("data: "):
                what = "a comment" if line.startswith(":") else repr(line[:20])
                self.report.at(
                    "gemini.data-prefix",
                    block,
                    f"{what} line; google-genai accepts only 'data: ' lines and feeds any other "
                    "line into its JSON error buffer",
                )
                break
        if block.endings & ~CRLF and block.kind != "partial" and not self.crlf_reported:
            self.crlf_reported = True
            self.report.at("gemini.crlf", block, "line endings other than CRLF")

    def event(self, ev: StreamEvent) -> None:
        p = ev.payload
        if not isinstance(p, dict):  # not JSON (reported as sse.json), or not an object
            return
        report = self.report
        if self.error is not None:
            if not self.after_error_reported:
                self.after_error_reported = True
                report.at("gemini.error-terminal", ev, "a chunk after the error chunk")
            return
        if "error" in p:
            self.error = ev
            return
        self.last = ev
        feedback = p.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not p.get("candidates"):
            self.blocked = True
            report.note(
                f"the prompt was blocked (promptFeedback.blockReason "
                f"{feedback['blockReason']!r}): no candidate, so no finishReason; google-genai "
                "returns the feedback"
            )
        for key in ("responseId", "modelVersion"):
            value = p.get(key)
            if value is None:
                continue
            first = self.first.setdefault(key, value)
            if value != first and key not in self.changed:
                self.changed.add(key)
                report.at("gemini.stable-ids", ev, f"{key} changed from {first!r} to {value!r}")
        candidates = p.get("candidates")
        for cand in candidates if isinstance(candidates, list) else []:
            if not isinstance(cand, dict):
                continue
            index = cand.get("index", 0)
            if not isinstance(index, int):
                continue
            finished = self.candidates.get(index)
            reason = cand.get("finishReason")
            if finished is not None:
                if index not in self.after_finish_reported:
                    self.after_finish_reported.add(index)
                    extra = f" (a second finishReason {reason!r})" if reason else ""
                    report.at(
                        "gemini.finish-reason",
                        ev,
                        f"candidate {index} continues after its finishReason at event "
                        f"{finished}{extra}",
                    )
                continue
            self.candidates[index] = ev.index if reason else None
            self._function_calls(ev, cand)

    def _function_calls(self, ev: StreamEvent, cand: dict[str, Any]) -> None:
        content = cand.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            signature = part.get("thoughtSignature") if isinstance(part, dict) else None
            if signature is not None and not _is_base64(signature):
                self.report.at(
                    "gemini.thought-signature",
                    ev,
                    f"thoughtSignature {str(signature)[:40]!r} is not base64; google-genai "
                    "raises ValidationError reading the chunk",
                )
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict) and "args" in call and not isinstance(call["args"], dict):
                self.report.at(
                    "gemini.function-call-args",
                    ev,
                    f"functionCall {call.get('name')!r} has args of type "
                    f"{type(call['args']).__name__}, not an object",
                )

    def finish(self, end: int) -> None:
        if self.error is not None:
            return
        unfinished = [i for i, f in self.candidates.items() if f is None]
        if unfinished or not (self.candidates or self.blocked):
            which = f"candidate {unfinished[0]}" if unfinished else "any candidate"
            self.report.add(
                "gemini.finish-reason",
                f"the stream ends without a finishReason for {which}; google-genai does not "
                "report this truncation",
                offset=end,
            )
        if self.last is not None and "usageMetadata" not in self.last.payload:
            self.report.at(
                "gemini.usage-metadata", self.last, "the final chunk has no usageMetadata"
            )


def _is_base64(value: object) -> bool:
    """Whether ``value`` is a base64 string as pydantic's bytes field (google-genai) takes it:
    standard or URL-safe alphabet, padding optional."""
    if not isinstance(value, str):
        return False
    text = value.replace("-", "+").replace("_", "/")
    try:
        binascii.a2b_base64(text + "=" * (-len(text) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return True
