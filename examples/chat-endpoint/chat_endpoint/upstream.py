"""Reading the provider's OpenAI-style chat stream: the request, and the SSE reassembly.

An SSE event may span several reads (and a UTF-8 character may be cut between two): bytes are
buffered until a blank line ends the event, and only whole events are decoded. That is the
fifty lines where streaming bugs live; ``CHAT_EXAMPLE_BUG=reframe`` swaps in the classic
mistake (each read parsed on its own, so an event cut by a read boundary is lost).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MODEL = "gpt-4.1-nano"
_BLANK_LINE = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def request_body(message: str, model: str = MODEL) -> dict[str, Any]:
    """The chat completion request for one user message (the cassettes hold exactly this)."""
    return {"model": model, "stream": True, "messages": [{"role": "user", "content": message}]}


@dataclass(frozen=True)
class Chunk:
    """What one upstream event says: text, the finish reason, or the end (``[DONE]``)."""

    text: str = ""
    finish_reason: str | None = None
    done: bool = False


def _chunk(block: bytes) -> Chunk | None:
    data = b"\n".join(
        line[5:].removeprefix(b" ") for line in block.splitlines() if line.startswith(b"data:")
    )
    if not data:
        return None  # a comment (keep-alive) or an event without data
    if data == b"[DONE]":
        return Chunk(done=True)
    payload = json.loads(data.decode("utf-8"))
    choices = payload.get("choices") or [{}]
    delta = choices[0].get("delta") or {}
    return Chunk(delta.get("content") or "", choices[0].get("finish_reason"))


class Reassembler:
    """Feed reads, get the chunks of the events they complete (any split gives the same)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> Iterator[Chunk]:
        self._buffer += data
        while match := _BLANK_LINE.search(self._buffer):
            block, self._buffer = self._buffer[: match.start()], self._buffer[match.end() :]
            chunk = _chunk(block)
            if chunk is not None:
                yield chunk


class ReadByReadReassembler(Reassembler):
    """BUG (``CHAT_EXAMPLE_BUG=reframe``): parses each read on its own, dropping the part of
    an event that a read boundary cut off (it "works" as long as reads are whole events)."""

    def feed(self, data: bytes) -> Iterator[Chunk]:
        for block in _BLANK_LINE.split(data):
            try:
                chunk = _chunk(block)
            except ValueError:  # half an event: not JSON, or half a UTF-8 character
                continue
            if chunk is not None:
                yield chunk
