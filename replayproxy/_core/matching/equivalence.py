"""Provider-aware request equivalence: request bodies the provider documents as the same (pure).

Frameworks send the same request in another shape than the plain SDK that recorded a cassette:
the Vercel AI SDK, litellm and pydantic-ai send message content as one text part
(``[{"type": "text", "text": "Hello"}]``) where the SDK sent ``"Hello"``; some add
``tool_choice: "auto"`` next to their tools, or leave ``stream_options`` out. The provider
treats each pair the same, so the matcher should too.

Each :class:`Equivalence` is one row of :data:`EQUIVALENCES`: the provider API it applies to
(whose registry definition lists it by name), what it makes equal, and a pure function that
rewrites a parsed JSON body into a canonical form. :func:`canonical` applies the rows of the
API the registry tells from the path (:func:`replayproxy._core.providers.detect`); two bodies are
equivalent when their canonical forms are equal. The functions never mutate their input (the
matcher caches parsed bodies): they copy what they change. Why each row holds, with the
provider documentation it rests on, is in ``docs/guides/replay.md`` ("Equivalent requests").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replayproxy._core.providers import Provider, definition, detect

__all__ = ["EQUIVALENCES", "Equivalence", "canonical"]

Json = Any


@dataclass(frozen=True, slots=True)
class Equivalence:
    """One documented equivalence: on ``api`` requests, ``apply`` rewrites a body canonically."""

    name: str
    api: Provider
    """The provider API whose requests it applies to."""
    summary: str
    """What it makes equal, for ``docs/guides/replay.md`` and ``--help``."""
    apply: Callable[[Json], Json]


# -- helpers (copy on write) --------------------------------------------------------------------


def _map_messages(doc: Json, key: str, fn: Callable[[Json], Json]) -> Json:
    """``doc`` with ``fn`` applied to each item of the list ``doc[key]`` (a copy if changed)."""
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        return doc
    items = doc[key]
    mapped = [fn(item) for item in items]
    if all(a is b for a, b in zip(mapped, items, strict=True)):
        return doc
    return {**doc, key: mapped}


def _one_text_part(value: Json, part_types: tuple[str, ...]) -> str | None:
    """The text of a content array holding exactly one plain text part, else ``None``.

    A part with any other member (``cache_control``, ``annotations``, ...) is not plain.
    """
    if isinstance(value, list) and len(value) == 1:
        part = value[0]
        if (
            isinstance(part, dict)
            and set(part) == {"type", "text"}
            and part["type"] in part_types
            and isinstance(part["text"], str)
        ):
            return part["text"]
    return None


def _content_as_string(part_types: tuple[str, ...]) -> Callable[[Json], Json]:
    def fn(message: Json) -> Json:
        if not isinstance(message, dict):
            return message
        text = _one_text_part(message.get("content"), part_types)
        return message if text is None else {**message, "content": text}

    return fn


def _drop_if(doc: Json, key: str, keep: Callable[[Json, Json], bool]) -> Json:
    """``doc`` without ``key`` when ``keep(doc, doc[key])`` is false."""
    if isinstance(doc, dict) and key in doc and not keep(doc, doc[key]):
        return {k: v for k, v in doc.items() if k != key}
    return doc


def _has_tools(doc: Json) -> bool:
    return isinstance(doc.get("tools"), list) and len(doc["tools"]) > 0


# -- OpenAI Chat Completions -------------------------------------------------------------------


def _chat_text_parts(doc: Json) -> Json:
    return _map_messages(doc, "messages", _content_as_string(("text",)))


def _chat_tool_choice_auto(doc: Json) -> Json:
    return _drop_if(doc, "tool_choice", lambda d, v: not (v == "auto" and _has_tools(d)))


def _chat_stream_options_usage(doc: Json) -> Json:
    def keep(d: Json, v: Json) -> bool:
        only_usage = isinstance(v, dict) and set(v) <= {"include_usage"}
        return not only_usage

    return _drop_if(doc, "stream_options", keep)


_CHAT_DEFAULTS: dict[str, int] = {"n": 1, "presence_penalty": 0, "frequency_penalty": 0}


def _is_number(value: Json, number: int) -> bool:
    # 0 and 0.0 are the same JSON number; true is not 1.
    return not isinstance(value, bool) and isinstance(value, int | float) and value == number


def _chat_defaults(doc: Json) -> Json:
    for key, default in _CHAT_DEFAULTS.items():
        if isinstance(doc, dict) and key in doc and _is_number(doc[key], default):
            doc = {k: v for k, v in doc.items() if k != key}
    return doc


# -- OpenAI Responses --------------------------------------------------------------------------


def _responses_input(doc: Json) -> Json:
    if not isinstance(doc, dict) or "input" not in doc:
        return doc
    items = doc["input"]
    if not isinstance(items, list):
        return doc

    def message(item: Json) -> Json:
        if not isinstance(item, dict) or "role" not in item:
            return item
        if item.get("type") == "message":  # optional on input messages: always "message"
            item = {k: v for k, v in item.items() if k != "type"}
        text = _one_text_part(item.get("content"), ("input_text",))
        if text is not None:
            item = {**item, "content": text}
        return item

    mapped = [message(i) for i in items]
    # A string input "is equivalent to a text input with the user role".
    if (
        len(mapped) == 1
        and isinstance(mapped[0], dict)
        and mapped[0] == {"role": "user", "content": mapped[0].get("content")}
        and isinstance(mapped[0]["content"], str)
    ):
        return {**doc, "input": mapped[0]["content"]}
    if all(a is b for a, b in zip(mapped, items, strict=True)):
        return doc
    return {**doc, "input": mapped}


def _responses_tool_choice_auto(doc: Json) -> Json:
    return _drop_if(doc, "tool_choice", lambda d, v: not (v == "auto" and _has_tools(d)))


# -- Anthropic Messages ------------------------------------------------------------------------


def _anthropic_text_blocks(doc: Json) -> Json:
    doc = _map_messages(doc, "messages", _content_as_string(("text",)))
    if isinstance(doc, dict) and "system" in doc:
        text = _one_text_part(doc["system"], ("text",))
        if text is not None:
            doc = {**doc, "system": text}
    return doc


def _anthropic_tool_choice_auto(doc: Json) -> Json:
    return _drop_if(doc, "tool_choice", lambda d, v: not (v == {"type": "auto"} and _has_tools(d)))


EQUIVALENCES: tuple[Equivalence, ...] = (
    Equivalence(
        "text-part",
        Provider.OPENAI_CHAT,
        'message content "Hello" = [{"type": "text", "text": "Hello"}]',
        _chat_text_parts,
    ),
    Equivalence(
        "tool-choice-auto",
        Provider.OPENAI_CHAT,
        'tool_choice "auto" = absent, when tools are given',
        _chat_tool_choice_auto,
    ),
    Equivalence(
        "stream-options-usage",
        Provider.OPENAI_CHAT,
        "stream_options holding only include_usage = absent",
        _chat_stream_options_usage,
    ),
    Equivalence(
        "documented-defaults",
        Provider.OPENAI_CHAT,
        "n 1, presence_penalty 0, frequency_penalty 0 = absent",
        _chat_defaults,
    ),
    Equivalence(
        "input-text",
        Provider.OPENAI_RESPONSES,
        'input "Hello" = [{"role": "user", "content": "Hello"}] = one input_text part; '
        'type "message" = absent',
        _responses_input,
    ),
    Equivalence(
        "tool-choice-auto",
        Provider.OPENAI_RESPONSES,
        'tool_choice "auto" = absent, when tools are given',
        _responses_tool_choice_auto,
    ),
    Equivalence(
        "text-block",
        Provider.ANTHROPIC,
        'content and system "Hello" = [{"type": "text", "text": "Hello"}]',
        _anthropic_text_blocks,
    ),
    Equivalence(
        "tool-choice-auto",
        Provider.ANTHROPIC,
        'tool_choice {"type": "auto"} = absent, when tools are given',
        _anthropic_tool_choice_auto,
    ),
)
"""Every equivalence, in the order they are applied."""


def canonical(path: str, doc: Json) -> Json:
    """``doc`` (a parsed JSON body sent to ``path``) in canonical form; unchanged elsewhere."""
    api = detect(path)
    if api is None:
        return doc
    names = definition(api).equivalences
    for rule in EQUIVALENCES:
        if rule.api is api and rule.name in names:
            doc = rule.apply(doc)
    return doc
