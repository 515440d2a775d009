"""Ollama's native stream grammar (``POST /api/chat``, ``/api/generate``; NDJSON, the
default ``stream: true``): one JSON object per line, ``message.content`` (chat) or
``response`` (generate) pieces with ``done: false``, then one line with ``done: true``,
``done_reason`` and the counts. A ``{"error": ...}`` line ends the stream (ollama-python
raises ``ResponseError`` there). Rules ``ollama.*``.
"""

from __future__ import annotations

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.rules import Rule, register

__all__ = ["Ollama"]

register(
    [
        Rule(
            "ollama.done",
            "error",
            "Exactly one line has done: true, and it is the last (an error line aside).",
            "ollama-python (httpx iter_lines, json.loads per line) and ollama-js yield each line "
            "and end quietly at the end of the body: without the done line a cut answer looks "
            "complete (and has no counts); lines after it reach the application after the "
            "final chunk.",
        ),
        Rule(
            "ollama.chunk-shape",
            "error",
            "Every line is a JSON object.",
            "ollama-python builds a ChatResponse / GenerateResponse from each line with "
            "cls(**part) (read in ollama 0.4.7 _client.py); a list or a number raises TypeError.",
        ),
    ]
)


class Ollama(Grammar):
    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.done: StreamEvent | None = None
        self.error: StreamEvent | None = None
        self.after_reported = False

    def event(self, ev: StreamEvent) -> None:
        p = ev.payload
        if p is INVALID:
            return
        if self.done is not None or self.error is not None:
            if not self.after_reported:
                self.after_reported = True
                what = "done: true" if self.done is not None else "error"
                first = self.done if self.done is not None else self.error
                assert first is not None
                self.report.at(
                    "ollama.done",
                    ev,
                    f"a line after the {what} line (line {first.index}); clients hand it to "
                    "the application after the final chunk",
                )
            return
        if not isinstance(p, dict):
            self.report.at(
                "ollama.chunk-shape",
                ev,
                f"the line is a JSON {type(p).__name__}, not an object; ollama-python "
                "cannot build a response from it",
            )
            return
        if p.get("error"):
            self.error = ev
        elif p.get("done") is True:
            self.done = ev
            if "done_reason" not in p:
                self.report.note("a done line without done_reason, as Ollama before 0.1.32 sends")

    def finish(self, end: int) -> None:
        if self.done is None and self.error is None:
            self.report.add(
                "ollama.done",
                "the stream ends without a done: true line; ollama-python ends quietly, so a "
                "truncated answer looks complete",
                offset=end,
            )
