"""The stream contract checker (pure, sans-IO): bytes in, a list of violations out.

:class:`StreamChecker` is incremental: ``feed`` body bytes as they come (any split), then
``close``; each call returns the violations it found. The result is the same whatever the
split, because every rule works on decoded events, never on frame boundaries. Each
:class:`Violation` has a stable rule id (see :data:`RULES` and docs/guides/checker.md), a severity
(``error``: a client breaks or silently misbehaves; ``warning``: unlike the real provider), the
event index and byte offset, and a message a person can act on.

Layers: bytes -> SSE (:mod:`.sse_rules`), NDJSON (:mod:`.ndjson`) or AWS event-stream
(:mod:`.bedrock`) framing rules -> one grammar: a provider's (:mod:`.openai_chat`,
:mod:`.openai_responses`, :mod:`.anthropic`, :mod:`.gemini`, :mod:`.bedrock`) or an application
:class:`Contract` (:mod:`.contract_grammar`). The provider comes from the registry
(:func:`replayproxy._core.providers.detect`) or is named; its definition says which grammar and
framing apply. :attr:`StreamChecker.dialect` names the dialect (:mod:`.dialect`) and ``notes``
the known provider habits the stream showed.

Before the framing layer, a ``content_encoding`` is undone frame by frame
(:mod:`replayproxy._core.wire.content_coding`);
offsets are then offsets in the decoded body. Given arrival times (``feed(data, at_ns)``), a
contract with ``incremental = true`` also judges the delivery (:mod:`.delivery`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from replayproxy._core.cassette.model import Frame
from replayproxy._core.check.base import GenericSSE, Grammar, Report, RequestOptions, Violation
from replayproxy._core.check.contract import Contract, parse_contract
from replayproxy._core.check.contract_grammar import ContractGrammar
from replayproxy._core.check.delivery import Arrival, buffered
from replayproxy._core.check.dialect import DialectSniffer
from replayproxy._core.check.grammars.anthropic_complete import AnthropicAny
from replayproxy._core.check.grammars.bedrock import Converse, EventStreamLayer
from replayproxy._core.check.grammars.bedrock_invoke import Invoke, InvokeNative
from replayproxy._core.check.grammars.cohere import CohereV2
from replayproxy._core.check.grammars.gemini import Gemini
from replayproxy._core.check.grammars.ollama import Ollama
from replayproxy._core.check.grammars.openai_chat import OpenAIChat
from replayproxy._core.check.grammars.openai_responses import OpenAIResponses
from replayproxy._core.check.jsonload import loads
from replayproxy._core.check.ndjson import NDJSONLayer
from replayproxy._core.check.rules import RULES, Rule, Severity
from replayproxy._core.check.sse_rules import SSELayer
from replayproxy._core.providers import STREAM_PROVIDERS, Framing, Provider, definition, parse
from replayproxy._core.wire.content_coding import BodyDecoder, DecodeError, encodings
from replayproxy._errors import UsageError

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
    "feed_frames",
    "parse_contract",
    "request_options",
]

_MAGIC = ((b"\x1f\x8b\x08", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))
"""Magic bytes of compressed data (RFC 1952 §2.3.1, RFC 8878 §3.1.1) no stream starts with."""

PROVIDERS = tuple(p.value for p in STREAM_PROVIDERS)
"""The names ``check --provider`` accepts (aliases aside), from the registry."""

GRAMMARS: dict[Provider, type[Grammar]] = {
    Provider.OPENAI_CHAT: OpenAIChat,
    Provider.OPENAI_RESPONSES: OpenAIResponses,
    Provider.ANTHROPIC: AnthropicAny,
    Provider.GEMINI: Gemini,
    Provider.BEDROCK_CONVERSE: Converse,
    Provider.BEDROCK_INVOKE: Invoke,
    Provider.BEDROCK_INVOKE_NATIVE: InvokeNative,
    Provider.OLLAMA: Ollama,
    Provider.COHERE_V2: CohereV2,
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
    dialect; ``content_encoding`` (the response's ``Content-Encoding``) is undone before the
    rules read the body. For a contract, ``record`` is the stored record its ``fields.record``
    pointers must match, and ``upstream_incomplete`` says the provider stream behind this one
    was cut (``upstream.incomplete`` then limits the terminal event)."""

    def __init__(
        self,
        provider: str | Provider | Contract,
        *,
        request: RequestOptions | None = None,
        content_type: str | None = None,
        url: str | None = None,
        content_encoding: str | None = None,
        record: Mapping[str, Any] | None = None,
        upstream_incomplete: bool = False,
    ) -> None:
        self.report = Report()
        self._sniffer: DialectSniffer | None = None
        self._grammar: Grammar | None = None
        self.contract = provider if isinstance(provider, Contract) else None
        self._layer: SSELayer | EventStreamLayer | NDJSONLayer
        self._counting: SSELayer | NDJSONLayer | None = None  # counts events for the timing
        if self.contract is None and (record is not None or upstream_incomplete):
            raise UsageError(
                "record= and upstream_incomplete= check an application stream against its "
                "contract: pass contract= too"
            )
        if isinstance(provider, Contract):
            self.provider = "contract"
            grammar: Grammar = ContractGrammar(
                self.report, provider, record=record, upstream_incomplete=upstream_incomplete
            )
            if provider.framing == "ndjson":
                self._layer = NDJSONLayer(self.report, grammar)
            else:
                self._layer = SSELayer(self.report, grammar)
            if provider.incremental:
                self._counting = self._layer
        else:
            api = parse(provider)
            self.provider = api.value
            self._sniffer = DialectSniffer(api, url)
            grammar = GRAMMARS[api](self.report, request or RequestOptions())
            if url:
                grammar.told(url)
            self._grammar = grammar
            framing = definition(api).framing
            if framing is Framing.EVENTSTREAM:
                self._layer = EventStreamLayer(self.report, grammar)
            elif framing is Framing.NDJSON:  # Ollama's: its clients flush the last line
                self._layer = NDJSONLayer(self.report, grammar, reader_flushes=True)
            else:
                self._layer = SSELayer(self.report, grammar, self._sniffer.observe)
        self._seen = 0
        self._closed = False
        self._decoded = 0  # bytes handed to the framing layer (offsets count these)
        self._undecodable = False
        self._arrivals: list[Arrival] = []
        self._untimed = False
        media = (content_type or "").split(";", 1)[0].strip().lower()
        is_sse = isinstance(self._layer, SSELayer)
        if content_type is not None and is_sse and media != "text/event-stream":
            self.report.add(
                "sse.content-type",
                f"Content-Type is {repr(content_type) if content_type else 'missing'}, not "
                "text/event-stream; SDKs will not decode it as a stream",
            )
        self._decoder = None
        if content_encoding is not None and encodings(content_encoding):
            self._decoder = BodyDecoder(content_encoding)
        if self._decoder is not None:
            if not media:
                media = "text/event-stream" if is_sse else "the stream"
            self.report.add(
                "http.compressed-stream",
                f"the stream is sent with content-encoding: {content_encoding}; clients decode "
                "it, but gzip/deflate middleware buffers SSE until its buffer fills or the "
                f"response ends: exclude {media} from compression",
                offset=0,
            )

    def _new(self) -> list[Violation]:
        new = self.report.items[self._seen :]
        self._seen = len(self.report.items)
        return new

    def feed(self, data: bytes, at_ns: int | None = None) -> list[Violation]:
        """Check the next bytes of the body (as received: content-encoded if the body is);
        ``at_ns`` is when they arrived, in ns from the request (for ``incremental``
        contracts). Returns the violations found so far, once."""
        if self._closed:
            raise ValueError("StreamChecker.feed() after close()")
        if data and not self._undecodable:
            if self._decoder is None and self._decoded == 0:
                self._sniff_coding(data)
            before = self._counting.dispatched if self._counting is not None else 0
            self._forward(self._decode(data, self._decoder.feed) if self._decoder else data)
            if self._counting is not None:
                if at_ns is None:
                    self._untimed = True
                else:
                    events = self._counting.dispatched - before
                    self._arrivals.append(Arrival(at_ns, len(data), events))
        return self._new()

    def _sniff_coding(self, first: bytes) -> None:
        """A body that starts with a compression format's magic bytes but came without its
        Content-Encoding (a raw capture): say so, since the rules below will see noise."""
        for magic, coding in _MAGIC:
            if first.startswith(magic):
                self.report.note(
                    f"the body starts with {coding}'s magic bytes ({magic.hex(' ')}): it is "
                    f"probably {coding}-compressed; give its Content-Encoding "
                    "(--content-encoding, content_encoding=) to check the stream inside"
                )

    def _decode(self, data: bytes, step: Callable[..., bytes]) -> bytes:
        try:
            return bytes(step(data) if data else step())
        except DecodeError as e:
            self._undecodable = True
            self.report.add(
                "http.content-encoding",
                f"{e}; httpx raises DecodingError and browsers fail the request here, so "
                "nothing after it is checked",
                offset=self._decoded,
            )
            return b""

    def _forward(self, data: bytes) -> None:
        if data and not self._undecodable:
            self._decoded += len(data)
            self._layer.feed(data)

    def close(self) -> list[Violation]:
        """End of body: end-of-stream rules (truncation, missing terminal event ...)."""
        if not self._closed:
            self._closed = True
            if self._decoder is not None and not self._undecodable:
                self._forward(self._decode(b"", self._decoder.close))
            # After undecodable bytes the rest is unknown: no end-of-stream rules on top.
            if not self._undecodable:
                self._layer.close()
            self._delivery()
            self.report.summarize()
        return self._new()

    def _delivery(self) -> None:
        if self._counting is None or self._undecodable:
            return
        if self._untimed or not self._arrivals:
            self.report.note(
                "incremental = true not checked: the frames carry no arrival times (check a "
                "recorded interaction, or frames with their offsets)"
            )
            return
        message = buffered(self._arrivals)
        if message is not None:
            self.report.add("stream.buffered", message)

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
        told = self._grammar.dialect if self._grammar is not None else None
        return told or self._sniffer.name

    @property
    def notes(self) -> list[str]:
        """The known provider dialect features the stream showed (named, not flagged)."""
        return list(self.report.notes)


