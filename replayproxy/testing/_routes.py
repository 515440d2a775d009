"""Which canned response answers a request (pure): path routing, knobs, provider-shaped errors.

:func:`route` returns a :class:`~replayproxy.testing._streams.Stream` for every request; errors
are Streams too (``sse=False``, a JSON body, ``status`` 4xx/5xx), so the server has one path.

Routing (the ``x-sim-stream`` knob overrides it; any method/path pair not listed is a 404):

* ``POST /v1/chat/completions`` — ``openai-chat-text``; ``openai-chat-tool-call`` when the JSON
  body has ``"tools"``; ``openai-chat-json`` (one JSON body) when ``"stream"`` is not true.
* ``POST /v1/responses`` — ``openai-responses``.
* ``POST /v1/messages`` — ``anthropic-text``; ``anthropic-tool-use`` when the body has ``"tools"``.
* ``POST /v1beta/models/{model}:streamGenerateContent`` — ``gemini-text`` (the SSE framing of
  ``?alt=sse``, which is what google-genai asks for); the same under ``/v1/models/…``, the
  stable API version google-genai 3.x calls.
* ``POST /model/{modelId}/converse-stream`` — ``bedrock-converse-text`` (AWS event-stream).
* ``GET /v1/models`` — ``openai-models``.

A 404 body is shaped like the provider the path looks like (``/v1beta`` or
``/v1/models/M:verb`` → Gemini, ``/v1/messages…`` → Anthropic, ``/model/`` → Bedrock, else
OpenAI).
"""

from __future__ import annotations

import json
import re
from typing import Any

from replayproxy.testing._behavior import Behavior
from replayproxy.testing._streams import (
    ANTHROPIC_HEADERS,
    BEDROCK_HEADERS,
    GEMINI_HEADERS,
    OPENAI_HEADERS,
    STREAMS,
    Headers,
    Stream,
    error_body,
)

__all__ = ["error_stream", "route"]

_GEMINI = re.compile(r"^/v1(?:beta)?/models/[^/:]+:streamGenerateContent$")
_GEMINI_METHOD = re.compile(r"^/v1/models/[^/:]+:")  # /v1/models (no verb) is OpenAI's list
_BEDROCK = re.compile(r"^/model/[^/]+/converse-stream$")
_PROVIDER_HEADERS = {"openai": OPENAI_HEADERS, "anthropic": ANTHROPIC_HEADERS,
                     "gemini": GEMINI_HEADERS, "bedrock": BEDROCK_HEADERS}  # fmt: skip
_AWS_ERRORS = {400: "ValidationException", 403: "AccessDeniedException",
               404: "UnknownOperationException", 429: "ThrottlingException",
               503: "ServiceUnavailableException"}  # fmt: skip


def _provider_of(path: str) -> str:
    if path.startswith("/v1beta") or _GEMINI_METHOD.match(path):
        return "gemini"
    if path.startswith("/v1/messages"):
        return "anthropic"
    if path.startswith("/model/"):
        return "bedrock"
    return "openai"


def error_stream(provider: str, status: int, message: str) -> Stream:
    """A provider-shaped JSON error response as a non-SSE :class:`Stream`."""
    body = error_body(provider, status, message)
    # Keep the provider's identifying headers (request ids) but answer JSON.
    base = _PROVIDER_HEADERS.get(provider, OPENAI_HEADERS)
    headers: Headers = ((b"content-type", b"application/json"),
                        *(h for h in base if h[0] != b"content-type"))  # fmt: skip
    if status in (429, 503, 529):
        headers = (*headers, (b"retry-after", b"1"))
    if provider == "bedrock":
        headers = (
            *headers,
            (b"x-amzn-errortype", _AWS_ERRORS.get(status, "InternalServerException").encode()),
        )
    return Stream(f"error-{status}", provider, "*", "*", headers, (body,), (body,), status, False)


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body) if body else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def route(method: str, path: str, body: bytes, behavior: Behavior) -> Stream:
    """The response for ``method path`` (path without query) under ``behavior``."""
    provider = _provider_of(path)
    if behavior.stream is not None:
        chosen = STREAMS.get(behavior.stream)
        if chosen is None:
            known = ", ".join(sorted(STREAMS))
            return error_stream(
                provider, 400, f"unknown x-sim-stream {behavior.stream!r}; known: {known}"
            )
    else:
        chosen = _by_path(method, path, _json(body))
        if chosen is None:
            return error_stream(provider, 404, f"Unknown request URL: {method} {path}.")
    if behavior.status is not None and behavior.status != 200:
        message = f"simulated HTTP {behavior.status} for {chosen.name}"
        return error_stream(chosen.provider, behavior.status, message)
    return chosen


def _by_path(method: str, path: str, body: dict[str, Any]) -> Stream | None:
    if method == "POST" and path == "/v1/chat/completions":
        if body.get("stream") is not True:
            return STREAMS["openai-chat-json"]
        return STREAMS["openai-chat-tool-call" if body.get("tools") else "openai-chat-text"]
    if method == "POST" and path == "/v1/responses":
        return STREAMS["openai-responses"]
    if method == "POST" and path == "/v1/messages":
        return STREAMS["anthropic-tool-use" if body.get("tools") else "anthropic-text"]
    if method == "POST" and _GEMINI.match(path):
        return STREAMS["gemini-text"]
    if method == "POST" and _BEDROCK.match(path):
        return STREAMS["bedrock-converse-text"]
    if method == "GET" and path == "/v1/models":
        return STREAMS["openai-models"]
    return None
