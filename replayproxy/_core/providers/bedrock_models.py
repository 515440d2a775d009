"""The model families behind Bedrock's InvokeModelWithResponseStream: each chunk carries the
model's own JSON, so the grammar and the dialect follow the family, told from the model id in
the request path (``/model/{modelId}/invoke-with-response-stream``) or, without a URL, from
the fields of the first chunk (:mod:`replayproxy._core.check.grammars.bedrock_invoke`).

Wire shapes (AWS Bedrock model parameter references): Anthropic, the Messages events; Amazon
Nova, ConverseStream members (``messageStart`` ... ``messageStop``, ``metadata``); Amazon
Titan Text, ``outputText`` with ``completionReason`` on the last chunk; Meta Llama,
``generation`` with ``stop_reason``; Mistral, ``outputs[].stop_reason`` (or ``choices`` for
the chat models); Cohere Command, ``is_finished`` (and ``finish_reason``). Bedrock itself adds
``amazon-bedrock-invocationMetrics`` (and, when a guardrail intervenes, its action) to the last
chunk of every family. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from replayproxy._core.providers.detection import bedrock_model_vendor

__all__ = ["ANTHROPIC_MODELS", "BEDROCK_FAMILIES", "ModelFamily", "bedrock_model_family"]

_INVOKE: Final = "(InvokeModelWithResponseStream)"


@dataclass(frozen=True, slots=True)
class ModelFamily:
    """One model family's InvokeModel stream: its name, the vendor and model-name words of its
    model ids, the dialect a report names, and what ends its stream."""

    name: str
    title: str  # for messages: "Amazon Titan"
    vendor: str
    model_word: str  # in the model name after the vendor ("" : every model of the vendor)
    dialect: str
    final_chunk: str


BEDROCK_FAMILIES: Final = (
    ModelFamily(
        "anthropic", "Anthropic", "anthropic", "", f"Anthropic on Bedrock {_INVOKE}", "message_stop"
    ),
    ModelFamily(
        "amazon-nova", "Amazon Nova", "amazon", "nova", "Bedrock (Amazon Nova)", "messageStop"
    ),
    ModelFamily(
        "amazon-titan",
        "Amazon Titan",
        "amazon",
        "titan",
        "Bedrock (Amazon Titan)",
        "a chunk with completionReason",
    ),
    ModelFamily(
        "meta", "Meta Llama", "meta", "", "Bedrock (Meta Llama)", "a chunk with stop_reason"
    ),
    ModelFamily(
        "mistral",
        "Mistral",
        "mistral",
        "",
        "Bedrock (Mistral)",
        "a chunk whose outputs (or choices) carry stop_reason",
    ),
    ModelFamily(
        "cohere",
        "Cohere",
        "cohere",
        "",
        "Bedrock (Cohere)",
        "a chunk with is_finished true",
    ),
)

ANTHROPIC_MODELS: Final = BEDROCK_FAMILIES[0]
"""Claude's family: its chunks hold Anthropic's Messages events."""


def bedrock_model_family(path: str) -> ModelFamily | None:
    """The family of the Bedrock model id in ``path`` (``amazon-nova`` for
    ``/model/us.amazon.nova-lite-v1:0/...``), or ``None`` when the id names none we know."""
    vendor = bedrock_model_vendor(path)
    if vendor is None:
        return None
    model = path.lower()
    for family in BEDROCK_FAMILIES:
        if family.vendor == vendor and family.model_word in model:
            return family
    return None
