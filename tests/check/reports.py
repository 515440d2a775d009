"""Helpers for the exact-report tests of the provider checkers: frame a few payloads as the
provider does, check them, and return each violation as (rule, event, message), having checked
that its byte offset is where that event starts (or the body's end, for the stream as a
whole)."""

from __future__ import annotations

import json
from typing import Any

from replayproxy._core.check import RequestOptions, check_body

__all__ = ["check_events", "sse_event"]

Found = tuple[str, int | None, str]


def sse_event(obj: Any, name: str | None = None, *, crlf: bool = False) -> bytes:
    """One SSE event: an ``event:`` line when ``name`` is given, the JSON (or a str as is)."""
    data = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    head = f"event: {name}\n" if name is not None else ""
    text = f"{head}data: {data}\n\n"
    return (text.replace("\n", "\r\n") if crlf else text).encode()


def check_events(
    provider: str, events: list[bytes], request: RequestOptions | None = None
) -> list[Found]:
    """The violations of the body ``events`` (SSE events or event-stream messages) joined, as
    (rule, event index, message)."""
    body = b"".join(events)
    starts = [sum(len(e) for e in events[:i]) for i in range(len(events))]
    found = []
    for v in check_body(body, provider, request=request):
        if v.event is None:
            assert v.offset == len(body), v
        else:
            assert v.offset == starts[v.event], v
        found.append((v.rule, v.event, v.message))
    return found
