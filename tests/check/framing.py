"""Real provider payloads framed as each provider frames them on the wire (test helper).

The JSON payload bytes are the lines of ``replayproxy/testing/payloads/*.jsonl`` as stored;
only the framing is added: OpenAI Chat ``data: {json}\\n\\n`` + ``data: [DONE]``, Responses and
Anthropic ``event: {type}\\ndata: {json}\\n\\n``, Gemini ``data: {json}\\r\\n\\r\\n``, Bedrock
ConverseStream one event-stream message per line (``{"<eventType>": {...}}``).
"""

from __future__ import annotations

import json
from importlib import resources

from replayproxy.core.eventstream import encode_event

__all__ = ["PAYLOAD_FILES", "SSE_STREAMS", "bedrock_body", "payload_lines", "sse_body"]

# stream name -> (payload file, provider, content type)
PAYLOAD_FILES = {
    "openai-chat-text": "openai-chat-text.jsonl",
    "openai-chat-tool-call": "openai-compatible-chat-tool-call.jsonl",
    "openai-responses": "openai-responses-web-search.jsonl",
    "anthropic-text": "anthropic-messages-text.jsonl",
    "anthropic-tool-use": "anthropic-messages-tool-use.jsonl",
    "gemini-text": "gemini-text.jsonl",
    "bedrock-converse": "bedrock-converse-text.jsonl",
}
SSE_STREAMS = [name for name in PAYLOAD_FILES if name != "bedrock-converse"]


def payload_lines(name: str) -> list[bytes]:
    """The raw JSON payloads of stream ``name``, bytes as stored."""
    raw = (
        resources.files("replayproxy.testing")
        .joinpath("payloads")
        .joinpath(PAYLOAD_FILES[name])
        .read_bytes()
    )
    return [line for line in raw.splitlines() if line.strip()]


def frame_sse(name: str, payloads: list[bytes]) -> list[bytes]:
    """Frame ``payloads`` as the provider of stream ``name`` does: one bytes object per event."""
    if name.startswith("openai-chat"):
        return [b"data: " + p + b"\n\n" for p in payloads] + [b"data: [DONE]\n\n"]
    if name == "gemini-text":
        return [b"data: " + p + b"\r\n\r\n" for p in payloads]
    return [
        b"event: " + json.loads(p)["type"].encode() + b"\ndata: " + p + b"\n\n" for p in payloads
    ]


def sse_body(name: str) -> bytes:
    """The whole SSE body of stream ``name``."""
    return b"".join(frame_sse(name, payload_lines(name)))


def bedrock_messages(payloads: list[bytes] | None = None) -> list[bytes]:
    """ConverseStream event-stream messages, one per payload line."""
    out = []
    for p in payloads if payloads is not None else payload_lines("bedrock-converse"):
        obj = json.loads(p)
        ((event_type, inner),) = obj.items()
        body = json.dumps(inner, separators=(",", ":")).encode()
        out.append(encode_event(event_type, body))
    return out


def bedrock_body() -> bytes:
    """The whole ConverseStream body."""
    return b"".join(bedrock_messages())
