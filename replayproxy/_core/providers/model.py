"""The provider registry's types: the :class:`Provider` enum and the frozen
:class:`ProviderDef` that says everything replayproxy knows about one provider API.

A definition is data only (no behaviour), so the checker, the faults, the error bodies, the
request equivalences and the dialect naming can all read one answer; the values live in
:mod:`.definitions`, detection in :mod:`.detection`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "ErrorShape",
    "Framing",
    "InBandError",
    "Keepalive",
    "PathRule",
    "Provider",
    "ProviderDef",
    "Terminal",
    "WebSocketProtocol",
]


class Provider(enum.StrEnum):
    """A provider API with its own stream grammar. The values are the names users type
    (``check --provider``) and the names reports print."""

    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    BEDROCK_CONVERSE = "bedrock-converse"
    BEDROCK_INVOKE = "bedrock-invoke"
    BEDROCK_INVOKE_NATIVE = "bedrock-invoke-native"
    OLLAMA = "ollama"
    COHERE_V2 = "cohere-v2"
    SSE = "sse"
    OPENAI_REALTIME = "openai-realtime"
    GEMINI_LIVE = "gemini-live"


class Framing(enum.StrEnum):
    """How the response carries its events; the values are the stream's content type."""

    SSE = "text/event-stream"
    EVENTSTREAM = "application/vnd.amazon.eventstream"
    NDJSON = "application/x-ndjson"
    WEBSOCKET = "websocket"  # messages of an upgraded connection: no body content type


class ErrorShape(enum.StrEnum):
    """The JSON shape of the provider's HTTP error bodies, the one its SDK parses."""

    OPENAI = "openai"  # {"error": {"message", "type", "param", "code"}}
    ANTHROPIC = "anthropic"  # {"type": "error", "error": {"type", "message"}}
    GEMINI = "gemini"  # {"error": {"code", "message", "status"}} (google.rpc.Status)
    BEDROCK = "bedrock"  # {"message"} with the x-amzn-errortype header


class InBandError(enum.Enum):
    """The error event the provider sends mid-stream (see docs/guides/faults.md, ``error``)."""

    ANTHROPIC_EVENT = "event: error + {type: error, error: {type, message}}"
    OPENAI_CHAT_CHUNK = 'data: {"error": {...}}, no [DONE]'
    RESPONSE_FAILED = "event: response.failed with status failed"
    GEMINI_CHUNK = 'data: {"error": {code, message, status}}'


class Keepalive(enum.Enum):
    """What the provider sends on an idle stream."""

    PING_EVENT = "event: ping"
    SSE_COMMENT = ": comment line"
    NONE = "nothing (a binary or WebSocket stream)"


@dataclass(frozen=True, slots=True)
class PathRule:
    """A request path belongs to the API when every given part holds (empty: not checked).

    Paths are compared without the query and trailing slashes, so proxies' prefixes work
    with ``suffix`` and ``contains``; ``segment`` must be in the last path segment (Google's
    ``models/NAME:method``); ``excludes`` must not be in the path.
    """

    suffix: str = ""
    prefix: str = ""
    contains: str = ""
    segment: str = ""
    excludes: str = ""

    def matches(self, path: str) -> bool:
        last = path.rsplit("/", 1)[-1]
        return (
            path.endswith(self.suffix)
            and path.startswith(self.prefix)
            and self.contains in path
            and self.segment in last
            and not (self.excludes and self.excludes in path)
        )


@dataclass(frozen=True, slots=True)
class Terminal:
    """The stream's terminal event: SSE ``event:`` names, or bytes of its data that mark it."""

    summary: str
    events: tuple[str, ...] = ()
    data: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class WebSocketProtocol:
    """A WebSocket API: the first server message and the one that ends a turn."""

    first_server_message: str
    turn_end: str


@dataclass(frozen=True, slots=True)
class ProviderDef:
    """Everything replayproxy knows about one provider API, in one place."""

    provider: Provider
    title: str
    """What it is, for docs and messages (``"OpenAI Chat Completions"``)."""
    aliases: tuple[str, ...]
    """Other names users type for it (``openai`` for ``openai-chat``)."""
    framing: Framing
    paths: tuple[PathRule, ...]
    """Request paths of the API (streaming and not: error bodies need both)."""
    grammar: str
    """The checker's rule set: the prefix of its rule ids (``"openai.chat"``)."""
    error_shape: ErrorShape
    in_band_error: InBandError | None
    """The mid-stream error event, or ``None`` when the API has none we can build."""
    terminal: Terminal
    keepalive: Keepalive
    dialect: str
    """The dialect a report names when nothing more specific is told."""
    equivalences: tuple[str, ...] = ()
    """The request-equivalence rules (:mod:`replayproxy._core.matching.equivalence`) by name."""
    websocket: WebSocketProtocol | None = None
    headers: tuple[str, ...] = ()
    """Request headers (lower case) that name the API whatever the path."""
    hosts: tuple[str, ...] = ()
    """Host substrings that name the API when no path or header of any API does."""
    model_vendors: frozenset[str] = frozenset()
    """For APIs shared by many models (Bedrock InvokeModel): the model id vendors
    (``amazon`` in ``us.amazon.nova-lite-v1:0``) this definition is limited to."""
    volatile: tuple[str, ...] = ()
    """JSON pointers of event fields that differ between two recordings of the same turn
    (ids, ``created``, fingerprints, latencies, padding); ``*`` stands for any key or array
    index. Events by meaning (:mod:`replayproxy._core.tools.meaning`) leave them out."""
