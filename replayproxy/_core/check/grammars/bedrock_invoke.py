"""Bedrock InvokeModelWithResponseStream by model family: ``chunk`` events whose base64
``bytes`` hold the model's own JSON (:mod:`replayproxy._core.providers.bedrock_models`).

The family comes from the request URL's model id when the checker has one, else from the first
chunk's fields: Anthropic's events are checked with the Anthropic grammar; every other family
must reach its final chunk (``bedrock.invoke-stop``: boto3 ends quietly on a stream cut at a
message boundary, so a truncated answer looks complete). The family names the dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from replayproxy._core.check.base import INVALID, Report, RequestOptions, StreamEvent
from replayproxy._core.check.grammars.anthropic import Anthropic
from replayproxy._core.check.grammars.bedrock import InvokeChunks
from replayproxy._core.check.rules import Rule, register
from replayproxy._core.providers import (
    ANTHROPIC_MODELS,
    BEDROCK_FAMILIES,
    ModelFamily,
    bedrock_model_family,
)

__all__ = ["Invoke", "InvokeNative"]

register(
    [
        Rule(
            "bedrock.invoke-stop",
            "error",
            "An InvokeModelWithResponseStream of a non-Anthropic model reaches its family's "
            "final chunk (Nova messageStop, Titan completionReason, Llama and Mistral "
            "stop_reason, Cohere is_finished) or the chunk Bedrock adds "
            "amazon-bedrock-invocationMetrics to.",
            "boto3's EventStream ends quietly when the body ends at a message boundary, so a "
            "cut answer looks complete to LangChain's ChatBedrock and to application loops.",
        )
    ]
)

# what Bedrock adds to the last chunk of every model's stream
_BEDROCK_LAST: Final = frozenset(
    {"amazon-bedrock-invocationMetrics", "amazon-bedrock-guardrailAction"}
)
_CONVERSE_KEYS: Final = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop"}
)


def _stops(items: Any) -> bool:
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("stop_reason") is not None for i in items
    )


# per family of the registry, in its order (Anthropic, Nova, Titan, Llama, Mistral, Cohere):
# (the chunk is this family's, the chunk is its final one)
_Test = Callable[[dict[str, Any]], bool]
_SHAPES: Final[dict[ModelFamily, tuple[_Test, _Test]]] = dict(
    zip(
        BEDROCK_FAMILIES,
        [
            (lambda p: isinstance(p.get("type"), str), lambda p: False),
            (lambda p: bool(_CONVERSE_KEYS & p.keys()), lambda p: "messageStop" in p),
            (
                lambda p: "outputText" in p or "completionReason" in p,
                lambda p: p.get("completionReason") is not None,
            ),
            (lambda p: "generation" in p, lambda p: p.get("stop_reason") is not None),
            (
                lambda p: "outputs" in p or "choices" in p,
                lambda p: _stops(p.get("outputs")) or _stops(p.get("choices")),
            ),
            (
                lambda p: "is_finished" in p or "generations" in p,
                lambda p: p.get("is_finished") is True,
            ),
        ],
        strict=True,
    )
)


def _sniff(inner: Any) -> ModelFamily | None:
    if isinstance(inner, dict):
        for family, (belongs, _) in _SHAPES.items():
            if belongs(inner):
                return family
    return None


class InvokeNative(InvokeChunks):
    """InvokeModelWithResponseStream of a model the URL or the first chunk tells the family
    of; without one, only the ``chunk`` wrapping is checked."""

    default: ModelFamily | None = None

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.family: ModelFamily | None = None
        self.told_family = False
        self.inner: Anthropic | None = None
        self.final: StreamEvent | None = None
        self.chunks = 0

    def told(self, url: str) -> None:
        try:
            path = urlsplit(url).path if not url.startswith("/") else url
        except ValueError:
            return
        family = bedrock_model_family(path)
        if family is not None:
            self.told_family = True
            self._choose(family)

    def _choose(self, family: ModelFamily | None) -> None:
        self.family = family
        if family is ANTHROPIC_MODELS:
            self.inner = Anthropic(self.report, self.request)
        if family is not None and (family is not self.default or self.told_family):
            self.dialect = family.dialect

    def event(self, ev: StreamEvent) -> None:
        if self._after_exception(ev) or ev.payload is INVALID:
            return
        inner = self._unwrap(ev)
        if inner is None:
            return
        self.chunks += 1
        if self.family is None and self.chunks == 1:
            self._choose(_sniff(inner.payload) or self.default)
        if self.inner is not None:
            self.inner.event(inner)
        elif self.family is not None and isinstance(inner.payload, dict):
            _, ends = _SHAPES[self.family]
            if self.final is None and (ends(inner.payload) or _BEDROCK_LAST & inner.payload.keys()):
                self.final = inner

    def finish(self, end: int) -> None:
        if self.exception is not None:
            return
        if self.inner is not None:
            self.inner.finish(end)
        elif self.family is not None and self.final is None:
            self.report.add(
                "bedrock.invoke-stop",
                f"the stream ends without {self.family.final_chunk}, the final chunk of "
                f"{self.family.title}'s InvokeModel stream, nor Bedrock's "
                "amazon-bedrock-invocationMetrics (truncated at a message boundary?)",
                offset=end,
            )


class Invoke(InvokeNative):
    """InvokeModelWithResponseStream where the family defaults to Anthropic's (Claude) when
    neither the URL nor the first chunk tells another."""

    default = ANTHROPIC_MODELS
