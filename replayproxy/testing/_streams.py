"""Realistic provider wire streams built from real payloads (pure: no I/O besides package data).

Each entry of :data:`STREAMS` is a :class:`Stream`: the HTTP status, the response headers the
provider sends, and the body as a tuple of *events*, one byte string per server write, framed
exactly as that provider frames them (docs/reference/rules.md, has each provider's format):

* ``openai-chat-text`` — ``POST /v1/chat/completions``;
  ``data: {json}\n\n`` per payload, then ``data: [DONE]\n\n``.
* ``openai-chat-tool-call`` — the same with ``"tools"`` in the body (xAI, OpenAI-compatible).
* ``openai-responses`` — ``POST /v1/responses``; ``event: {type}\ndata: {json}\n\n``, no [DONE].
* ``anthropic-text`` — ``POST /v1/messages``; ``event: {type}\ndata: {json}\n\n``.
* ``anthropic-tool-use`` — the same with ``"tools"`` in the body.
* ``gemini-text`` — ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``;
  ``data: {json}\r\n\r\n``, no [DONE].
* ``bedrock-converse-text`` — ``POST /model/{modelId}/converse-stream``; binary AWS event-stream
  (``application/vnd.amazon.eventstream``), one message per payload, ``:event-type`` = the
  payload's single key, message payload = the bytes of that key's value as captured.
* ``openai-chat-json`` — ``POST /v1/chat/completions`` without ``"stream": true``: one JSON body.
* ``openai-models`` — ``GET /v1/models``: one JSON body (not SSE).

The JSON payload bytes are the lines of ``replayproxy/testing/payloads/*.jsonl`` as given
(never re-serialized), so the bytes match what the provider sent. :func:`expected_text` gives
the text (or tool-call arguments) a client should reassemble from a stream, for assertions.
Header values (request ids, organisation ids) are realistic but fixed, so runs are repeatable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from replayproxy._core.wire import eventstream

__all__ = [
    "STREAMS",
    "Stream",
    "error_body",
    "expected_text",
    "frame",
    "load_payloads",
]

Headers = tuple[tuple[bytes, bytes], ...]


@dataclass(frozen=True)
class Stream:
    """One canned response: status, provider headers, and the body as per-write events."""

    name: str
    provider: str  # "openai" | "anthropic" | "gemini" | "bedrock"
    method: str
    path: str  # path template the simulator routes to this stream ("{model}" is a wildcard)
    headers: Headers  # without framing headers (the simulator adds transfer-encoding/date)
    events: tuple[bytes, ...]  # one element per write; SSE events, or the whole JSON body
    payloads: tuple[bytes, ...]  # the raw JSON payload of each event (no framing)
    status: int = 200
    sse: bool = True

    @property
    def chunked(self) -> bool:
        """Sent with chunked transfer-encoding, one chunk per event (else content-length)."""
        return self.sse or len(self.events) > 1

    @property
    def body(self) -> bytes:
        """The whole body, as a client reassembles it."""
        return b"".join(self.events)


def load_payloads(filename: str) -> tuple[bytes, ...]:
    """Return the non-empty lines of a packaged ``payloads/*.jsonl`` file, bytes as stored."""
    raw = resources.files("replayproxy.testing").joinpath("payloads", filename).read_bytes()
    return tuple(line for line in raw.splitlines() if line.strip())


def _data_lf(payloads: tuple[bytes, ...], done: bool) -> tuple[bytes, ...]:
    events = [b"data: " + p + b"\n\n" for p in payloads]
    if done:
        events.append(b"data: [DONE]\n\n")
    return tuple(events)


def _named(payloads: tuple[bytes, ...]) -> tuple[bytes, ...]:
    # The event name is the payload's "type", which both OpenAI Responses and Anthropic repeat.
    out = []
    for p in payloads:
        name = json.loads(p)["type"].encode()
        out.append(b"event: " + name + b"\ndata: " + p + b"\n\n")
    return tuple(out)


def _bedrock(payloads: tuple[bytes, ...]) -> tuple[bytes, ...]:
    # Each captured line is {"<eventType>": <value>}: the wire message carries <value> as its
    # payload, sliced out of the line so the bytes stay exactly as captured.
    out = []
    for p in payloads:
        (key,) = json.loads(p)
        prefix = b'{"' + key.encode() + b'":'
        if not (p.startswith(prefix) and p.endswith(b"}")):
            raise ValueError(f"unexpected Bedrock payload line: {p[:60]!r}")
        out.append(eventstream.encode_event(key, p[len(prefix) : -1]))
    return tuple(out)


def _data_crlf(payloads: tuple[bytes, ...]) -> tuple[bytes, ...]:
    return tuple(b"data: " + p + b"\r\n\r\n" for p in payloads)


_SSE = b"text/event-stream; charset=utf-8"

OPENAI_HEADERS: Headers = (
    (b"content-type", _SSE),
    (b"access-control-expose-headers", b"X-Request-ID"),
    (b"openai-organization", b"user-simulator0000000000000"),
    (b"openai-processing-ms", b"182"),
    (b"openai-project", b"proj_Simulator000000000000"),
    (b"openai-version", b"2020-10-01"),
    (b"x-ratelimit-limit-requests", b"30000"),
    (b"x-ratelimit-remaining-requests", b"29999"),
    (b"x-request-id", b"req_5f1c2a9d0b8e4e7f9a3c6d2b1e0f4a8c"),
    (b"strict-transport-security", b"max-age=31536000; includeSubDomains; preload"),
    (b"cf-cache-status", b"DYNAMIC"),
    (b"x-content-type-options", b"nosniff"),
    (b"server", b"cloudflare"),
    (b"cf-ray", b"8f0c1d2e3a4b5c6d-AMS"),
    (b"alt-svc", b'h3=":443"; ma=86400'),
)

ANTHROPIC_HEADERS: Headers = (
    (b"content-type", _SSE),
    (b"cache-control", b"no-cache"),
    (b"anthropic-ratelimit-requests-limit", b"4000"),
    (b"anthropic-ratelimit-requests-remaining", b"3999"),
    (b"anthropic-ratelimit-requests-reset", b"2026-11-30T05:00:01Z"),
    (b"request-id", b"req_011CSim8qVb3kR4nT6yW2xZ"),
    (b"anthropic-request-id", b"req_011CSim8qVb3kR4nT6yW2xZ"),
    (b"anthropic-organization-id", b"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"),
    (b"via", b"1.1 google"),
    (b"cf-cache-status", b"DYNAMIC"),
    (b"x-robots-tag", b"none"),
    (b"server", b"cloudflare"),
    (b"cf-ray", b"8f0c1d2e3a4b5c6e-AMS"),
)

GEMINI_HEADERS: Headers = (
    (b"content-type", b"text/event-stream"),
    (b"content-disposition", b"attachment"),
    (b"vary", b"Origin"),
    (b"vary", b"X-Origin"),
    (b"vary", b"Referer"),
    (b"x-xss-protection", b"0"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"x-content-type-options", b"nosniff"),
    (b"server-timing", b"gfet4t7; dur=612"),
    (b"server", b"scaffolding on HTTPServer2"),
    (b"alt-svc", b'h3=":443"; ma=2592000,h3-29=":443"; ma=2592000'),
)

BEDROCK_HEADERS: Headers = (
    (b"content-type", b"application/vnd.amazon.eventstream"),
    (b"x-amzn-requestid", b"5d6e7f80-91a2-4b3c-8d4e-5f60718293a4"),
)

_MODELS_BODY = (
    b'{"object":"list","data":['
    b'{"id":"gpt-4.1-nano-2025-04-14","object":"model","created":1744321025,"owned_by":"system"},'
    b'{"id":"gpt-4.1-nano","object":"model","created":1744321707,"owned_by":"system"},'
    b'{"id":"gpt-5-mini-2025-08-07","object":"model","created":1754425867,"owned_by":"system"}'
    b"]}"
)


def _chat_json(chunks: tuple[bytes, ...]) -> bytes:
    """The non-streaming ``chat.completion`` answer carrying the same text as ``chunks``."""
    first = json.loads(chunks[0])
    text = "".join(
        c["delta"].get("content") or "" for p in chunks for c in json.loads(p)["choices"]
    )
    usage = next(json.loads(p)["usage"] for p in reversed(chunks) if json.loads(p).get("usage"))
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        "refusal": None,
        "annotations": [],
    }
    body = {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": usage,
        "service_tier": first.get("service_tier"),
        "system_fingerprint": first.get("system_fingerprint"),
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def _json_headers(base: Headers) -> Headers:
    return ((b"content-type", b"application/json"), *(h for h in base if h[0] != b"content-type"))


# How each stream's payloads are framed on the wire, by stream name.
_FRAMERS = {
    "openai-chat-text": lambda p: _data_lf(p, True),
    "openai-chat-tool-call": lambda p: _data_lf(p, True),
    "openai-responses": _named,
    "anthropic-text": _named,
    "anthropic-tool-use": _named,
    "gemini-text": _data_crlf,
    "bedrock-converse-text": _bedrock,
}


def frame(name: str, payloads: Sequence[bytes]) -> tuple[bytes, ...]:
    """Frame ``payloads`` the way the provider of stream ``name`` does: one item per event.

    For building variants of a real stream (tests that edit a payload and re-frame it).
    """
    return _FRAMERS[name](tuple(payloads))


@cache
def _build() -> dict[str, Stream]:
    chat = load_payloads("openai-chat-text.jsonl")
    tool = load_payloads("openai-compatible-chat-tool-call.jsonl")
    resp = load_payloads("openai-responses-web-search.jsonl")
    atext = load_payloads("anthropic-messages-text.jsonl")
    atool = load_payloads("anthropic-messages-tool-use.jsonl")
    gem = load_payloads("gemini-text.jsonl")
    bed = load_payloads("bedrock-converse-text.jsonl")
    chat_path = "/v1/chat/completions"
    gemini_path = "/v1beta/models/{model}:streamGenerateContent"
    streams = [
        Stream("openai-chat-text", "openai", "POST", chat_path, OPENAI_HEADERS,
               frame("openai-chat-text", chat), chat),
        Stream("openai-chat-tool-call", "openai", "POST", chat_path, OPENAI_HEADERS,
               frame("openai-chat-tool-call", tool), tool),
        Stream("openai-responses", "openai", "POST", "/v1/responses", OPENAI_HEADERS,
               frame("openai-responses", resp), resp),
        Stream("anthropic-text", "anthropic", "POST", "/v1/messages", ANTHROPIC_HEADERS,
               frame("anthropic-text", atext), atext),
        Stream("anthropic-tool-use", "anthropic", "POST", "/v1/messages", ANTHROPIC_HEADERS,
               frame("anthropic-tool-use", atool), atool),
        Stream("gemini-text", "gemini", "POST", gemini_path, GEMINI_HEADERS,
               frame("gemini-text", gem), gem),
        Stream("bedrock-converse-text", "bedrock", "POST", "/model/{model}/converse-stream",
               BEDROCK_HEADERS, frame("bedrock-converse-text", bed), bed, sse=False),
        Stream("openai-chat-json", "openai", "POST", chat_path, _json_headers(OPENAI_HEADERS),
               (_chat_json(chat),), (_chat_json(chat),), sse=False),
        Stream("openai-models", "openai", "GET", "/v1/models", _json_headers(OPENAI_HEADERS),
               (_MODELS_BODY,), (_MODELS_BODY,), sse=False),
    ]  # fmt: skip
    return {s.name: s for s in streams}


STREAMS: Mapping[str, Stream] = _build()


def expected_text(stream: Stream) -> str:
    """The text a client reassembles from ``stream`` (tool streams: the tool-call arguments).

    OpenAI chat: ``choices[0].delta.content`` (or ``tool_calls[*].function.arguments``);
    Responses: ``response.output_text.delta``; Anthropic: ``text_delta.text`` (or
    ``input_json_delta.partial_json``); Gemini: ``candidates[0].content.parts[*].text``.
    """
    out: list[str] = []
    for raw in stream.payloads:
        p: Any = json.loads(raw)
        if stream.provider == "bedrock":
            text = p.get("contentBlockDelta", {}).get("delta", {}).get("text")
            out.append(text or "")
        elif not stream.sse:
            if stream.name == "openai-chat-json":
                out.append(p["choices"][0]["message"]["content"])
        elif stream.name.startswith("openai-chat"):
            for choice in p.get("choices", []):
                delta = choice.get("delta", {})
                if delta.get("content"):
                    out.append(delta["content"])
                for call in delta.get("tool_calls") or []:
                    out.append(call.get("function", {}).get("arguments") or "")
        elif stream.name == "openai-responses":
            if p["type"] == "response.output_text.delta":
                out.append(p["delta"])
        elif stream.provider == "anthropic":
            if p["type"] == "content_block_delta":
                d = p["delta"]
                out.append(d.get("text") or d.get("partial_json") or "")
        elif stream.provider == "gemini":
            for cand in p.get("candidates", []):
                out.extend(part.get("text", "") for part in cand["content"].get("parts", []))
    return "".join(out)


def error_body(provider: str, status: int, message: str) -> bytes:
    """A provider-shaped JSON error body (compact), as the provider sends on HTTP errors."""
    err: dict[str, Any]
    if provider == "anthropic":
        kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                 429: "rate_limit_error", 529: "overloaded_error"}  # fmt: skip
        err = {"type": "error", "error": {"type": kinds.get(status, "api_error"),
                                          "message": message}}  # fmt: skip
    elif provider == "gemini":
        statuses = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
                    429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}  # fmt: skip
        err = {"error": {"code": status, "message": message,
                         "status": statuses.get(status, "INTERNAL")}}  # fmt: skip
    elif provider == "bedrock":
        err = {"message": message}
    else:
        code = "unknown_url" if status == 404 else None
        etype = "invalid_request_error" if status < 500 else "server_error"
        if status == 429:
            etype, code = "requests", "rate_limit_exceeded"
        err = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return json.dumps(err, separators=(",", ":")).encode()
