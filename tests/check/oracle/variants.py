"""Broken variants of corpus streams, which the checker and the clients must both flag.

Each is one real corpus stream with one breakage: cut before its terminal event, a structural
event dropped, the finish chunk sent twice, and the three breakages issue 25 says the checker
missed (``object: "chat.completion"`` on every chunk, ``delta.annotations`` entries without an
``index``, ``delta.content`` as a list of parts). The base stream is the first corpus stream of
the provider that has what the breakage needs (text, say), so the set follows the corpus.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

from replayproxy._core.wire import eventstream
from tests.check.oracle.streams import OracleStream
from tests.check.oracle.truth import read

__all__ = ["variants"]

_SSE_BLOCK = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)", re.S)
Edit = Callable[[list[bytes]], list[bytes] | None]


def _blocks(stream: OracleStream) -> list[bytes]:
    """The body as whole events (SSE blocks with their blank line, event-stream messages)."""
    if stream.content_type == "application/vnd.amazon.eventstream":
        return [
            stream.body[m.start : m.end]
            for m in eventstream.decode_all(stream.body)
            if isinstance(m, eventstream.EventStreamMessage)
        ]
    return _SSE_BLOCK.findall(stream.body)


def _kind(block: bytes) -> str | None:
    """The event's type: SSE ``event:`` / payload ``type``, event-stream ``:event-type``, or
    ``finish`` for a Chat/Gemini chunk carrying a finish reason, ``[DONE]``."""
    if block.startswith(b"\x00"):
        (message,) = eventstream.decode_all(block)
        return message.name if isinstance(message, eventstream.EventStreamMessage) else None
    data = _data(block)
    if data is None:
        return None
    if data == "[DONE]":
        return "[DONE]"
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    if isinstance(obj, dict) and "type" in obj and "choices" not in obj:
        return str(obj["type"])
    if not isinstance(obj, dict):
        return None
    choices = obj.get("choices") or obj.get("candidates") or []
    if any(c.get("finish_reason") or c.get("finishReason") for c in choices):
        return "finish"
    return "chunk"


def _data(block: bytes) -> str | None:
    lines = block.decode("utf-8", "replace").splitlines()
    data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
    return "\n".join(data) if data else None


def _cut_before(kinds: tuple[str, ...]) -> Edit:
    def edit(blocks: list[bytes]) -> list[bytes] | None:
        at = [i for i, b in enumerate(blocks) if _kind(b) in kinds]
        return blocks[: at[0]] if at else None

    return edit


def _drop_first(kind: str) -> Edit:
    def edit(blocks: list[bytes]) -> list[bytes] | None:
        at = [i for i, b in enumerate(blocks) if _kind(b) == kind]
        return blocks[: at[0]] + blocks[at[0] + 1 :] if at else None

    return edit


def _twice(kind: str) -> Edit:
    def edit(blocks: list[bytes]) -> list[bytes] | None:
        at = [i for i, b in enumerate(blocks) if _kind(b) == kind]
        return blocks[: at[0] + 1] + blocks[at[0] :] if at else None

    return edit


def _rewrite_chunks(change: Callable[[dict[str, Any]], bool]) -> Edit:
    """Apply ``change`` to each Chat chunk's JSON (``True``: it changed something); the edit
    applies when at least one chunk changed."""

    def edit(blocks: list[bytes]) -> list[bytes] | None:
        out, changed = [], False
        for block in blocks:
            data = _data(block)
            if data is None or data == "[DONE]":
                out.append(block)
                continue
            obj = json.loads(data)
            if change(obj):
                changed = True
                block = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
            out.append(block)
        return out if changed else None

    return edit


def _chat_completion_object(obj: dict[str, Any]) -> bool:
    obj["object"] = "chat.completion"
    return True


def _content_as_list(obj: dict[str, Any]) -> bool:
    changed = False
    for choice in obj.get("choices") or []:
        content = (choice.get("delta") or {}).get("content")
        if isinstance(content, str) and content:
            choice["delta"]["content"] = [{"type": "text", "text": content}]
            changed = True
    return changed


def _annotations_without_index() -> Callable[[dict[str, Any]], bool]:
    """A url_citation annotation on the first two text deltas (a list field is merged from the
    second delta on: that is where an entry without ``index`` matters)."""
    done = {"count": 0}

    def change(obj: dict[str, Any]) -> bool:
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str) and delta["content"] and done["count"] < 2:
                done["count"] += 1
                citation = {"url": "https://example.com/", "title": "Example", "start_index": 0}
                citation["end_index"] = len(delta["content"])
                delta["annotations"] = [{"type": "url_citation", "url_citation": citation}]
                return True
        return False

    return change


# (provider, name, what it breaks, needs text in the base stream, the edit)
_VARIANTS: tuple[tuple[str, str, str, bool, Callable[[], Edit]], ...] = (
    ("openai-chat", "cut", "cut before the finish chunk", True, lambda: _cut_before(("finish",))),
    ("openai-chat", "object-chat-completion", 'object "chat.completion" on every chunk', True,
     lambda: _rewrite_chunks(_chat_completion_object)),
    ("openai-chat", "annotations-no-index", "delta.annotations entries without index", True,
     lambda: _rewrite_chunks(_annotations_without_index())),
    ("openai-chat", "content-list", "delta.content as a list of parts", True,
     lambda: _rewrite_chunks(_content_as_list)),
    ("openai-responses", "cut", "cut before response.completed", True,
     lambda: _cut_before(("response.completed",))),
    ("openai-responses", "no-created", "response.created dropped", True,
     lambda: _drop_first("response.created")),
    ("anthropic", "cut", "cut before message_stop", True, lambda: _cut_before(("message_stop",))),
    ("anthropic", "no-message-start", "message_start dropped", True,
     lambda: _drop_first("message_start")),
    ("anthropic", "no-block-start", "the first content_block_start dropped", True,
     lambda: _drop_first("content_block_start")),
    ("gemini", "cut", "cut before the finishReason chunk", True, lambda: _cut_before(("finish",))),
    ("bedrock-converse", "cut", "cut before messageStop", True,
     lambda: _cut_before(("messageStop",))),
)  # fmt: skip

# Edits every client was measured to read fine: the checker warns about them, never errs.
_HARMLESS: tuple[tuple[str, str, str, bool, Callable[[], Edit]], ...] = (
    ("openai-chat", "finish-twice", "the finish chunk sent twice", True, lambda: _twice("finish")),
    ("bedrock-converse", "no-block-stop", "the first contentBlockStop dropped", True,
     lambda: _drop_first("contentBlockStop")),
)  # fmt: skip


def variants(corpus: list[OracleStream]) -> list[OracleStream]:
    """Every variant (breaking and harmless) whose provider has a fitting base stream in
    ``corpus``."""
    out = []
    marked = [(v, False) for v in _VARIANTS] + [(v, True) for v in _HARMLESS]
    for (provider, name, what, needs_text, make), harmless in marked:
        for base in corpus:
            truth = read(base.provider, base.body)
            if base.provider != provider or truth is None or (needs_text and not truth.text):
                continue
            if truth.error is not None or not truth.complete:
                continue
            edited = make()(_blocks(base))
            if edited is None:
                continue
            body = b"".join(edited)
            out.append(
                dataclasses.replace(
                    base, name=f"{base.name}~{name}", body=body, broken=what, harmless=harmless
                )
            )
            break
    return out
