"""Anthropic's legacy Text Completions stream grammar (``POST /v1/complete``): ``event:
completion`` events whose data carries a ``completion`` piece and ``stop_reason`` (``null``
until the last), ``ping`` keepalives, and an ``error`` event that ends the stream (the
anthropic SDK raises there). Rules ``anthropic.complete.*``.

:class:`AnthropicAny` is the grammar of the ``anthropic`` API: the Messages grammar, or this
one when the request path ends in ``/complete`` or the first event is a ``completion``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.grammars.anthropic import Anthropic
from replayproxy._core.check.rules import Rule, register
from replayproxy._core.wire.sse import SSEEvent

__all__ = ["AnthropicAny", "AnthropicComplete"]

register(
    [
        Rule(
            "anthropic.complete.stop",
            "error",
            "One completion event carries a stop_reason, and no completion follows it.",
            "The anthropic SDK's completions stream yields each event and ends quietly at the "
            "end of the body: without the stop_reason a cut completion looks complete; apps "
            "read stop_reason to tell max_tokens from stop_sequence.",
        ),
        Rule(
            "anthropic.complete.event-name",
            "error",
            "Every event is named completion, ping or error, and data.type equals the name.",
            "The SDK's Stream dispatches on the event name: a completion under another name is "
            "skipped silently.",
        ),
    ]
)

_NAMES = frozenset({"completion", "ping", "error"})


class AnthropicComplete(Grammar):
    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.stop: StreamEvent | None = None
        self.error = False
        self.after_reported = False

    def event(self, ev: StreamEvent) -> None:
        p = ev.payload
        if p is INVALID or p is None or self.error:
            return
        kind = p.get("type") if isinstance(p, dict) else None
        if ev.name not in _NAMES or kind != ev.name:
            shown = "no event: line" if ev.name is None else f"event: {ev.name}"
            self.report.at("anthropic.complete.event-name", ev, f"{shown} with data.type {kind!r}")
            return
        if kind == "error":
            self.error = True
        elif kind == "completion" and isinstance(p, dict):
            if self.stop is not None:
                if not self.after_reported:
                    self.after_reported = True
                    self.report.at(
                        "anthropic.complete.stop",
                        ev,
                        f"a completion event after the one with stop_reason (event "
                        f"{self.stop.index})",
                    )
            elif p.get("stop_reason") is not None:
                self.stop = ev

    def finish(self, end: int) -> None:
        if self.stop is None and not self.error:
            self.report.add(
                "anthropic.complete.stop",
                "the stream ends without a completion event carrying stop_reason; the SDK "
                "ends quietly, so a truncated completion looks complete",
                offset=end,
            )


class AnthropicAny(Grammar):
    """Anthropic Messages, or the legacy Text Completions (told by the URL or the first
    event); the choice names the dialect."""

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.inner: Grammar | None = None

    def _legacy(self) -> None:
        self.inner = AnthropicComplete(self.report, self.request)
        self.dialect = "Anthropic (Text Completions)"

    def told(self, url: str) -> None:
        try:
            path = urlsplit(url).path.rstrip("/")
        except ValueError:
            return
        if path.endswith("/complete"):
            self._legacy()

    def block(self, block: SSEEvent) -> None:
        if self.inner is not None:
            self.inner.block(block)

    def event(self, ev: StreamEvent) -> None:
        if self.inner is None:
            if ev.name == "completion":
                self._legacy()
            else:
                self.inner = Anthropic(self.report, self.request)
        assert self.inner is not None
        self.inner.event(ev)

    def finish(self, end: int) -> None:
        if self.inner is None:
            self.inner = Anthropic(self.report, self.request)
        self.inner.finish(end)
