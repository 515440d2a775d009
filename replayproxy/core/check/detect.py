"""Which grammar applies to a response: from an explicit name, else from the request URL,
request headers and response Content-Type.

Provider names: ``openai-chat``, ``openai-responses``, ``anthropic``, ``gemini``,
``bedrock-converse``, ``bedrock-invoke``, and ``sse`` (generic SSE rules only). Aliases:
``openai`` -> ``openai-chat``, ``bedrock`` -> ``bedrock-converse``, ``claude`` -> ``anthropic``,
``google`` -> ``gemini``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from replayproxy.errors import UsageError

__all__ = ["PROVIDERS", "detect", "normalize"]

PROVIDERS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "bedrock-converse",
    "bedrock-invoke",
    "sse",
)
_ALIASES = {
    "openai": "openai-chat",
    "chat": "openai-chat",
    "responses": "openai-responses",
    "claude": "anthropic",
    "google": "gemini",
    "bedrock": "bedrock-converse",
    "converse": "bedrock-converse",
}
EVENTSTREAM = "application/vnd.amazon.eventstream"


def normalize(name: str) -> str:
    """The canonical provider name for ``name``; raises UsageError (one line) if unknown."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PROVIDERS:
        raise UsageError(f"unknown provider {name!r}; choose one of: {', '.join(PROVIDERS)}")
    return key


def _media(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def detect(
    url: str | None = None,
    *,
    content_type: str | None = None,
    request_headers: dict[str, str] | None = None,
) -> str | None:
    """The provider for this response, or ``None`` when it is not a stream we can check."""
    try:
        path = urlsplit(url or "").path.rstrip("/")
    except ValueError:  # a malformed URL (bad IPv6 literal): detect from the rest
        path = ""
    media = _media(content_type)
    headers = {k.lower(): v for k, v in (request_headers or {}).items()}
    if media == EVENTSTREAM or path.endswith(("/converse-stream", "/invoke-with-response-stream")):
        return (
            "bedrock-invoke"
            if path.endswith("/invoke-with-response-stream")
            else "bedrock-converse"
        )
    if media and media != "text/event-stream":
        return None  # JSON, a Gemini JSON array, an error page: not an event stream
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages") or "anthropic-version" in headers:
        return "anthropic"
    if "/publishers/anthropic/" in path and path.endswith(":streamRawPredict"):
        return "anthropic"  # Claude on Vertex AI
    if ":streamGenerateContent" in path:
        return "gemini"
    return "sse" if media == "text/event-stream" else None
