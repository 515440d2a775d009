"""Real provider streams for the checker tests, as the simulator serves them.

A thin view of :mod:`replayproxy.testing._streams` (payload bytes as stored, framed as each
provider frames them) under the names these tests use, plus :func:`frame_sse` to re-frame
edited payloads when building a stream that breaks one rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from replayproxy.testing._streams import STREAMS, frame

__all__ = ["PAYLOAD_FILES", "SSE_STREAMS", "bedrock_body", "payload_lines", "sse_body"]

_BEDROCK = "bedrock-converse-text"
# The names these tests use -> the simulator's stream names.
_NAMES = {
    "openai-chat-text": "openai-chat-text",
    "openai-chat-tool-call": "openai-chat-tool-call",
    "openai-responses": "openai-responses",
    "anthropic-text": "anthropic-text",
    "anthropic-tool-use": "anthropic-tool-use",
    "gemini-text": "gemini-text",
    "bedrock-converse": _BEDROCK,
}
PAYLOAD_FILES = tuple(_NAMES)
SSE_STREAMS = [name for name in _NAMES if name != "bedrock-converse"]


def payload_lines(name: str) -> list[bytes]:
    """The raw JSON payloads of stream ``name``, bytes as stored."""
    return list(STREAMS[_NAMES[name]].payloads)


def frame_sse(name: str, payloads: Sequence[bytes]) -> list[bytes]:
    """Frame ``payloads`` as the provider of stream ``name`` does: one bytes object per event."""
    return list(frame(_NAMES[name], payloads))


def sse_body(name: str) -> bytes:
    """The whole SSE body of stream ``name``."""
    return STREAMS[_NAMES[name]].body


def bedrock_messages() -> list[bytes]:
    """ConverseStream event-stream messages, one per payload line."""
    return list(STREAMS[_BEDROCK].events)


def bedrock_body() -> bytes:
    """The whole ConverseStream body."""
    return STREAMS[_BEDROCK].body
