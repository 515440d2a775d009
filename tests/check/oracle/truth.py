"""The independent reading of a stream: what its payloads say, read straight from the JSON.

This is what a client *should* deliver: the assistant text, each tool call's arguments, the
output-token usage, the finish (stop) reason, whether the stream reached its end, and the
provider error it carries. It never asks the checker: the oracle holds the checker against
clients, so the yardstick must be neither. SSE is split here with the plain WHATWG line rules
(enough for the payloads; the SSE edge cases are the clients' to show); AWS event-stream
framing is decoded with the wire decoder (framing only, no rules).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from replayproxy._core.wire import eventstream

__all__ = ["GeminiCalls", "Reading", "canonical_args", "read", "sse_events"]


@dataclass(frozen=True, slots=True)
class Reading:
    text: str
    tool_args: tuple[str, ...]  # canonical (see canonical_args), in stream order
    usage: int | None  # output tokens, when the stream reports them
    finish: str | None  # the provider's own word (finish_reason, stop_reason, status)
    complete: bool  # the stream reached the event that ends it
    error: str | None = None  # an in-band provider error the client should report
    role: str | None = None  # the role the stream gives the message (Chat Completions)
    blocked: str | None = None  # Gemini's promptFeedback.blockReason: a client may report it


def sse_events(body: bytes) -> Iterator[tuple[str | None, str]]:
    """(event name, data) of each dispatched SSE event."""
    name: str | None = None
    data: list[str] = []
    text = body.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    for line in text.split("\n"):
        if line == "":
            if data:
                yield name, "\n".join(data)
            name, data = None, []
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value


def _json_events(body: bytes) -> Iterator[tuple[str | None, Any]]:
    for name, data in sse_events(body):
        if data == "[DONE]":
            yield name, "[DONE]"
            continue
        try:
            yield name, json.loads(data)
        except ValueError:
            yield name, None


def canonical_args(raw: object) -> str:
    """Tool arguments in one spelling: parsed JSON dumped sorted, or the raw text when it is
    not JSON (so a client that parses and one that passes the string through compare)."""
    if isinstance(raw, str):
        if raw.strip() == "":
            return "{}"
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    return json.dumps(raw, sort_keys=True, separators=(",", ":"))


_canon = canonical_args


def _content_text(content: object) -> str:
    """``delta.content`` as text: a string, or a list of parts (only ``text`` parts count)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _openai_chat(body: bytes) -> Reading:
    text, usage, finish, done, error, role = "", None, None, False, None, None
    tools: dict[int, str] = {}
    for _, obj in _json_events(body):
        if obj == "[DONE]":
            done = True
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("error"):
            error = str(obj["error"])[:80]
        if isinstance(obj.get("usage"), dict):
            usage = obj["usage"].get("completion_tokens", usage)
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            role = role or delta.get("role")
            text += _content_text(delta.get("content"))
            for call in delta.get("tool_calls") or []:
                args = (call.get("function") or {}).get("arguments") or ""
                tools[call.get("index", 0)] = tools.get(call.get("index", 0), "") + args
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    args = tuple(_canon(tools[i]) for i in sorted(tools))
    return Reading(text, args, usage, finish, done or finish is not None, error, role)


_RESPONSES_END = {"response.completed", "response.incomplete", "response.failed", "error"}


def _openai_responses(body: bytes) -> Reading:
    text, usage, finish, error, end = "", None, None, None, False
    tools: dict[str, str] = {}
    for name, obj in _json_events(body):
        if obj == "[DONE]" or not isinstance(obj, dict):
            continue
        kind = obj.get("type", name)
        if kind == "response.output_text.delta":
            text += obj.get("delta", "")
        elif kind == "response.function_call_arguments.done":
            tools[obj.get("item_id", "")] = obj.get("arguments", "")
        elif kind == "response.output_item.done":
            item = obj.get("item") or {}
            if item.get("type") == "function_call":
                tools[item.get("id", "")] = item.get("arguments", "")
        if kind in _RESPONSES_END:
            end = True
            response = obj.get("response") or {}
            finish = response.get("status", finish)
            if isinstance(response.get("usage"), dict):
                usage = response["usage"].get("output_tokens")
            if kind == "error" or response.get("error"):
                found = obj.get("message") or obj.get("error") or response.get("error")
                error = error or str(found)[:80]
    return Reading(text, tuple(_canon(a) for a in tools.values()), usage, finish, end, error)


