"""The stream contract checker (pure, sans-IO): bytes in, a list of violations out.

:class:`StreamChecker` is incremental: ``feed`` body bytes as they come (any split), then
``close``; each call returns the violations it found. The result is the same whatever the
split, because every rule works on decoded events, never on frame boundaries. Each
:class:`Violation` has a stable rule id (see :data:`RULES` and docs/checker.md), a severity
(``error``: a client breaks or silently misbehaves; ``warning``: unlike the real provider), the
event index and byte offset, and a message a person can act on.

Layers: bytes -> SSE (:mod:`.sse_rules`), NDJSON (:mod:`.ndjson`) or AWS event-stream
(:mod:`.bedrock`) framing rules -> one grammar: a provider's (:mod:`.openai_chat`,
:mod:`.openai_responses`, :mod:`.anthropic`, :mod:`.gemini`, :mod:`.bedrock`) or an application
:class:`Contract` (:mod:`.contract_grammar`). The provider comes from the registry
(:func:`replayproxy.core.providers.detect`) or is named; its definition says which grammar and
framing apply. :attr:`StreamChecker.dialect` names the dialect (:mod:`.dialect`) and ``notes``
the known provider habits the stream showed.
"""

from __future__ import annotations

from collections.abc import Iterable

from replayproxy.core.check.base import GenericSSE, Grammar, Report, RequestOptions, Violation
from replayproxy.core.check.contract import Contract, parse_contract
from replayproxy.core.check.contract_grammar import ContractGrammar
from replayproxy.core.check.dialect import DialectSniffer
from replayproxy.core.check.grammars.anthropic import Anthropic
from replayproxy.core.check.grammars.bedrock import Converse, EventStreamLayer, Invoke, InvokeChunks
from replayproxy.core.check.grammars.gemini import Gemini
from replayproxy.core.check.grammars.openai_chat import OpenAIChat
from replayproxy.core.check.grammars.openai_responses import OpenAIResponses
from replayproxy.core.check.jsonload import loads
from replayproxy.core.check.ndjson import NDJSONLayer
from replayproxy.core.check.rules import RULES, Rule, Severity
from replayproxy.core.check.sse_rules import SSELayer
from replayproxy.core.providers import STREAM_PROVIDERS, Framing, Provider, definition, parse

__all__ = [
    "GRAMMARS",
    "PROVIDERS",
    "RULES",
    "Contract",
    "RequestOptions",
    "Rule",
    "Severity",
    "StreamChecker",
    "Violation",
    "check_body",
    "check_frames",
    "parse_contract",
    "request_options",
]

PROVIDERS = tuple(p.value for p in STREAM_PROVIDERS)
"""The names ``check --provider`` accepts (aliases aside), from the registry."""

GRAMMARS: dict[Provider, type[Grammar]] = {
    Provider.OPENAI_CHAT: OpenAIChat,
    Provider.OPENAI_RESPONSES: OpenAIResponses,
    Provider.ANTHROPIC: Anthropic,
    Provider.GEMINI: Gemini,
    Provider.BEDROCK_CONVERSE: Converse,
    Provider.BEDROCK_INVOKE: Invoke,
    Provider.BEDROCK_INVOKE_NATIVE: InvokeChunks,
    Provider.SSE: GenericSSE,
}
"""The grammar of each stream API of the registry (its definition names the rule set)."""


def request_options(body: bytes | None) -> RequestOptions:
    """What the rules need from a JSON request body (unknown when it is not JSON)."""
    if not body:
        return RequestOptions()
    try:
        request = loads(body)
    except ValueError:
        return RequestOptions()
    if not isinstance(request, dict):
        return RequestOptions()
    options = request.get("stream_options")
    include = options.get("include_usage") if isinstance(options, dict) else None
    return RequestOptions(include_usage=bool(include))


class StreamChecker:
    """Check one response body against ``provider``'s stream contract (a provider name, or an
    application :class:`Contract`), incrementally. ``url`` (the request URL) helps name the
    dialect."""

    def __init__(
        self,
        provider: str | Provider | Contract,
        *,
        request: RequestOptions | None = None,
        content_type: str | None = None,
        url: str | None = None,
    ) -> None:
        self.report = Report()
        self._sniffer: DialectSniffer | None = None
        self.contract = provider if isinstance(provider, Contract) else None
        self._layer: SSELayer | EventStreamLayer | NDJSONLayer
        if isinstance(provider, Contract):
            self.provider = "contract"
            grammar: Grammar = ContractGrammar(self.report, provider)
            if provider.framing == "ndjson":
                self._layer = NDJSONLayer(self.report, grammar)
            else:
                self._layer = SSELayer(self.report, grammar)
        else:
            api = parse(provider)
            self.provider = api.value
            self._sniffer = DialectSniffer(api, url)
            grammar = GRAMMARS[api](self.report, request or RequestOptions())
            if definition(api).framing is Framing.EVENTSTREAM:
                self._layer = EventStreamLayer(self.report, grammar)
            else:
                self._layer = SSELayer(self.report, grammar, self._sniffer.observe)
        self._seen = 0
        self._closed = False
        if content_type is not None and isinstance(self._layer, SSELayer):
            media = content_type.split(";", 1)[0].strip().lower()
            if media != "text/event-stream":
                self.report.add(
                    "sse.content-type",
                    f"Content-Type is {content_type!r}, not text/event-stream; SDKs will not "
                    "decode it as a stream",
                )

    def _new(self) -> list[Violation]:
        new = self.report.items[self._seen :]
        self._seen = len(self.report.items)
        return new

    def feed(self, data: bytes) -> list[Violation]:
        """Check the next bytes of the body; returns the violations found so far, once."""
        if self._closed:
            raise ValueError("StreamChecker.feed() after close()")
        if data:
            self._layer.feed(data)
        return self._new()

    def close(self) -> list[Violation]:
        """End of body: end-of-stream rules (truncation, missing terminal event ...)."""
        if not self._closed:
            self._closed = True
            self._layer.close()
            self.report.summarize()
        return self._new()

    @property
    def violations(self) -> list[Violation]:
        """Every violation found so far."""
        return list(self.report.items)

    @property
    def dialect(self) -> str:
        """The stream's dialect: ``"Anthropic"``, ``"OpenAI-compatible (DeepSeek)"``,
        ``"contract NAME"`` ... (from the URL and the first payloads)."""
        if self.contract is not None:
            return f"contract {self.contract.name}"
        assert self._sniffer is not None
        return self._sniffer.name

    @property
    def notes(self) -> list[str]:
        """The known provider dialect features the stream showed (named, not flagged)."""
        return list(self.report.notes)


def check_frames(
    frames: Iterable[bytes],
    provider: str | Provider | Contract,
    *,
    request: RequestOptions | None = None,
    content_type: str | None = None,
) -> list[Violation]:
    """Check a complete body given as frames (any split gives the same result)."""
    checker = StreamChecker(provider, request=request, content_type=content_type)
    for frame in frames:
        checker.feed(frame)
    checker.close()
    return checker.violations


def check_body(
    body: bytes,
    provider: str | Provider | Contract,
    *,
    request: RequestOptions | None = None,
    content_type: str | None = None,
) -> list[Violation]:
    """Check a complete body."""
    return check_frames([body], provider, request=request, content_type=content_type)
