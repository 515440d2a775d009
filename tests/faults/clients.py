"""Run one streamed request with a real client and describe what the client observed.

Clients: the ``openai`` SDK (Chat Completions), the ``anthropic`` SDK (Messages) and raw
``httpx`` (bytes as read). Each runner returns an :class:`Outcome`: the exception the client
raised (module-qualified class name, e.g. ``httpx.RemoteProtocolError``), the text it
assembled, whether it saw the stream's terminal signal, and timings. ``Outcome.effect`` folds
that into the short phrase the fault tables compare and docs/guides/faults.md quotes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.faults.provider import terminal_index
from replayproxy._core.wire.events import event_spans
from tests.faults.builders import events_for

__all__ = [
    "BODIES",
    "Outcome",
    "run_anthropic",
    "run_httpx",
    "run_openai",
    "sdk_transport",
    "text_of",
]

TIMEOUT = 1.0  # seconds; hang/linger/stall tests rely on clients giving up this fast
OPENAI_BODY = {
    "messages": [{"role": "user", "content": "hi"}],
    "model": "gpt-4o-mini",
    "stream": True,
}
ANTHROPIC_BODY = {
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "model": "claude-replay-test",
    "stream": True,
}
BODIES = {"openai-chat-text": OPENAI_BODY, "anthropic-text": ANTHROPIC_BODY}


def _name(e: BaseException) -> str:
    return f"{type(e).__module__.split('.')[0]}.{type(e).__name__}"


@dataclass
class Outcome:
    """What one client observed for one request."""

    stream: str
    error: str | None = None
    message: str = ""
    text: str = ""
    terminal: bool = False
    status: int | None = None
    head_s: float | None = None
    total_s: float = 0.0
    chunks: list[bytes] = field(default_factory=list)
    chunk_times: list[float] = field(default_factory=list)

    @property
    def effect(self) -> str:
        """A short description: the exception, or how the text and the ending looked."""
        if self.error:
            return f"raises {self.error}"
        if self.status not in (None, 200):
            return f"HTTP {self.status}, no exception"
        full = text_of(self.stream, b"".join(events_for(self.stream, short=True)))
        if self.text == full:
            text = "full text"
        elif full.startswith(self.text):
            text = "partial text"
        else:
            text = "altered text"
        end = "terminal seen" if self.terminal else "no terminal"
        return f"ok, {text}, {end}"


def sdk_transport() -> str:
    """``httpx``, or ``httpx2`` for the SDK generations built on it (openai 3, anthropic 2)."""
    import openai._base_client as base

    return "httpx2" if hasattr(base, "httpx2") else "httpx"


def run_openai(base_url: str, stream: str = "openai-chat-text") -> Outcome:
    import openai

    out = Outcome(stream)
    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0, timeout=TIMEOUT)
    t0 = time.monotonic()
    parts: list[str] = []
    try:
        chunks: Any = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        out.head_s = time.monotonic() - t0
        for chunk in chunks:
            for choice in chunk.choices:
                if choice.delta.content:
                    parts.append(choice.delta.content)
                if choice.finish_reason:
                    out.terminal = True
    except Exception as e:
        out.error, out.message = _name(e), str(e)[:200]
        out.status = getattr(e, "status_code", None)
    finally:
        out.total_s = time.monotonic() - t0
        out.text = "".join(parts)
        client.close()
    return out


def run_anthropic(base_url: str, stream: str = "anthropic-text") -> Outcome:
    import anthropic

    out = Outcome(stream)
    client = anthropic.Anthropic(
        base_url=base_url, api_key="sk-ant-test", max_retries=0, timeout=TIMEOUT
    )
    t0 = time.monotonic()
    parts: list[str] = []
    try:
        events: Any = client.messages.create(
            model="claude-replay-test",
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        out.head_s = time.monotonic() - t0
        for event in events:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                parts.append(event.delta.text)
            if event.type == "message_stop":
                out.terminal = True
    except Exception as e:
        out.error, out.message = _name(e), str(e)[:200]
        out.status = getattr(e, "status_code", None)
    finally:
        out.total_s = time.monotonic() - t0
        out.text = "".join(parts)
        client.close()
    return out


def run_httpx(url: str, stream: str) -> Outcome:
    """POST the SDK's body with httpx and read the raw bytes; text/terminal from the SSE."""
    import httpx

    out = Outcome(stream)
    t0 = time.monotonic()
    try:
        with (
            httpx.Client(timeout=TIMEOUT) as client,
            client.stream("POST", url, json=BODIES[stream]) as r,
        ):
            out.head_s = time.monotonic() - t0
            out.status = r.status_code
            for chunk in r.iter_raw():
                out.chunks.append(chunk)
                out.chunk_times.append(time.monotonic() - t0)
    except Exception as e:
        out.error, out.message = _name(e), str(e)[:200]
    out.total_s = time.monotonic() - t0
    body = b"".join(out.chunks)
    out.text = text_of(stream, body)
    if out.status == 200:
        spans = event_spans(body, "text/event-stream")
        last = terminal_index(body, spans)
        out.terminal = last is not None
    return out


def text_of(stream: str, body: bytes) -> str:
    import json

    from replayproxy._core.wire.sse import parse_events

    parts: list[str] = []
    for e in parse_events(body):
        try:
            p = json.loads(e.data)
        except ValueError:
            continue
        if not isinstance(p, dict):
            continue
        if stream == "openai-chat-text":
            for c in p.get("choices", []):
                if (c.get("delta") or {}).get("content"):
                    parts.append(c["delta"]["content"])
        elif p.get("type") == "content_block_delta":
            parts.append(p["delta"].get("text", ""))
    return "".join(parts)