def _anthropic_events(events: Iterator[tuple[str | None, Any]]) -> Reading:
    text, usage, finish, end, error = "", None, None, False, None
    blocks: dict[int, dict[str, Any]] = {}
    for name, obj in events:
        if not isinstance(obj, dict):
            continue
        kind = obj.get("type", name)
        index = obj.get("index", 0)
        if kind == "content_block_start":
            block = dict(obj.get("content_block") or {})
            block["json"] = ""
            blocks[index] = block
        elif kind == "content_block_delta":
            delta = obj.get("delta") or {}
            block = blocks.setdefault(index, {"type": "text", "text": "", "json": ""})
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "input_json_delta":
                block["json"] += delta.get("partial_json", "")
        elif kind == "message_delta":
            finish = (obj.get("delta") or {}).get("stop_reason") or finish
            if isinstance(obj.get("usage"), dict) and "output_tokens" in obj["usage"]:
                usage = obj["usage"]["output_tokens"]
        elif kind == "message_stop":
            end = True
        elif kind == "error":
            error = str((obj.get("error") or {}).get("message", obj))[:80]
    for i in sorted(blocks):
        if blocks[i].get("type") == "text":
            text += blocks[i].get("text", "")
    args = tuple(
        _canon(b["json"] or b.get("input") or {})
        for _, b in sorted(blocks.items())
        if b.get("type") == "tool_use"
    )
    return Reading(text, args, usage, finish, end, error)


_PATH_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _put(args: dict[str, Any], partial: dict[str, Any]) -> None:
    """One ``partialArgs`` entry into ``args``: ``stringValue`` pieces append, other values set."""
    steps: list[str | int] = [
        key if key else int(i) for key, i in _PATH_STEP.findall(partial.get("jsonPath", ""))
    ]
    if not steps:
        return
    node: Any = args
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        if after is None:
            break
        empty: Any = [] if isinstance(after, int) else {}
        if isinstance(node, list):
            assert isinstance(step, int)
            while len(node) <= step:
                node.append(None)
            node[step] = node[step] if node[step] is not None else empty
        else:
            node.setdefault(step, empty)
        node = node[step]
    last = steps[-1]
    if isinstance(node, list):
        assert isinstance(last, int)
        while len(node) <= last:
            node.append(None)
    if "stringValue" in partial:
        before = node[last] if isinstance(node, list) else node.get(last)
        value: Any = (before if isinstance(before, str) else "") + partial["stringValue"]
    elif "numberValue" in partial:
        value = partial["numberValue"]
    elif "boolValue" in partial:
        value = partial["boolValue"]
    else:
        value = None
    node[last] = value