def feed_frames(checker: StreamChecker, frames: Iterable[bytes | Frame]) -> None:
    """Feed a whole body to ``checker``, each :class:`Frame` with its arrival time, and close
    it."""
    for frame in frames:
        if isinstance(frame, Frame):
            checker.feed(frame.data, frame.offset_ns)
        else:
            checker.feed(frame)
    checker.close()


def check_frames(
    frames: Iterable[bytes | Frame],
    provider: str | Provider | Contract,
    *,
    request: RequestOptions | None = None,
    content_type: str | None = None,
    content_encoding: str | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool = False,
) -> list[Violation]:
    """Check a complete body given as frames (any split gives the same result, except for the
    delivery timing, which :class:`Frame` items carry); see :class:`StreamChecker`."""
    checker = StreamChecker(
        provider,
        request=request,
        content_type=content_type,
        content_encoding=content_encoding,
        record=record,
        upstream_incomplete=upstream_incomplete,
    )
    feed_frames(checker, frames)
    return checker.violations


def check_body(
    body: bytes,
    provider: str | Provider | Contract,
    *,
    request: RequestOptions | None = None,
    content_type: str | None = None,
    content_encoding: str | None = None,
) -> list[Violation]:
    """Check a complete body."""
    return check_frames(
        [body],
        provider,
        request=request,
        content_type=content_type,
        content_encoding=content_encoding,
    )
