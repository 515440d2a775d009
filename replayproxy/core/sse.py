"""Incremental, byte-level Server-Sent Events parser (WHATWG rules) that reports byte spans.

(Stub: interface fixed, implementation in progress.) ``SSEParser.feed(bytes)`` returns the
events completed by those bytes; every event carries the ``[start, end)`` byte span it came
from in the whole stream (from its first line to the end of the blank line that ends it), so
faults and edits can target events and frame boundaries can be related to them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEParser", "parse_events"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    index: int
    start: int
    end: int
    event: str  # the `event:` field, "message" when absent (WHATWG default)
    data: str  # `data:` lines joined with "\n"
    id: str | None = None
    retry: int | None = None
    comments: tuple[str, ...] = ()


class SSEParser:
    def feed(self, data: bytes) -> list[SSEEvent]:
        raise NotImplementedError

    def close(self) -> list[SSEEvent]:
        raise NotImplementedError


def parse_events(data: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return parser.feed(data) + parser.close()
