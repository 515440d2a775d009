"""Provider-aware request equivalence: documented-identical requests match, nothing else does.

Each row pairs a body as the plain SDK recorded it with the same request as a framework sends
it (shapes taken from the Vercel AI SDK, litellm, pydantic-ai and langchain-openai requests
described in issue 15 and docs/guides/replay.md).
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.matching.differences import MatchOptions, diff_requests
from replayproxy._core.matching.equivalence import EQUIVALENCES, canonical
from replayproxy._core.matching.matcher import Hit, Matcher, Miss
from replayproxy._core.providers import detect

CHAT = "https://api.openai.com/v1/chat/completions"
RESPONSES = "https://api.openai.com/v1/responses"
MESSAGES = "https://api.anthropic.com/v1/messages"

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
A_TOOLS = [{"name": "f", "input_schema": {"type": "object"}}]
R_TOOLS = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]


def req(url: str, body: object) -> Request:
    return Request("POST", url, body=json.dumps(body).encode())


def user(content: object) -> list[object]:
    return [{"role": "user", "content": content}]


def part(text: str, kind: str = "text") -> list[object]:
    return [{"type": kind, "text": text}]


SAME = [
    pytest.param(
        CHAT,
        {"model": "m", "messages": user("Hello"), "stream": True},
        {"model": "m", "messages": user(part("Hello")), "stream": True},
        id="openai-chat: AI SDK / litellm text part",
    ),
    pytest.param(
        CHAT,
        {"model": "m", "messages": user("Hi"), "tools": TOOLS},
        {"model": "m", "messages": user("Hi"), "tools": TOOLS, "tool_choice": "auto"},
        id="openai-chat: tool_choice auto with tools",
    ),
    pytest.param(
        CHAT,
        {
            "model": "m",
            "messages": user("Hi"),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        {"model": "m", "messages": user("Hi"), "stream": True},
        id="openai-chat: langchain-openai without stream_options",
    ),
    pytest.param(
        CHAT,
        {"model": "m", "messages": user("Hi")},
        {
            "model": "m",
            "messages": user("Hi"),
            "n": 1,
            "presence_penalty": 0.0,
            "frequency_penalty": 0,
        },
        id="openai-chat: documented defaults",
    ),
    pytest.param(
        RESPONSES,
        {"model": "m", "input": "Hello", "stream": True},
        {"model": "m", "input": user(part("Hello", "input_text")), "stream": True},
        id="openai-responses: AI SDK input_text part",
    ),
    pytest.param(
        RESPONSES,
        {"model": "m", "input": [{"role": "user", "content": "Hello"}]},
        {"model": "m", "input": [{"type": "message", "role": "user", "content": "Hello"}]},
        id="openai-responses: type message",
    ),
    pytest.param(
        RESPONSES,
        {"model": "m", "input": "Hi", "tools": R_TOOLS},
        {"model": "m", "input": "Hi", "tools": R_TOOLS, "tool_choice": "auto"},
        id="openai-responses: tool_choice auto with tools",
    ),
    pytest.param(
        MESSAGES,
        {"model": "c", "max_tokens": 9, "messages": user("Hello"), "system": "Be brief"},
        {
            "model": "c",
            "max_tokens": 9,
            "messages": user(part("Hello")),
            "system": part("Be brief"),
        },
        id="anthropic: AI SDK / pydantic-ai text blocks",
    ),
    pytest.param(
        MESSAGES,
        {"model": "c", "max_tokens": 9, "messages": user("Hi"), "tools": A_TOOLS},
        {
            "model": "c",
            "max_tokens": 9,
            "messages": user("Hi"),
            "tools": A_TOOLS,
            "tool_choice": {"type": "auto"},
        },
        id="anthropic: tool_choice auto with tools",
    ),
]

DIFFERENT = [
    pytest.param(
        CHAT, {"messages": user("Hello")}, {"messages": user(part("Hullo"))}, id="other text"
    ),
    pytest.param(
        CHAT,
        {"messages": user("Hello world")},
        {"messages": user(part("Hello ") + part("world"))},
        id="two parts are not one string",
    ),
    pytest.param(
        MESSAGES,
        {"messages": user("Hello")},
        {
            "messages": user(
                [{"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}]
            )
        },
        id="a part with cache_control is not plain text",
    ),
    pytest.param(
        CHAT, {"messages": []}, {"messages": [], "tool_choice": "auto"}, id="auto without tools"
    ),
    pytest.param(
        CHAT, {"tools": TOOLS}, {"tools": TOOLS, "tool_choice": "required"}, id="required"
    ),
    pytest.param(CHAT, {"n": 2}, {}, id="n 2 is not the default"),
    pytest.param(CHAT, {}, {"n": True}, id="true is not 1"),
    pytest.param(
        CHAT,
        {"stream_options": {"include_usage": True, "x": 1}},
        {},
        id="stream_options with more than usage",
    ),
    pytest.param(
        RESPONSES,
        {"input": "Hello"},
        {"input": [{"role": "system", "content": "Hello"}]},
        id="a system input is not the string input",
    ),
    pytest.param(
        "https://api.openai.com/v1/embeddings",
        {"input": [{"role": "user", "content": part("x")}]},
        {"input": [{"role": "user", "content": "x"}]},
        id="no equivalence on other paths",
    ),
]


def interactions(*requests: Request) -> list[Interaction]:
    return [Interaction(r, None, Ending(EndKind.NO_RESPONSE, 0)) for r in requests]


@pytest.mark.parametrize(("url", "recorded", "requested"), SAME)
def test_documented_equivalents_match_both_ways_unless_turned_off(
    url: str, recorded: object, requested: object
) -> None:
    """Each equivalent pair matches in both directions; equivalence=False tells them apart."""
    a, b = req(url, recorded), req(url, requested)
    assert diff_requests(a, b) == () and diff_requests(b, a) == ()
    assert isinstance(Matcher(interactions(a)).match(b), Hit)
    assert isinstance(Matcher(interactions(b)).match(a), Hit)
    exact = MatchOptions(equivalence=False)
    assert diff_requests(a, b, exact) != ()
    assert isinstance(Matcher(interactions(a), exact).match(b), Miss)


@pytest.mark.parametrize(("url", "recorded", "requested"), DIFFERENT)
def test_near_equivalents_still_differ(url: str, recorded: object, requested: object) -> None:
    """What the provider does not document as identical stays a difference."""
    assert diff_requests(req(url, recorded), req(url, requested)) != ()


def test_every_equivalence_has_a_matching_case() -> None:
    """Each row of the table is exercised by a SAME case (turning any row off fails one)."""
    for rule in EQUIVALENCES:
        hits = 0
        for case in SAME:
            url, recorded, requested = case.values
            path = url.split(".com", 1)[1]
            if detect(path) != rule.api:
                continue
            assert isinstance(recorded, dict) and isinstance(requested, dict)
            if rule.apply(requested) != requested or rule.apply(recorded) != recorded:
                hits += 1
        assert hits, rule


def test_explanations_show_the_canonical_form() -> None:
    """A real difference inside an equivalent shape is reported once, at the text."""
    rec = req(MESSAGES, {"messages": user("Hello")})
    miss = Matcher(interactions(rec)).match(req(MESSAGES, {"messages": user(part("Bye"))}))
    assert isinstance(miss, Miss)
    assert [d.pointer for d in miss.differences] == ["/messages/0/content"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.sampled_from(["auto", "text", "input_text", "user", "message"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "text",
                    "role",
                    "content",
                    "input",
                    "messages",
                    "tools",
                    "tool_choice",
                    "system",
                    "n",
                    "stream_options",
                    "include_usage",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@given(
    st.sampled_from(["/v1/chat/completions", "/v1/responses", "/v1/messages", "/other"]),
    json_values,
)
@example("/v1/responses", {"input": [None]})  # a lone non-object input item (found by hypothesis)
def test_canonical_is_pure_and_idempotent(path: str, doc: object) -> None:
    """canonical never mutates its input and applying it twice changes nothing more."""
    before = copy.deepcopy(doc)
    once = canonical(path, doc)
    assert doc == before
    assert canonical(path, once) == once


def test_responses_input_is_normalised_when_every_item_changes() -> None:
    """Every input message carrying the optional type "message" (and one input_text part)
    reads the same as without: each item is rewritten, the untouched ones kept as they are."""
    typed = {
        "model": "m",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
            {"type": "message", "role": "assistant", "content": "b"},
        ],
    }
    plain = {"model": "m", "input": [{"role": "user", "content": "a"},
                                     {"role": "assistant", "content": "b"}]}  # fmt: skip
    assert canonical("/v1/responses", typed) == plain
    untouched = {"model": "m", "input": [{"role": "user", "content": "a"}, "x"]}
    assert canonical("/v1/responses", untouched) is untouched
