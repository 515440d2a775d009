"""boto3 reading Bedrock streams: ``converse_stream`` (ConverseStream events) and
``invoke_model_with_response_stream`` (each ``chunk``'s bytes decoded as the model's own
events; Anthropic models' are Messages events, read as :func:`.py_anthropic.accumulate`)."""

from __future__ import annotations

import json
from typing import Any

from tests.check.oracle.outcome import Delivered, canonical_args
from tests.check.oracle.py_anthropic import accumulate
from tests.check.oracle.readers import Read, Readers
from tests.check.oracle.server import HEADER

__all__ = ["readers"]

_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def readers(base_url: str) -> Readers:
    import boto3
    import botocore
    from botocore.config import Config

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base_url,
        aws_access_key_id="AKIDORACLE",
        aws_secret_access_key="oracle-secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )
    current = {"key": ""}

    def add_key(request: Any, **_: Any) -> None:
        request.headers[HEADER] = current["key"]

    client.meta.events.register("before-sign.bedrock-runtime.*", add_key)
    name = f"boto3 {boto3.__version__} (botocore {botocore.__version__})"

    def converse(key: str) -> Delivered:
        current["key"] = key
        text, tools, usage, finish = "", {}, None, None
        response = client.converse_stream(
            modelId=_MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}]
        )
        for event in response["stream"]:
            if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
                tools.setdefault(event["contentBlockStart"]["contentBlockIndex"], "")
            elif "contentBlockDelta" in event:
                delta, i = event["contentBlockDelta"]["delta"], event["contentBlockDelta"]
                text += delta.get("text", "")
                if "toolUse" in delta:
                    index = i["contentBlockIndex"]
                    tools[index] = tools.get(index, "") + delta["toolUse"].get("input", "")
            elif "messageStop" in event:
                finish = event["messageStop"]["stopReason"]
            elif "metadata" in event:
                usage = event["metadata"].get("usage", {}).get("outputTokens", usage)
        args = tuple(canonical_args(tools[i]) for i in sorted(tools))
        return Delivered(text, args, usage, finish=finish)

    def invoke(key: str) -> Delivered:
        current["key"] = key
        response = client.invoke_model_with_response_stream(
            modelId=_MODEL,
            body=json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64}),
        )
        chunks = [json.loads(e["chunk"]["bytes"]) for e in response["body"] if "chunk" in e]
        if any("type" in c for c in chunks):
            return accumulate(chunks)  # an Anthropic model: Messages events
        return Delivered(
            "".join(_native_text(c) for c in chunks),
            tool_args=None,
            has_usage=False,
            has_finish=False,
        )

    invoking: list[Read] = [(name, "invoke_model_with_response_stream() iteration", invoke)]
    return {
        "bedrock-converse": [(name, "converse_stream() iteration", converse)],
        "bedrock-invoke": invoking,
        "bedrock-invoke-native": invoking,
    }


def _native_text(chunk: dict[str, Any]) -> str:
    """The text an application takes from one chunk of a non-Anthropic model (Titan's
    ``outputText``, Meta's ``generation``, Mistral's ``outputs``, Cohere's ``text``, Nova's
    ``contentBlockDelta``)."""
    if isinstance(chunk.get("outputs"), list):
        return "".join(str(o.get("text", "")) for o in chunk["outputs"])
    for key in ("outputText", "generation", "text"):
        if isinstance(chunk.get(key), str):
            return str(chunk[key])
    return str(chunk.get("contentBlockDelta", {}).get("delta", {}).get("text", ""))
