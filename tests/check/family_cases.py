"""Rule cases of the grammars told by the provider registry beyond the first five APIs: Bedrock
InvokeModel by model family, Ollama's native NDJSON, Cohere v2 and Anthropic's legacy
``/v1/complete``. :mod:`tests.check.cases` merges them into ``BASES`` / ``CASES``.

Ollama and Cohere start from real recorded streams (``tests/check/streams/SOURCES.md``); the
Bedrock families and ``/v1/complete`` from their documented shapes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replayproxy._core.wire.eventstream import encode_event

__all__ = ["FAMILY_BASES", "INVOKE_FAMILIES", "complete_events", "family_cases", "invoke_body"]

STREAMS = Path(__file__).resolve().parent / "streams"
_METRICS = {"inputTokenCount": 9, "outputTokenCount": 4, "invocationLatency": 410,
            "firstByteLatency": 200}  # fmt: skip

# family -> the InvokeModelWithResponseStream chunk payloads of one short answer
INVOKE_FAMILIES: dict[str, list[dict[str, Any]]] = {
    "amazon-titan": [
        {"outputText": "Hello", "index": 0, "totalOutputTextTokenCount": 2,
         "completionReason": None, "inputTextTokenCount": 9},
        {"outputText": " there.", "index": 0, "totalOutputTextTokenCount": 4,
         "completionReason": "FINISH", "inputTextTokenCount": None,
         "amazon-bedrock-invocationMetrics": _METRICS},
    ],
    "amazon-nova": [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "Hello"}, "contentBlockIndex": 0}},
        {"contentBlockDelta": {"delta": {"text": " there."}, "contentBlockIndex": 0}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 9, "outputTokens": 4}},
         "amazon-bedrock-invocationMetrics": _METRICS},
    ],
    "meta": [
        {"generation": "Hello", "prompt_token_count": 9, "generation_token_count": 2,
         "stop_reason": None},
        {"generation": " there.", "prompt_token_count": None, "generation_token_count": 4,
         "stop_reason": "stop", "amazon-bedrock-invocationMetrics": _METRICS},
    ],
    "mistral": [
        {"outputs": [{"text": "Hello", "stop_reason": None}]},
        {"outputs": [{"text": " there.", "stop_reason": "stop"}],
         "amazon-bedrock-invocationMetrics": _METRICS},
    ],
    "cohere": [
        {"text": "Hello", "is_finished": False},
        {"text": " there.", "is_finished": False},
        {"is_finished": True, "finish_reason": "COMPLETE",
         "amazon-bedrock-invocationMetrics": _METRICS},
    ],
}  # fmt: skip


def invoke_body(chunks: list[dict[str, Any]]) -> bytes:
    """InvokeModelWithResponseStream: each payload base64 in a ``chunk`` event."""
    return b"".join(
        encode_event("chunk", json.dumps({"bytes": base64.b64encode(_dumps(c)).decode()}).encode())
        for c in chunks
    )


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def complete_events() -> list[bytes]:
    """A legacy /v1/complete stream (Anthropic's streaming reference example), one per event."""
    pieces = [(" Hello", None), ("!", None), ("", "stop_sequence")]
    out = [
        b"event: completion\ndata: "
        + _dumps({"type": "completion", "completion": text, "stop_reason": stop,
                  "model": "claude-2.1", "stop": "\n\nHuman:" if stop else None,
                  "log_id": "compl_01"})
        + b"\n\n"
        for text, stop in pieces
    ]  # fmt: skip
    out.insert(2, b'event: ping\ndata: {"type": "ping"}\n\n')
    return out


def ollama_lines() -> list[bytes]:
    raw = (STREAMS / "ollama-native-chat-phi3.ndjson").read_bytes().rstrip(b"\n")
    return [line + b"\n" for line in raw.split(b"\n")]


def cohere_events() -> list[bytes]:
    raw = (STREAMS / "cohere-v2-chat-stream.sse").read_bytes().rstrip(b"\n")
    return [block + b"\n\n" for block in raw.split(b"\n\n")]


def _j(parts: list[bytes]) -> bytes:
    return b"".join(parts)


FAMILY_BASES: dict[str, tuple[str, Callable[[], bytes]]] = {
    **{
        f"bedrock-invoke-{name}": ("bedrock-invoke", lambda c=chunks: invoke_body(c))
        for name, chunks in INVOKE_FAMILIES.items()
    },
    "ollama-chat": ("ollama", lambda: _j(ollama_lines())),
    "cohere-v2": ("cohere-v2", lambda: _j(cohere_events())),
    "anthropic-complete": ("anthropic", lambda: _j(complete_events())),
}
"""Base name -> (provider, body). The Bedrock ones are checked as ``bedrock-invoke`` without
a URL, as the false alarm of issue 25 was: the family comes from the first chunk."""


def family_cases() -> dict[str, tuple[str, bytes]]:
    """rule -> (base name, body breaking exactly that rule)."""
    c: dict[str, tuple[str, bytes]] = {}
    titan = INVOKE_FAMILIES["amazon-titan"]
    c["bedrock.invoke-stop"] = ("bedrock-invoke-amazon-titan", invoke_body(titan[:-1]))
    lines = ollama_lines()
    c["ollama.done"] = ("ollama-chat", _j(lines[:-1]))
    c["ollama.chunk-shape"] = ("ollama-chat", _j([*lines[:2], b"[1, 2]\n", *lines[2:]]))
    ev = cohere_events()
    ends = [i for i, e in enumerate(ev) if b"message-end" in e]
    c["cohere.message-end"] = ("cohere-v2", _j(ev[: ends[0]]))
    c["cohere.order"] = ("cohere-v2", _j([e for e in ev if b"event: content-start" not in e]))
    c["cohere.event-name"] = (
        "cohere-v2",
        _j([ev[0], ev[1].replace(b"event: content-start", b"event: content-begin"), *ev[2:]]),
    )
    cp = complete_events()
    c["anthropic.complete.stop"] = ("anthropic-complete", _j(cp[:-1]))
    c["anthropic.complete.event-name"] = (
        "anthropic-complete",
        _j([cp[0], cp[1].replace(b"event: completion", b"event: message"), *cp[2:]]),
    )
    return c
