"""Shared types of the checker: violations, the report that collects them, the decoded event
handed to each provider grammar, and the grammar base class.

Grammars are small state machines fed one :class:`StreamEvent` at a time (already framed and
JSON-decoded by the SSE or event-stream layer) and told when the stream ends. They never see
bytes, so the result cannot depend on how the bytes were split into frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from replayproxy._core.check.rules import RULES, Severity
from replayproxy._core.wire.sse import SSEEvent

__all__ = [
    "INVALID",
    "MAX_PER_RULE",
    "GenericSSE",
    "Grammar",
    "Report",
    "RequestOptions",
    "StreamEvent",
    "Violation",
]

MAX_PER_RULE: Final = 20  # violations listed per rule; a summary line counts the rest


class _Invalid:
    """The payload of an event whose data is not JSON (already reported as ``sse.json``)."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where (event index, byte offset in the body) and what to do about it."""

    rule: str
    severity: Severity
    message: str
    event: int | None = None  # index of the event (None: the stream as a whole)
    offset: int | None = None  # byte offset in the body

    def __str__(self) -> str:
        where = []
        if self.event is not None:
            where.append(f"event {self.event}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        at = f" at {', '.join(where)}" if where else ""
        return f"{self.severity} {self.rule}{at}: {self.message}"


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """What the checker needs to know about the request (``None``: unknown)."""

    include_usage: bool | None = None


class StreamEvent(NamedTuple):
    """A dispatched event, decoded: ``payload`` is the parsed JSON, ``INVALID`` when the data
    is not JSON, or ``None`` for a provider sentinel (``[DONE]``). A NamedTuple, not a frozen
    dataclass: one is built per event and this is several times cheaper to construct."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, on purpose
    start: int
    end: int
    name: str | None  # SSE event: field (None when absent), or :event-type / :exception-type
    data: str
    payload: Any
    exception: bool = False  # an event-stream exception/error message


class Report:
    """Collects violations in stream order; caps each rule at :data:`MAX_PER_RULE` entries.

    ``notes`` name the known provider dialects the stream showed (``"usage on the finish chunk,
    as DeepSeek, Groq and Mistral send"``): what clients accept is named, not flagged.
    """

    def __init__(self) -> None:
        self.items: list[Violation] = []
        self.notes: list[str] = []
        self._counts: dict[str, int] = {}

    def note(self, text: str) -> None:
        """Name a dialect feature of the stream (once per text)."""
        if text not in self.notes:
            self.notes.append(text)

    def add(
        self, rule: str, message: str, *, event: int | None = None, offset: int | None = None
    ) -> None:
        count = self._counts.get(rule, 0) + 1
        self._counts[rule] = count
        if count <= MAX_PER_RULE:
            self.items.append(Violation(rule, RULES[rule].severity, message, event, offset))

    def at(self, rule: str, ev: StreamEvent | SSEEvent, message: str) -> None:
        """Report ``rule`` for event ``ev`` (its index and first byte)."""
        self.add(rule, message, event=ev.index, offset=ev.start)

    def summarize(self) -> None:
        """Append one line per rule whose violations were capped."""
        for rule, count in self._counts.items():
            if count > MAX_PER_RULE:
                more = count - MAX_PER_RULE
                self.items.append(
                    Violation(rule, RULES[rule].severity, f"{more} more violation(s) not listed")
                )


class Grammar:
    """Base class of provider grammars. ``sentinels`` are data values that are not JSON."""

    sentinels: frozenset[str] = frozenset()

    def __init__(self, report: Report, request: RequestOptions) -> None:
        self.report = report
        self.request = request

    dialect: str | None = None
    """The dialect the grammar told from the stream itself (a Bedrock model family), or
    ``None``: the dialect sniffer names it."""

    def told(self, url: str) -> None:
        """Called once, before any event, with the request URL when the checker has one."""

    def block(self, block: SSEEvent) -> None:
        """Called for every SSE block (events, comments, blank lines) before ``event``."""

    def event(self, ev: StreamEvent) -> None:
        """Called for every dispatched event, in order."""

    def finish(self, end: int) -> None:
        """Called once at end of stream; ``end`` is the body length."""


class GenericSSE(Grammar):
    """No provider grammar: the generic SSE rules only (``[DONE]`` allowed as a sentinel)."""

    sentinels = frozenset({"[DONE]"})
