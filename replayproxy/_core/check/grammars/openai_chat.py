"""OpenAI Chat Completions stream grammar (``POST /v1/chat/completions``, ``stream: true``).

``data: {chunk}`` events, no ``event:`` lines, ``data: [DONE]`` last. Per choice: role first,
deltas, exactly one ``finish_reason``, nothing after it; tool calls by index with id/name in the
first delta only and JSON arguments; the optional usage chunk (``choices == []``) last before
``[DONE]``. Rules ``openai.chat.*``; see docs/guides/checker.md for the SDK behaviour behind each.
"""

from __future__ import annotations

from typing import Any

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.grammars.openai_chat_deltas import (
    Choice,
    delta_shapes,
    has_content,
    tool_calls,
)
from replayproxy._core.check.jsonload import loads

__all__ = ["OpenAIChat"]

FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})


def _carries(chunk: dict[str, Any]) -> bool:
    """Whether a chunk holds anything openai-python's .stream() helper accumulates."""
    if chunk.get("usage") is not None:
        return True
    choices = chunk.get("choices")
    return isinstance(choices, list) and any(
        isinstance(c, dict)
        and (
            c.get("finish_reason") is not None
            or (
                isinstance(c.get("delta"), dict)
                and any(v not in (None, "", [], {}) for v in c["delta"].values())
            )
        )
        for c in choices
    )


