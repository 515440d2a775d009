"""One :class:`~.model.ProviderDef` per provider API: the registry's data.

The order of :data:`DEFINITIONS` is the order detection tries them (the first whose path or
header rule fits wins; host rules come after every path and header rule), so the more specific
come first: Bedrock InvokeModel for non-Anthropic models before InvokeModel, Claude on Vertex
(an Anthropic path under ``/models/``) before Gemini. Wire facts are from
``docs/guides/checker.md`` and the providers' API references.
"""

from __future__ import annotations

from typing import Final

from replayproxy._core.providers.model import (
    ErrorShape,
    Framing,
    InBandError,
    Keepalive,
    PathRule,
    Provider,
    ProviderDef,
    Terminal,
    WebSocketProtocol,
)

__all__ = ["DEFINITIONS"]

# Bedrock model ids name their vendor: "amazon.nova-lite-v1:0", "us.meta.llama3-...",
# "arn:...:foundation-model/mistral.mistral-large-...". These vendors' InvokeModel chunks carry
# the model's own JSON, not Anthropic's events.
_NATIVE_VENDORS: Final = frozenset(
    {
        "ai21",
        "amazon",
        "cohere",
        "deepseek",
        "google",
        "luma",
        "meta",
        "minimax",
        "mistral",
        "moonshot",
        "moonshotai",
        "nvidia",
        "openai",
        "qwen",
        "stability",
        "twelvelabs",
        "writer",
    }
)

_CONVERSE_PATHS: Final = (PathRule(suffix="/converse-stream"), PathRule("/converse", "/model/"))
_INVOKE_PATHS: Final = (
    PathRule(suffix="/invoke-with-response-stream"),
    PathRule("/invoke", "/model/"),
)
_BEDROCK_TERMINAL: Final = Terminal(
    "ConverseStream: messageStop, then metadata; an exception message ends the stream",
    events=("messageStop",),
)
_INVOKE_TERMINAL: Final = Terminal(
    "the chunk holding Anthropic's message_stop; an exception message ends the stream"
)

# Bedrock pads every event with a random "p" field (against traffic analysis); latencies are
# timing. InvokeModel chunks are read as their decoded "bytes" (tools/meaning.py).
_CONVERSE_VOLATILE: Final = ("/p", "/metrics/latencyMs", "/start/toolUse/toolUseId")
_INVOKE_VOLATILE: Final = (
    "/p",
    "/bytes/amazon-bedrock-invocationMetrics/invocationLatency",
    "/bytes/amazon-bedrock-invocationMetrics/firstByteLatency",
)

