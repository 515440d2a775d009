"""anthropic-python reading Messages streams: ``messages.stream()`` with
``get_final_message()``, and plain iteration of ``messages.create(stream=True)`` accumulating
the events as applications do (also how Bedrock Invoke payloads are read, see
:mod:`.py_bedrock`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tests.check.oracle.outcome import Delivered, canonical_args
from tests.check.oracle.readers import Read, Readers
from tests.check.oracle.server import HEADER

__all__ = ["accumulate", "readers"]

_ASK: Any = [{"role": "user", "content": "hi"}]


def accumulate(events: Iterable[dict[str, Any]]) -> Delivered:
    """An application's loop over Messages events (as dicts): text deltas appended per text
    block, ``input_json_delta`` per tool_use block, stop reason and usage from message_delta."""
    text, usage, finish = "", None, None
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "content_block_start":
            blocks[event["index"]] = {**event["content_block"], "json": ""}
        elif kind == "content_block_delta":
            delta, block = event["delta"], blocks[event["index"]]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "input_json_delta":
                block["json"] += delta["partial_json"]
        elif kind == "message_delta":
            finish = event["delta"].get("stop_reason") or finish
            usage = (event.get("usage") or {}).get("output_tokens", usage)
    text = "".join(b.get("text", "") for _, b in sorted(blocks.items()) if b["type"] == "text")
    args = tuple(
        canonical_args(b["json"] or b.get("input") or {})
        for _, b in sorted(blocks.items())
        if b["type"] == "tool_use"
    )
    return Delivered(text, args, usage, finish=finish)


def readers(base_url: str) -> Readers:
    import anthropic

    client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-oracle", max_retries=0)
    name = f"anthropic-python {anthropic.__version__}"

    def helper(key: str) -> Delivered:
        with client.messages.stream(
            model="m", max_tokens=64, messages=_ASK, extra_headers={HEADER: key}
        ) as stream:
            for _ in stream:
                pass
            final = stream.get_final_message()
        text = "".join(b.text for b in final.content if b.type == "text")
        args = tuple(canonical_args(b.input) for b in final.content if b.type == "tool_use")
        usage = final.usage.output_tokens if final.usage else None
        return Delivered(text, args, usage, finish=final.stop_reason)

    def iterate(key: str) -> Delivered:
        stream = client.messages.create(
            model="m", max_tokens=64, messages=_ASK, stream=True, extra_headers={HEADER: key}
        )
        return accumulate(event.to_dict() for event in stream)

    ways: list[Read] = [
        (name, "messages.stream() get_final_message()", helper),
        (name, "messages.create(stream=True) iteration", iterate),
    ]
    return {"anthropic": ways}
