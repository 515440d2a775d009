"""Shared by the import tests: the real OpenAI stream, its text, and a replay to the openai SDK."""

from __future__ import annotations

import json
from pathlib import Path

import openai

from replayproxy import ReplayServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "cassettes" / "openai-chat-text.cassette"
MESSAGES = [{"role": "user", "content": "Invent a new holiday and describe it."}]


def real_events() -> list[dict[str, object]]:
    """The real OpenAI chunks, from the shipped example cassette's first interaction."""
    from replayproxy import _store as store
    from replayproxy._core.wire.sse import parse_events

    body = store.load(EXAMPLE).interactions[0].response.body  # type: ignore[union-attr]
    return [json.loads(e.data) for e in parse_events(body) if e.data != "[DONE]"]


def sse_body(events: list[dict[str, object]]) -> bytes:
    """Framed as OpenAI does: ``data: {json}\\n\\n`` per chunk, then ``data: [DONE]``."""
    parts = [b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events]
    return b"".join(parts) + b"data: [DONE]\n\n"


def text_of(events: list[dict[str, object]]) -> str:
    out = []
    for e in events:
        for c in e.get("choices") or []:  # type: ignore[attr-defined]
            out.append(c["delta"].get("content") or "")
    return "".join(out)


def replayed_text(cassette: Path) -> str:
    """What the openai SDK reads from a replay of ``cassette``."""
    with ReplayServer(cassette, speed=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=30)
        stream = client.chat.completions.create(
            model="gpt-4.1-nano",
            messages=MESSAGES,
            stream=True,  # type: ignore[arg-type]
        )
        return "".join(c.delta.content or "" for chunk in stream for c in chunk.choices)