class OpenAIChat(Grammar):
    sentinels = frozenset({"[DONE]"})

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.done: StreamEvent | None = None
        self.after_done_reported = False
        self.error: StreamEvent | None = None
        self.error_reported = False
        self.first: dict[str, Any] = {}
        self.last_created: int | None = None
        self.changed: set[str] = set()
        self.choices: dict[int, Choice] = {}
        self.next_choice = 0
        self.usage_seen = False
        self.usage_only: int | None = None  # event index of a choices == [] usage chunk
        self.after_usage_reported = False
        self.event_field_reported = False

    def event(self, ev: StreamEvent) -> None:
        report = self.report
        if ev.name is not None and not self.event_field_reported:
            self.event_field_reported = True
            report.at(
                "openai.chat.event-field",
                ev,
                f"event: {ev.name} line in a Chat Completions stream (only data: is sent); "
                "older openai-python raises on named events",
            )
        if self.done is not None:
            if not self.after_done_reported:
                self.after_done_reported = True
                report.at(
                    "openai.chat.done-last",
                    ev,
                    "event after data: [DONE]; openai-python stops reading at [DONE], so it is "
                    "never seen",
                )
            return
        if self.error is not None:
            if ev.payload is not None and not self.error_reported:  # [DONE] after it is harmless
                self.error_reported = True
                report.at(
                    "openai.chat.error-terminal",
                    ev,
                    f"event after the error chunk (event {self.error.index}); openai-python "
                    "raised APIError there and never reads it",
                )
            return
        if ev.payload is None:  # the [DONE] sentinel
            self.done = ev
            return
        if ev.payload is INVALID:
            return
        chunk = ev.payload
        if not isinstance(chunk, dict):
            report.at(
                "openai.chat.chunk-shape",
                ev,
                f"the chunk is a JSON {type(chunk).__name__}, not an object; openai-python "
                "cannot build a ChatCompletionChunk from it",
            )
            return
        if chunk.get("error"):
            self.error = ev
            return
        if "prompt_filter_results" in chunk and not chunk.get("choices"):
            return  # Azure OpenAI's content-filter preamble: empty id/model/object by design
        obj = chunk.get("object")
        if obj == "chat.completion.done":
            report.note("a last chunk with object 'chat.completion.done', as Perplexity sends")
        elif obj != "chat.completion.chunk" and not _carries(chunk):
            report.note(
                f"a chunk with object {obj!r} that carries no delta, finish_reason or usage "
                "(as Azure OpenAI's asynchronous content filter sends); the .stream() helper "
                "skips it and loses nothing"
            )
            return  # empty id/model/created by design, like the preamble
        elif obj != "chat.completion.chunk":
            report.at(
                "openai.chat.object",
                ev,
                f"object is {obj!r}, expected 'chat.completion.chunk'; openai-python's "
                ".stream() helper drops the chunk (get_final_completion() raises "
                "AssertionError when it drops them all)",
            )
        self._stable(ev, chunk)
        obfuscation = chunk.get("obfuscation")
        if obfuscation is not None and not isinstance(obfuscation, str):
            report.at("openai.chat.obfuscation", ev, "obfuscation is not a string")
        choices = chunk.get("choices")
        usage = chunk.get("usage")
        if self.usage_only is not None and choices and not self.after_usage_reported:
            self.after_usage_reported = True
            report.at(
                "openai.chat.usage-order",
                ev,
                f"a chunk with choices after the usage-only chunk (event {self.usage_only}); "
                "code that reads usage from the last chunk before [DONE] finds none",
            )
        if usage is not None:
            self.usage_seen = True
            self._usage(ev, usage, choices)
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict):
                    self._choice(ev, choice)

    def _stable(self, ev: StreamEvent, chunk: dict[str, Any]) -> None:
        for key, rule in (
            ("id", "openai.chat.stable-id"),
            ("model", "openai.chat.stable-id"),
            ("system_fingerprint", "openai.chat.stable-fields"),
        ):
            value = chunk.get(key)
            if value is None:
                continue
            first = self.first.setdefault(key, value)
            if value != first and key not in self.changed:
                self.changed.add(key)
                self.report.at(rule, ev, f"{key} changed from {first!r} to {value!r}")
        created = chunk.get("created")
        if not isinstance(created, int):
            return
        last, self.last_created = self.last_created, created
        if last is None:
            return
        if created > last:
            self.report.note("created moves forward during the stream, as Groq and xAI send")
        elif created < last and "created" not in self.changed:
            self.changed.add("created")
            self.report.at(
                "openai.chat.stable-fields", ev, f"created goes back from {last} to {created}"
            )

    def _usage(self, ev: StreamEvent, usage: Any, choices: Any) -> None:
        report = self.report
        if choices == []:
            self.usage_only = ev.index
            if self.request.include_usage is False:
                report.at(
                    "openai.chat.usage-unrequested",
                    ev,
                    "a usage-only chunk (choices == []) although the request did not ask for "
                    "stream_options.include_usage; code reading chunk.choices[0] raises "
                    "IndexError on it",
                )
        elif isinstance(choices, list) and any(
            isinstance(c, dict) and c.get("finish_reason") for c in choices
        ):
            # DeepSeek, Groq, Mistral, Moonshot: openai-python reads chunk.usage wherever it is.
            report.note("usage on the finish_reason chunk, as DeepSeek, Groq and Mistral send")
        else:
            report.note("usage on chunks with content (running totals), as Perplexity sends")
        if isinstance(usage, dict):
            p, c, t = (usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
            if isinstance(p, int) and isinstance(c, int) and isinstance(t, int):
                details = usage.get("completion_tokens_details") or {}
                reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else 0
                allowed = {p + c}
                if isinstance(reasoning, int):
                    allowed.add(p + c + reasoning)
                if t not in allowed:
                    report.at(
                        "openai.chat.usage-total",
                        ev,
                        f"total_tokens {t} != prompt_tokens {p} + completion_tokens {c}",
                    )

    def _choice(self, ev: StreamEvent, choice: dict[str, Any]) -> None:
        report = self.report
        index = choice.get("index")
        if not isinstance(index, int):
            report.at("openai.chat.choice-order", ev, "a choice has no integer index")
            return
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            report.at(
                "openai.chat.delta-missing",
                ev,
                f"choice {index} has no delta object; openai-python gives delta None, so "
                "chunk.choices[0].delta.content raises AttributeError, and so does the "
                ".stream() helper's get_final_completion()",
            )
            delta = {}
        state = self.choices.get(index)
        if state is None:
            if index != self.next_choice:
                report.at(
                    "openai.chat.choice-order",
                    ev,
                    f"choice {index} appears before choice {self.next_choice}; openai-python "
                    "appends new choices, so it lands in the wrong slot",
                )
            self.next_choice = max(self.next_choice, index + 1)
            state = self.choices[index] = Choice()
            if delta.get("role") != "assistant":
                report.at(
                    "openai.chat.role-first",
                    ev,
                    f"the first delta of choice {index} does not set role 'assistant'",
                )
        elif delta.get("role"):
            report.at(
                "openai.chat.role-repeated",
                ev,
                f"choice {index} repeats role {delta['role']!r}; openai-python's .stream() "
                "helper concatenates it into an invalid role ('assistantassistant')",
            )
        delta_shapes(report, ev, index, state, delta)
        finish = choice.get("finish_reason")
        if state.finish_event is not None:
            if finish is not None and finish == state.finish and ev.payload.get("usage"):
                # OpenRouter's usage chunk repeats the finish: the helper keeps the same value
                report.note(
                    "the usage chunk repeats the choice's finish_reason, as OpenRouter sends; "
                    "clients keep the same value"
                )
            elif finish is not None:
                report.at(
                    "openai.chat.finish-repeated",
                    ev,
                    f"choice {index} has a second finish_reason {finish!r} (first "
                    f"{state.finish!r} at event {state.finish_event.index})",
                )
            elif has_content(delta) and not state.after_finish_reported:
                state.after_finish_reported = True
                report.at(
                    "openai.chat.after-finish",
                    ev,
                    f"choice {index} has delta content after its finish_reason "
                    f"{state.finish!r} (event {state.finish_event.index})",
                )
            return
        tool_calls(report, ev, index, state, delta.get("tool_calls"))
        if finish is not None:
            if finish not in FINISH_REASONS:
                report.at(
                    "openai.chat.finish-reason",
                    ev,
                    f"choice {index} has unknown finish_reason {finish!r}",
                )
            state.finish = str(finish)
            state.finish_event = ev

    def finish(self, end: int) -> None:
        report = self.report
        finished = bool(self.choices) and all(
            s.finish_event is not None for s in self.choices.values()
        )
        if self.error is None and self.done is None:
            if finished and self.usage_seen:
                # Both ends a truncated stream lacks are there: clients read it whole.
                report.note(
                    "no data: [DONE] after the finish_reason and usage chunks, as some "
                    "OpenAI-compatible servers send; openai-python ends at the end of the body"
                )
            else:
                report.add(
                    "openai.chat.done-last",
                    "the stream ends without data: [DONE]; openai-python ends quietly, so a "
                    "truncated stream looks complete",
                    offset=end,
                )
        if self.error is not None:
            return
        for index, state in self.choices.items():
            if state.finish_event is None:
                if self.done is not None and self.usage_seen:
                    report.note(
                        "no finish_reason, but usage and data: [DONE] end the stream, as some "
                        "OpenAI-compatible servers send; clients read finish_reason None"
                    )
                    continue
                report.add(
                    "openai.chat.finish-reason",
                    f"choice {index} never got a finish_reason (truncated?)",
                    offset=end,
                )
            for t, tool in state.tools.items():
                joined = "".join(tool.arguments)
                try:
                    loads(joined)
                except ValueError:
                    shown = joined if len(joined) <= 60 else joined[:57] + "..."
                    report.at(
                        "openai.chat.tool-call-arguments",
                        tool.first_event,
                        f"the arguments of tool call {t} (choice {index}) do not parse as "
                        f"JSON: {shown!r}",
                    )
            if state.tools and state.finish_event is not None and state.finish != "tool_calls":
                report.at(
                    "openai.chat.tool-call-finish",
                    state.finish_event,
                    f"choice {index} made tool calls but finished with {state.finish!r}",
                )
        if self.request.include_usage and not self.usage_seen:
            report.add(
                "openai.chat.usage-chunk",
                "the request set stream_options.include_usage but no usage chunk came",
                offset=end,
            )