class GeminiCalls:
    """The function calls of a Gemini stream's parts (each ``functionCall`` as a dict, camelCase
    keys). Vertex streams one call's arguments across parts: a part naming the call with
    ``willContinue``, parts of ``partialArgs`` (a JSON path and a value piece), an empty part
    closing it. An application on google-genai has to put them together the same way."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None

    def add(self, call: dict[str, Any]) -> None:
        if call.get("name"):
            self.calls.append(dict(call.get("args") or {}))
            self._open = self.calls[-1] if call.get("willContinue") else None
        elif self._open is not None:
            for partial in call.get("partialArgs") or []:
                _put(self._open, partial)
            if not call.get("willContinue"):
                self._open = None

    def canonical(self) -> tuple[str, ...]:
        return tuple(canonical_args(c) for c in self.calls)


def _gemini(body: bytes) -> Reading:
    text, usage, finish, error, blocked = "", None, None, None, None
    calls = GeminiCalls()
    for _, obj in _json_events(body):
        if not isinstance(obj, dict):
            continue
        if obj.get("error"):
            error = str(obj["error"])[:80]
        feedback = obj.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            # A blocked prompt ends with no candidate, so no finishReason: it is complete (the
            # reason is promptFeedback's, which google-genai reports as prompt_feedback)
            blocked = str(feedback["blockReason"])
        if isinstance(obj.get("usageMetadata"), dict):
            usage = obj["usageMetadata"].get("candidatesTokenCount", usage)
        for cand in obj.get("candidates") or []:
            if cand.get("index", 0) != 0:
                continue
            for part in (cand.get("content") or {}).get("parts") or []:
                if "text" in part and not part.get("thought"):
                    text += part["text"]
                if "functionCall" in part:
                    calls.add(part["functionCall"])
            finish = cand.get("finishReason") or finish
    complete = finish is not None or blocked is not None
    return Reading(text, calls.canonical(), usage, finish, complete, error, blocked=blocked)


def _eventstream(body: bytes) -> Iterator[tuple[str, Any]]:
    for message in eventstream.decode_all(body):
        if isinstance(message, eventstream.EventStreamMessage):
            try:
                yield message.name, json.loads(message.payload)
            except ValueError:
                yield message.name, None


def _converse(body: bytes) -> Reading:
    text, usage, finish, end, error = "", None, None, False, None
    tools: dict[int, str] = {}
    for name, obj in _eventstream(body):
        if not isinstance(obj, dict):
            continue
        if name == "contentBlockDelta":
            delta = obj.get("delta") or {}
            text += delta.get("text", "")
            if "toolUse" in delta:
                i = obj.get("contentBlockIndex", 0)
                tools[i] = tools.get(i, "") + delta["toolUse"].get("input", "")
        elif name == "contentBlockStart" and "toolUse" in (obj.get("start") or {}):
            tools.setdefault(obj.get("contentBlockIndex", 0), "")
        elif name == "messageStop":
            finish, end = obj.get("stopReason"), True
        elif name == "metadata" and isinstance(obj.get("usage"), dict):
            usage = obj["usage"].get("outputTokens")
        elif name.endswith("Exception"):
            error = str(obj.get("message", name))[:80]
    return Reading(text, tuple(_canon(tools[i]) for i in sorted(tools)), usage, finish, end, error)


def _invoke_payloads(body: bytes) -> Iterator[tuple[str | None, Any]]:
    """The model's own JSON events inside InvokeModelWithResponseStream ``chunk`` events."""
    for name, obj in _eventstream(body):
        if name == "chunk" and isinstance(obj, dict) and "bytes" in obj:
            try:
                yield None, json.loads(base64.b64decode(obj["bytes"]))
            except ValueError:
                yield None, None


def _invoke(body: bytes) -> Reading:
    payloads = list(_invoke_payloads(body))
    if any(isinstance(p, dict) and "type" in p for _, p in payloads):
        return _anthropic_events(iter(payloads))  # Anthropic models: Messages events
    return _invoke_native([p for _, p in payloads if isinstance(p, dict)])


def _invoke_native(payloads: list[dict[str, Any]]) -> Reading:
    """The other model families' own chunk shapes: Amazon Titan (``outputText``,
    ``completionReason``), Meta (``generation``, ``stop_reason``), Mistral (``outputs``), Cohere
    (``text``, ``finish_reason``), Nova (ConverseStream-like keys); the invocation metrics
    Bedrock adds to the last chunk give the usage."""
    text, usage, finish, metrics = "", None, None, False
    for p in payloads:
        outputs = p.get("outputs") if isinstance(p.get("outputs"), list) else [p]
        for out in outputs:
            for key in ("outputText", "generation", "text"):
                if isinstance(out.get(key), str):
                    text += out[key]
            for key in ("completionReason", "stop_reason", "finish_reason"):
                finish = out.get(key) or finish
        delta = (p.get("contentBlockDelta") or {}).get("delta") or {}
        text += delta.get("text", "") if isinstance(delta.get("text"), str) else ""
        finish = (p.get("messageStop") or {}).get("stopReason") or finish
        if isinstance(p.get("amazon-bedrock-invocationMetrics"), dict):
            metrics = True
            usage = p["amazon-bedrock-invocationMetrics"].get("outputTokenCount", usage)
        metrics = metrics or "totalOutputTextTokenCount" in p
    return Reading(text, (), usage, finish, metrics or finish is not None)


def read(provider: str, body: bytes) -> Reading | None:
    """The reading of ``body`` as ``provider`` sends it (every ``bedrock-invoke*`` id is read
    by model family from the chunks); ``None`` for a provider the oracle has no reading of (no
    client reads it either)."""
    readers = {
        "openai-chat": _openai_chat,
        "openai-responses": _openai_responses,
        "anthropic": lambda b: _anthropic_events(_json_events(b)),
        "gemini": _gemini,
        "bedrock-converse": _converse,
        "bedrock-invoke": _invoke,
    }
    family = "bedrock-invoke" if provider.startswith("bedrock-invoke") else provider
    reader = readers.get(family)
    return reader(body) if reader else None
