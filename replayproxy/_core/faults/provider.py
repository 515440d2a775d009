"""What each provider sends when things go wrong: error events, error bodies, keepalives.

Which provider, and which shapes it has (its in-band error event, keepalive, terminal event,
error body), come from the provider registry (:mod:`replayproxy._core.providers`), on the
request alone. The bytes follow the providers' wire formats (docs/guides/faults.md):

- Anthropic: ``event: error`` + ``{"type":"error","error":{"type":"overloaded_error",...}}``,
  then the stream ends (no ``message_stop``); keepalive is ``event: ping``.
- OpenAI Chat: ``data: {"error": {...}}``, then the stream ends (no ``[DONE]``).
- OpenAI Responses: ``event: response.failed`` carrying the response with ``status: failed``.
- Gemini: ``data: {"error": {"code", "message", "status"}}`` with the stream's CRLF framing.
"""

from __future__ import annotations

import http
import json
from collections.abc import Sequence
from typing import Any, Final

from replayproxy._core import providers
from replayproxy._core.cassette.model import Header, Interaction
from replayproxy._core.json import limits
from replayproxy._core.providers import (
    DEFINITIONS,
    ErrorShape,
    Framing,
    InBandError,
    Keepalive,
    Provider,
    definition,
)
from replayproxy._core.wire.events import EventSpan

__all__ = [
    "Provider",
    "detect",
    "error_body",
    "error_event",
    "keepalive_bytes",
    "reason_phrase",
    "terminal_index",
]

# Every stream API's terminal event: the planner cuts before the last one, whatever the API
# (a WebSocket API's, Realtime's response.done, is no HTTP stream's).
_STREAMS: Final = tuple(d for d in DEFINITIONS if d.framing is not Framing.WEBSOCKET)
_TERMINAL_NAMES: Final = frozenset(name for d in _STREAMS for name in d.terminal.events)
_TERMINAL_DATA: Final = tuple(dict.fromkeys(data for d in _STREAMS for data in d.terminal.data))


def detect(interaction: Interaction) -> Provider | None:
    """The provider whose error event, error body and keepalive the faults build for an
    interaction, from the registry on the request alone (so a JSON response still gets its
    provider's error shapes).

    ``None`` when the API is not recognised, and also when its definition has no in-band error
    event (Bedrock's event-stream, the WebSocket APIs): the planner refuses ``error`` for
    ``None``, and ``status`` and ``keepalive`` then build the default shapes, which is what
    those APIs got before the registry (an OpenAI-shaped status body, a comment keepalive).
    """
    req = interaction.request
    found = providers.detect(req, websocket=interaction.websocket is not None)
    if found is None or definition(found).in_band_error is None:
        return None
    return found


def terminal_index(body: bytes, spans: Sequence[EventSpan]) -> int | None:
    """Index of the stream's terminal event (``[DONE]``, ``message_stop``, ``response.completed``
    and its failed/incomplete siblings, Gemini's ``finishReason`` chunk), or ``None``."""
    for span in reversed(spans):
        if span.name in _TERMINAL_NAMES:
            return span.index
        raw = body[span.start : span.end]
        if span.name == "message" and any(data in raw for data in _TERMINAL_DATA):
            return span.index
    return None


def _line_end(body: bytes) -> bytes:
    return b"\r\n" if b"\r\n\r\n" in body[:4096] else b"\n"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _last_json(body: bytes, spans: Sequence[EventSpan], name: str) -> dict[str, Any] | None:
    for span in spans:
        if span.name != name:
            continue
        for line in body[span.start : span.end].splitlines():
            if line.startswith(b"data:"):
                try:
                    value = limits.loads(line[5:])
                except ValueError:
                    return None
                return value if isinstance(value, dict) else None
    return None


