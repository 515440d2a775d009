"""The stream contract checker (pure, sans-IO): bytes in, a list of violations out.

:class:`StreamChecker` is incremental: ``feed`` body bytes as they come (any split), then
``close``; each call returns the violations it found. The result is the same whatever the
split, because every rule works on decoded events, never on frame boundaries. Each
:class:`Violation` has a stable rule id (see :data:`RULES` and docs/checker.md), a severity
(``error``: a client breaks or silently misbehaves; ``warning``: unlike the real provider), the
event index and byte offset, and a message a person can act on.

Layers: bytes -> SSE (:mod:`.sse_rules`) or AWS event-stream (:mod:`.bedrock`) framing rules ->
one provider grammar (:mod:`.openai_chat`, :mod:`.openai_responses`, :mod:`.anthropic`,
:mod:`.gemini`, :mod:`.bedrock`). The provider comes from :func:`detect` or is named.
"""

from __future__ import annotations

from collections.abc import Iterable

from replayproxy.core import jsonlimits
from replayproxy.core.check.anthropic import Anthropic
from replayproxy.core.check.base import GenericSSE, Grammar, Report, RequestOptions, Violation
from replayproxy.core.check.bedrock import Converse, EventStreamLayer, Invoke
from replayproxy.core.check.detect import PROVIDERS, detect, normalize
from replayproxy.core.check.gemini import Gemini
from replayproxy.core.check.openai_chat import OpenAIChat
from replayproxy.core.check.openai_responses import OpenAIResponses
from replayproxy.core.check.rules import RULES, Rule, Severity
from replayproxy.core.check.sse_rules import SSELayer

__all__ = [
    "PROVIDERS",
    "RULES",
    "RequestOptions",
    "Rule",
    "Severity",
    "StreamChecker",
    "Violation",
    "check_body",
    "check_frames",
    "detect",
    "normalize",
    "request_options",
]

_GRAMMARS: dict[str, type[Grammar]] = {
    "openai-chat": OpenAIChat,
    "openai-responses": OpenAIResponses,
    "anthropic": Anthropic,
    "gemini": Gemini,
    "bedrock-converse": Converse,
    "bedrock-invoke": Invoke,
    "sse": GenericSSE,
}


def request_options(body: bytes | None) -> RequestOptions:
    """What the rules need from a JSON request body (unknown when it is not JSON)."""
    if not body:
        return RequestOptions()
    try:
        request = jsonlimits.loads(body)
    except ValueError:
        return RequestOptions()
    if not isinstance(request, dict):
        return RequestOptions()
    options = request.get("stream_options")
    include = options.get("include_usage") if isinstance(options, dict) else None
    return RequestOptions(include_usage=bool(include))


class StreamChecker:
    """Check one response body against ``provider``'s stream contract, incrementally."""

    def __init__(
        self,
        provider: str,
        *,
        request: RequestOptions | None = None,
        content_type: str | None = None,
    ) -> None:
        self.provider = normalize(provider)
        self.report = Report()
        grammar = _GRAMMARS[self.provider](self.report, request or RequestOptions())
        bedrock = self.provider.startswith("bedrock")
        self._layer: SSELayer | EventStreamLayer = (
            EventStreamLayer(self.report, grammar) if bedrock else SSELayer(self.report, grammar)
        )
        self._seen = 0
        self._closed = False
        if content_type is not None and not bedrock:
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


def check_frames(
    frames: Iterable[bytes],
    provider: str,
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
    provider: str,
    *,
    request: RequestOptions | None = None,
    content_type: str | None = None,
) -> list[Violation]:
    """Check a complete body."""
    return check_frames([body], provider, request=request, content_type=content_type)
