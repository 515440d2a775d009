"""Cohere v2 Chat stream grammar (``POST /v2/chat``, ``stream: true``): ``event: <type>`` +
``data: {"type": <type>, ...}``; ``message-start`` first, then ``content-*``,
``tool-plan-delta``, ``tool-call-*`` and ``citation-*`` events by ``index``, then
``message-end`` with ``finish_reason`` and usage; a ``data: [DONE]`` after it (as the API sends)
ends the body. Rules ``cohere.*``.
"""

from __future__ import annotations

from typing import Final

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.rules import Rule, register

__all__ = ["CohereV2"]

register(
    [
        Rule(
            "cohere.message-end",
            "error",
            "The stream ends with message-end (then at most data: [DONE]), nothing after it.",
            "cohere's Python SDK yields each event and ends quietly at the end of the body: "
            "without message-end a cut answer looks complete and has no finish_reason or "
            "usage; events after it reach the application after the end.",
        ),
        Rule(
            "cohere.order",
            "warning",
            "message-start comes first; a *-delta or *-end event names an index its *-start "
            "opened (content, tool-call, citation).",
            "Accumulators key content and tool calls by index; the SDK itself does not check.",
        ),
        Rule(
            "cohere.event-name",
            "warning",
            "Every event has an event: line equal to data.type.",
            "The SDK reads data.type; only clients that dispatch on the SSE name care.",
        ),
    ]
)

_OPENED: Final = ("content", "tool-call", "citation")


class CohereV2(Grammar):
    sentinels = frozenset({"[DONE]"})

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.started = False
        self.end: StreamEvent | None = None
        self.after_reported = False
        self.open: set[tuple[str, int]] = set()
        self.name_reported = False

    def event(self, ev: StreamEvent) -> None:
        p = ev.payload
        if p is INVALID or p is None:
            return
        if self.end is not None:
            if not self.after_reported:
                self.after_reported = True
                self.report.at(
                    "cohere.message-end",
                    ev,
                    f"an event after message-end (event {self.end.index})",
                )
            return
        kind = p.get("type") if isinstance(p, dict) else None
        if not isinstance(kind, str):
            self.report.at("cohere.event-name", ev, "the payload has no string 'type'")
            return
        if ev.name is not None and ev.name != kind and not self.name_reported:
            self.name_reported = True
            self.report.at("cohere.event-name", ev, f"event: {ev.name} but data.type is {kind!r}")
        first, self.started = not self.started, True
        if first and kind != "message-start":
            self.report.at("cohere.order", ev, f"the first event is {kind}, not message-start")
        if kind == "message-end":
            self.end = ev
            return
        family, _, tail = kind.rpartition("-")
        index = p.get("index")
        if family not in _OPENED or not isinstance(index, int):
            return
        key = (family, index)
        if tail == "start":
            self.open.add(key)
        elif key not in self.open:
            self.report.at("cohere.order", ev, f"{kind} for {family} {index}, which is not open")
            if tail != "end":
                self.open.add(key)  # report each unopened index once
        elif tail == "end":
            self.open.discard(key)

    def finish(self, end: int) -> None:
        if self.end is None:
            self.report.add(
                "cohere.message-end",
                "the stream ends without message-end; the SDK ends quietly, so a truncated "
                "answer looks complete",
                offset=end,
            )
