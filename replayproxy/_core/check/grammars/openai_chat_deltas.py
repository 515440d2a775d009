"""The per-choice part of the OpenAI Chat grammar (:mod:`.openai_chat`): a choice's state,
and the checks of one delta's fields (content and annotations types, tool calls by index) that
openai-python's ``accumulate_delta`` and its users' code rely on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.check.base import Report, StreamEvent

__all__ = ["Choice", "delta_shapes", "has_content", "tool_calls"]


@dataclass
class _Tool:
    first_event: StreamEvent
    arguments: list[str] = field(default_factory=list)


@dataclass
class Choice:
    finish: str | None = None
    finish_event: StreamEvent | None = None
    after_finish_reported: bool = False
    annotated: bool = False  # a delta carried annotations: the helper now merges by index
    tools: dict[int, _Tool] = field(default_factory=dict)


def has_content(delta: dict[str, Any]) -> bool:
    # role is not content: a role repeated after the finish is openai.chat.role-repeated's
    return any(v not in (None, "", [], {}) for k, v in delta.items() if k != "role")


def delta_shapes(report: Report, ev: StreamEvent, index: int, state: Choice, delta: Any) -> None:
    """The delta fields openai-python's code and its users' code assume a type for."""
    content = delta.get("content")
    if content is not None and not isinstance(content, str):
        report.at(
            "openai.chat.content-type",
            ev,
            f"delta.content of choice {index} is a JSON {type(content).__name__}, not a "
            "string (as Mistral's Magistral reasoning models send); the usual "
            "`text += delta.content` raises TypeError and the .stream() helper "
            "drops it",
        )
    annotations = delta.get("annotations")
    if not isinstance(annotations, list) or not annotations:
        return
    if state.annotated:  # accumulate_delta merges a second list by each entry's index
        unindexed = [
            i
            for i, a in enumerate(annotations)
            if not (isinstance(a, dict) and isinstance(a.get("index"), int))
        ]
        if unindexed:
            report.at(
                "openai.chat.annotation-index",
                ev,
                f"delta.annotations entry {unindexed[0]} of choice {index} has no integer "
                "index after an earlier annotations delta; openai-python's .stream() helper raises "
                "RuntimeError 'Expected list delta entry to have an `index` key'",
            )
    state.annotated = True


def tool_calls(report: Report, ev: StreamEvent, index: int, state: Choice, calls: Any) -> None:
    if not isinstance(calls, list):
        return
    for call in calls:
        if not isinstance(call, dict):
            continue
        t = call.get("index")
        if not isinstance(t, int):
            report.at(
                "openai.chat.tool-call-index",
                ev,
                "a tool call has no integer index (as Mistral sends); openai-python's "
                "stream helper raises TypeError on it",
            )
            continue
        fn = call.get("function")
        fn = fn if isinstance(fn, dict) else {}
        tool = state.tools.get(t)
        if tool is None:
            if t != len(state.tools):
                report.at(
                    "openai.chat.tool-call-index",
                    ev,
                    f"tool call {t} of choice {index} appears before tool call {len(state.tools)}",
                )
            missing = [
                what
                for what, ok in (
                    ("id", bool(call.get("id"))),
                    ("type 'function'", call.get("type") == "function"),
                    ("function.name", bool(fn.get("name"))),
                )
                if not ok
            ]
            if missing:
                report.at(
                    "openai.chat.tool-call-first",
                    ev,
                    f"the first delta of tool call {t} (choice {index}) lacks "
                    + ", ".join(missing),
                )
            tool = state.tools[t] = _Tool(ev)
        else:
            repeated = [k for k in ("id",) if call.get(k)] + (
                ["function.name"] if fn.get("name") else []
            )
            if repeated:
                report.at(
                    "openai.chat.tool-call-repeat",
                    ev,
                    f"tool call {t} (choice {index}) repeats {', '.join(repeated)}; "
                    "openai-python concatenates it",
                )
        arguments = fn.get("arguments")
        if isinstance(arguments, str):
            tool.arguments.append(arguments)
