"""openai-python reading Chat Completions and Responses streams: plain iteration of
``create(stream=True)`` as applications write it, and the ``.stream()`` helpers with
``get_final_completion()`` / ``get_final_response()``."""

from __future__ import annotations

from typing import Any

from tests.check.oracle.outcome import Delivered, canonical_args
from tests.check.oracle.readers import Read, Readers
from tests.check.oracle.server import HEADER

__all__ = ["readers"]

_ASK: Any = [{"role": "user", "content": "hi"}]


def readers(base_url: str) -> Readers:
    import openai

    client = openai.OpenAI(base_url=base_url + "/v1", api_key="sk-oracle", max_retries=0)
    name = f"openai-python {openai.__version__}"

    def chat_iterate(key: str) -> Delivered:
        text, tools, usage, finish = "", {}, None, None
        for chunk in client.chat.completions.create(
            model="m", messages=_ASK, stream=True, extra_headers={HEADER: key}
        ):
            if chunk.usage is not None:
                usage = chunk.usage.completion_tokens
            for choice in chunk.choices:
                if choice.index != 0:
                    continue
                delta = choice.delta
                if delta.content:
                    text += delta.content  # the usual accumulation
                for call in delta.tool_calls or []:
                    args = call.function.arguments if call.function else None
                    tools[call.index] = tools.get(call.index, "") + (args or "")
                finish = choice.finish_reason or finish
        args = tuple(canonical_args(tools[i]) for i in sorted(tools))
        return Delivered(text, args, usage, finish=finish)

    def chat_helper(key: str) -> Delivered:
        with client.chat.completions.stream(
            model="m", messages=_ASK, extra_headers={HEADER: key}
        ) as stream:
            for _ in stream:
                pass
            try:
                final: Any = stream.get_final_completion()
            except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError):
                # raised by design for these finish reasons; the application then reads what
                # the helper accumulated
                final = stream.current_completion_snapshot
        choice = final.choices[0]
        calls = choice.message.tool_calls or []
        args = tuple(canonical_args(c.function.arguments) for c in calls if c.type == "function")
        usage = final.usage.completion_tokens if final.usage else None
        return Delivered(
            choice.message.content or "",
            args,
            usage,
            finish=choice.finish_reason,
            role=choice.message.role,
        )

    def responses_iterate(key: str) -> Delivered:
        text, tools, usage, finish = "", {}, None, None
        for event in client.responses.create(
            model="m", input="hi", stream=True, extra_headers={HEADER: key}
        ):
            kind = event.type
            if kind == "response.output_text.delta":
                text += event.delta
            elif kind == "response.function_call_arguments.done":
                tools[event.item_id] = event.arguments
            elif kind == "response.output_item.done" and event.item.type == "function_call":
                tools[event.item.id] = event.item.arguments
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                finish = event.response.status
                if event.response.usage is not None:
                    usage = event.response.usage.output_tokens
        args = tuple(canonical_args(a) for a in tools.values())
        return Delivered(text, args, usage, finish=finish)

    def responses_helper(key: str) -> Delivered:
        with client.responses.stream(model="m", input="hi", extra_headers={HEADER: key}) as stream:
            for _ in stream:
                pass
            final = stream.get_final_response()
        args = tuple(
            canonical_args(item.arguments) for item in final.output if item.type == "function_call"
        )
        usage = final.usage.output_tokens if final.usage else None
        return Delivered(final.output_text, args, usage, finish=final.status)

    chat: list[Read] = [
        (name, "chat.completions.create(stream=True) iteration", chat_iterate),
        (name, "chat.completions.stream() get_final_completion()", chat_helper),
    ]
    responses: list[Read] = [
        (name, "responses.create(stream=True) iteration", responses_iterate),
        (name, "responses.stream() get_final_response()", responses_helper),
    ]
    return {"openai-chat": chat, "openai-responses": responses}