DEFINITIONS: Final[tuple[ProviderDef, ...]] = (
    ProviderDef(
        Provider.BEDROCK_CONVERSE,
        "Amazon Bedrock ConverseStream",
        aliases=("bedrock", "converse"),
        framing=Framing.EVENTSTREAM,
        paths=_CONVERSE_PATHS,
        grammar="bedrock",
        error_shape=ErrorShape.BEDROCK,
        in_band_error=None,
        terminal=_BEDROCK_TERMINAL,
        keepalive=Keepalive.NONE,
        dialect="Bedrock (ConverseStream)",
        volatile=_CONVERSE_VOLATILE,
    ),
    ProviderDef(
        Provider.BEDROCK_INVOKE_NATIVE,
        "Amazon Bedrock InvokeModelWithResponseStream, a non-Anthropic model (each chunk "
        "holds the model's own JSON)",
        aliases=(),
        framing=Framing.EVENTSTREAM,
        paths=_INVOKE_PATHS,
        grammar="bedrock",
        error_shape=ErrorShape.BEDROCK,
        in_band_error=None,
        terminal=Terminal(
            "the model family's final chunk (Nova messageStop, Titan completionReason, Llama "
            "and Mistral stop_reason, Cohere is_finished); an exception message ends the stream"
        ),
        keepalive=Keepalive.NONE,
        dialect="Bedrock (InvokeModelWithResponseStream)",
        model_vendors=_NATIVE_VENDORS,
        volatile=(*_INVOKE_VOLATILE, "/bytes/id"),
    ),
    ProviderDef(
        Provider.BEDROCK_INVOKE,
        "Amazon Bedrock InvokeModelWithResponseStream of Claude (Anthropic events in "
        '{"bytes": base64} chunks)',
        aliases=(),
        framing=Framing.EVENTSTREAM,
        paths=_INVOKE_PATHS,
        grammar="bedrock",
        error_shape=ErrorShape.BEDROCK,
        in_band_error=None,
        terminal=_INVOKE_TERMINAL,
        keepalive=Keepalive.NONE,
        dialect="Anthropic on Bedrock (InvokeModelWithResponseStream)",
        volatile=(*_INVOKE_VOLATILE, "/bytes/message/id", "/bytes/content_block/id"),
    ),
    ProviderDef(
        Provider.OPENAI_CHAT,
        "OpenAI Chat Completions (and OpenAI-compatible servers)",
        aliases=("openai", "chat"),
        framing=Framing.SSE,
        paths=(PathRule(suffix="/chat/completions"),),
        grammar="openai.chat",
        error_shape=ErrorShape.OPENAI,
        in_band_error=InBandError.OPENAI_CHAT_CHUNK,
        terminal=Terminal("data: [DONE]", data=(b"data: [DONE]", b"data:[DONE]")),
        keepalive=Keepalive.SSE_COMMENT,
        dialect="OpenAI-compatible",
        equivalences=(
            "text-part",
            "tool-choice-auto",
            "stream-options-usage",
            "documented-defaults",
        ),
        volatile=(
            "/id",
            "/created",
            "/system_fingerprint",
            "/obfuscation",
            "/choices/*/delta/tool_calls/*/id",
        ),
    ),
    ProviderDef(
        Provider.OPENAI_RESPONSES,
        "OpenAI Responses (also resumed: GET /v1/responses/{id}?stream=true)",
        aliases=("responses",),
        framing=Framing.SSE,
        paths=(PathRule(suffix="/responses"), PathRule(contains="/responses/resp_")),
        grammar="openai.responses",
        error_shape=ErrorShape.OPENAI,
        in_band_error=InBandError.RESPONSE_FAILED,
        terminal=Terminal(
            "response.completed, .failed or .incomplete",
            events=("response.completed", "response.incomplete", "response.failed"),
        ),
        keepalive=Keepalive.SSE_COMMENT,
        dialect="OpenAI-compatible",
        equivalences=("input-text", "tool-choice-auto"),
        volatile=(
            "/response/id",
            "/response/created_at",
            "/response/completed_at",
            "/response/output/*/id",
            "/item/id",
            "/item_id",
            "/obfuscation",
        ),
    ),
    ProviderDef(
        Provider.ANTHROPIC,
        "Anthropic Messages (also Claude on Vertex AI, and the legacy /v1/complete)",
        aliases=("claude",),
        framing=Framing.SSE,
        paths=(
            PathRule(suffix="/messages"),
            PathRule(suffix="/messages/count_tokens"),
            PathRule(suffix="/complete"),  # the legacy Text Completions: its own grammar
            # Claude on Vertex AI: .../publishers/anthropic/models/M:streamRawPredict
            PathRule(contains="/publishers/anthropic/", segment=":"),
        ),
        grammar="anthropic",
        error_shape=ErrorShape.ANTHROPIC,
        in_band_error=InBandError.ANTHROPIC_EVENT,
        terminal=Terminal("message_stop", events=("message_stop",)),
        keepalive=Keepalive.PING_EVENT,
        dialect="Anthropic",
        equivalences=("text-block", "tool-choice-auto"),
        headers=("anthropic-version",),
        hosts=("anthropic",),
        volatile=("/message/id", "/content_block/id"),
    ),
    ProviderDef(
        Provider.GEMINI,
        "Google Gemini streamGenerateContent?alt=sse (Gemini API and Vertex AI)",
        aliases=("google",),
        framing=Framing.SSE,
        paths=(
            PathRule(contains=":streamGenerateContent"),
            # models/NAME:generateContent, :countTokens ...; on Vertex AI only Google's own
            # models (another publisher's rawPredict speaks that vendor's format)
            PathRule(contains="/publishers/google/models/", segment=":"),
            PathRule(contains="/models/", segment=":", excludes="/publishers/"),
        ),
        grammar="gemini",
        error_shape=ErrorShape.GEMINI,
        in_band_error=InBandError.GEMINI_CHUNK,
        terminal=Terminal("the chunk carrying finishReason", data=(b'"finishReason"',)),
        keepalive=Keepalive.SSE_COMMENT,
        dialect="Gemini",
        volatile=("/responseId", "/createTime"),
    ),
    ProviderDef(
        Provider.OLLAMA,
        "Ollama's native API (/api/chat, /api/generate: NDJSON lines, done: true last)",
        aliases=("ollama-native",),
        framing=Framing.NDJSON,
        paths=(PathRule(suffix="/api/chat"), PathRule(suffix="/api/generate")),
        grammar="ollama",
        error_shape=ErrorShape.OPENAI,  # {"error": "..."}: the nearest shape we build
        in_band_error=None,
        terminal=Terminal("the line with done: true (and done_reason)", data=(b'"done":true',)),
        keepalive=Keepalive.NONE,
        dialect="Ollama",
        volatile=(
            "/created_at",
            "/total_duration",
            "/load_duration",
            "/prompt_eval_duration",
            "/eval_duration",
        ),
    ),
    ProviderDef(
        Provider.COHERE_V2,
        "Cohere v2 Chat (/v2/chat: message-start ... message-end)",
        aliases=("cohere",),
        framing=Framing.SSE,
        paths=(PathRule(suffix="/v2/chat"),),
        grammar="cohere",
        error_shape=ErrorShape.OPENAI,  # {"message": ...}: the nearest shape we build
        in_band_error=None,
        terminal=Terminal("message-end", events=("message-end",)),
        keepalive=Keepalive.SSE_COMMENT,
        dialect="Cohere",
        volatile=("/id",),
    ),
    ProviderDef(
        Provider.OPENAI_REALTIME,
        "OpenAI Realtime (WebSocket)",
        aliases=(),
        framing=Framing.WEBSOCKET,
        paths=(PathRule(suffix="/realtime"),),
        grammar="realtime",
        error_shape=ErrorShape.OPENAI,
        in_band_error=None,
        terminal=Terminal("response.done ends each response", events=("response.done",)),
        keepalive=Keepalive.NONE,
        dialect="OpenAI Realtime",
        websocket=WebSocketProtocol("session.created", "response.done"),
        volatile=(
            "/event_id",
            "/session/id",
            "/session/expires_at",
            "/response/id",
            "/response_id",
            "/response/output/*/id",
            "/item/id",
            "/item_id",
            "/previous_item_id",
            "/conversation/id",
        ),
    ),
    ProviderDef(
        Provider.GEMINI_LIVE,
        "Gemini Live (BidiGenerateContent WebSocket)",
        aliases=(),
        framing=Framing.WEBSOCKET,
        paths=(PathRule(contains="BidiGenerateContent"),),
        grammar="gemini.live",
        error_shape=ErrorShape.GEMINI,
        in_band_error=None,
        terminal=Terminal("serverContent.turnComplete ends each turn"),
        keepalive=Keepalive.NONE,
        dialect="Gemini Live",
        websocket=WebSocketProtocol("setupComplete", "turnComplete"),
        volatile=("/sessionResumptionUpdate/newHandle",),
    ),
    ProviderDef(
        Provider.SSE,
        "any other text/event-stream: the generic SSE rules only",
        aliases=(),
        framing=Framing.SSE,
        paths=(),  # never told from a request: the fallback for an unknown SSE response
        grammar="sse",
        error_shape=ErrorShape.OPENAI,  # the shape OpenAI-compatible servers and litellm use
        in_band_error=None,
        terminal=Terminal("none: the generic rules accept [DONE] as a sentinel"),
        keepalive=Keepalive.SSE_COMMENT,
        dialect="generic SSE",
        volatile=("/id", "/created"),
    ),
)
