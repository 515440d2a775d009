"""Error bodies in the JSON shape each provider's SDK parses, so its exception carries our text.

replayproxy answers some requests itself with a 5xx (an unmatched request, an internal error).
A plain-text body reaches the user only if their client prints bodies; the SDKs instead parse
the provider's error shape and put its message in the exception. :func:`error_body` picks the
shape of the provider the registry (:mod:`replayproxy._core.providers`) tells from the request
path (pure; no I/O):

- OpenAI (Chat Completions, Responses, and anything unknown, the shape OpenAI-compatible
  servers and litellm use): ``{"error": {"message", "type", "param", "code"}}``;
  the ``openai`` SDK's ``APIStatusError`` message includes it, ``e.body`` is the inner object.
- Anthropic (``/v1/messages``, ``/v1/complete``, Claude on Vertex AI):
  ``{"type": "error", "error": {"type": "api_error", "message"}}``.
- Gemini (``:generateContent``, ``:streamGenerateContent``, ...):
  ``{"error": {"code", "message", "status"}}`` as in Google's ``google.rpc.Status`` JSON.
- Bedrock (``/model/ID/converse``, ``invoke``, and their streaming forms): ``{"message"}``,
  with the ``x-amzn-errortype`` header the AWS SDKs read the error code from.
"""

from __future__ import annotations

import json

from replayproxy._core.providers import ErrorShape, definition, detect

__all__ = ["ERROR_TYPE", "error_body", "error_family"]

ERROR_TYPE = "replayproxy_error"
"""The ``type``/``code`` OpenAI-shaped bodies carry, so callers can tell our errors apart."""

_GOOGLE_STATUS = {500: "INTERNAL", 501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE"}


def error_family(path: str) -> ErrorShape:
    """The error shape of the provider API a request path belongs to (OpenAI's when none)."""
    provider = detect(path.split("?", 1)[0])
    return definition(provider).error_shape if provider is not None else ErrorShape.OPENAI


def error_body(
    path: str, message: str, *, status: int = 500
) -> tuple[tuple[tuple[bytes, bytes], ...], bytes]:
    """Extra headers (content type first) and the JSON body of an error for a request to ``path``.

    ``message`` is carried whole (newlines included); ``x-should-retry: false`` tells the
    Stainless-built SDKs (openai, anthropic, in Python and Node) not to retry, so one miss stays
    one request instead of three.
    """
    family = error_family(path)
    headers: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json")]
    doc: object
    if family is ErrorShape.ANTHROPIC:
        doc = {"type": "error", "error": {"type": "api_error", "message": message}}
    elif family is ErrorShape.GEMINI:
        doc = {
            "error": {
                "code": status,
                "message": message,
                "status": _GOOGLE_STATUS.get(status, "INTERNAL"),
            }
        }
    elif family is ErrorShape.BEDROCK:
        doc = {"message": message}
        headers.append((b"x-amzn-errortype", b"InternalServerException"))
    else:
        doc = {"error": {"message": message, "type": ERROR_TYPE, "param": None, "code": ERROR_TYPE}}
    headers.append((b"x-should-retry", b"false"))
    return tuple(headers), (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