def error_event(
    provider: Provider,
    body: bytes,
    spans: Sequence[EventSpan],
    upto: int,
    etype: str | None,
    message: str | None,
) -> bytes:
    """The in-band error event ``provider`` sends mid-stream, framed like ``body``'s events.

    ``upto`` is the number of events already sent (for OpenAI Responses' ``sequence_number``).
    """
    kind = definition(provider).in_band_error
    eol = _line_end(body)
    if kind is InBandError.ANTHROPIC_EVENT:
        err = {"type": etype or "overloaded_error", "message": message or "Overloaded"}
        payload = _dumps({"type": "error", "error": err})
        return b"event: error" + eol + b"data: " + payload + eol + eol
    if kind is InBandError.OPENAI_CHAT_CHUNK:
        oerr: dict[str, Any] = {
            "message": message or "The server had an error while processing your request.",
            "type": etype or "server_error",
            "param": None,
            "code": None,
        }
        return b"data: " + _dumps({"error": oerr}) + eol + eol
    if kind is InBandError.RESPONSE_FAILED:
        created = _last_json(body, spans, "response.created") or {}
        response: dict[str, Any] = dict(created.get("response") or {})
        response.update(
            status="failed",
            error={"code": etype or "server_error", "message": message or "Internal error."},
        )
        response.setdefault("object", "response")
        response.setdefault("output", [])
        event = {"type": "response.failed", "sequence_number": upto, "response": response}
        return b"event: response.failed" + eol + b"data: " + _dumps(event) + eol + eol
    if kind is InBandError.GEMINI_CHUNK:
        gerr: dict[str, Any] = {
            "code": 503,
            "message": message or "The model is overloaded. Please try again later.",
            "status": etype or "UNAVAILABLE",
        }
        return b"data: " + _dumps({"error": gerr}) + eol + eol
    raise ValueError(f"no in-band error format for {provider}")


def error_body(provider: Provider | None, status: int, message: str | None) -> bytes:
    """The JSON body ``provider`` sends with HTTP ``status`` (OpenAI's shape when unknown, and
    for Bedrock, whose ``{"message"}`` body is read with a header this fault does not set)."""
    text = message or reason_phrase(status) or "error"
    shape = definition(provider).error_shape if provider is not None else ErrorShape.OPENAI
    if shape is ErrorShape.ANTHROPIC:
        kinds = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
            529: "overloaded_error",
        }
        default = "Overloaded" if status == 529 else text
        err = {"type": kinds.get(status, "api_error"), "message": message or default}
        return _dumps({"type": "error", "error": err})
    if shape is ErrorShape.GEMINI:
        statuses = {
            400: "INVALID_ARGUMENT",
            401: "UNAUTHENTICATED",
            403: "PERMISSION_DENIED",
            404: "NOT_FOUND",
            429: "RESOURCE_EXHAUSTED",
            503: "UNAVAILABLE",
            504: "DEADLINE_EXCEEDED",
        }
        return _dumps(
            {"error": {"code": status, "message": text, "status": statuses.get(status, "INTERNAL")}}
        )
    etype = "invalid_request_error" if status < 500 else "server_error"
    code: str | None = None
    if status == 429:
        etype, code = "requests", "rate_limit_exceeded"
    return _dumps({"error": {"message": text, "type": etype, "param": None, "code": code}})


def reason_phrase(status: int) -> str:
    if status == 529:
        return "Site Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def keepalive_bytes(provider: Provider | None, kind: str, text: str, body: bytes) -> bytes:
    """One keepalive: the ``ping`` event of a provider that sends one (Anthropic), or an SSE
    comment (OpenRouter style)."""
    eol = _line_end(body)
    ping = provider is not None and definition(provider).keepalive is Keepalive.PING_EVENT
    if kind == "ping" or (kind == "auto" and ping):
        return b"event: ping" + eol + b'data: {"type": "ping"}' + eol + eol
    return b": " + text.encode() + eol + eol


def error_headers(original: Sequence[Header], retry_after: float | None) -> tuple[Header, ...]:
    """The original headers minus the body-specific ones, as JSON, with ``retry-after``."""
    drop = {b"content-type", b"content-length", b"transfer-encoding", b"content-encoding"}
    headers = [(k, v) for k, v in original if k.lower() not in drop]
    headers.insert(0, (b"content-type", b"application/json"))
    if retry_after is not None:
        value = f"{retry_after:g}" if retry_after != int(retry_after) else str(int(retry_after))
        headers.append((b"retry-after", value.encode()))
    return tuple(headers)
