"""JSON nesting is bounded in matching and checking: deep documents are "not JSON", never a
RecursionError (the 2 KB body of 1000 ``[`` that made replay fail open)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Request
from replayproxy._core.check import PROVIDERS, check_body
from replayproxy._core.json import limits
from replayproxy._core.json.limits import MAX_JSON_DEPTH, JSONTooDeep
from replayproxy._core.matching.differences import diff_requests
from replayproxy._core.matching.matcher import Hit, Matcher, Miss
from replayproxy._core.wire import eventstream
from replayproxy.testing import CHAT_URL, interaction


def nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


def _depth(doc: Any) -> int:
    """Reference: the nesting depth, recursively (only for small test documents)."""
    if isinstance(doc, dict):
        return 1 + max((_depth(v) for v in doc.values()), default=0)
    if isinstance(doc, list):
        return 1 + max((_depth(v) for v in doc), default=0)
    return 0


json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=30,
)


@given(json_docs, st.integers(0, 12))
def test_depth_exceeds_agrees_with_a_recursive_count(doc: Any, limit: int) -> None:
    """depth_exceeds (iterative) says the same as counting the nesting recursively."""
    assert limits.depth_exceeds(doc, limit) == (_depth(doc) > limit)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 100_000])
def test_loads_refuses_deep_documents_with_a_value_error(depth: int) -> None:
    """Beyond the limit (or the C decoder's own guard) loads raises JSONTooDeep, a ValueError."""
    with pytest.raises(JSONTooDeep, match=f"deeper than {MAX_JSON_DEPTH}"):
        limits.loads(nested(depth))
    assert issubclass(JSONTooDeep, json.JSONDecodeError)  # callers catching it keep working


def test_loads_accepts_the_limit() -> None:
    """A document exactly MAX_JSON_DEPTH deep parses, arrays and objects alike."""
    assert limits.loads(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    doc = '{"a":' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH
    assert limits.loads(doc.encode()) == json.loads(doc)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 50_000])
def test_matching_a_deep_body_is_a_miss_not_an_exception(depth: int) -> None:
    """A deep request body is compared as bytes: a miss with an explanation, or a hit when the
    recorded body has the very same bytes."""
    deep = nested(depth).encode()
    matcher = Matcher([interaction([b"data: 1\n\n"]), interaction([b"data: 2\n\n"], body=deep)])
    other = nested(depth, '{"a":[', "]}").encode()
    miss = matcher.match(Request("POST", CHAT_URL, body=other))
    assert isinstance(miss, Miss) and miss.differences
    assert "bytes" in str(miss.differences[-1])
    assert isinstance(matcher.match(Request("POST", CHAT_URL, body=deep)), Hit)
    assert diff_requests(
        Request("POST", CHAT_URL, body=deep), Request("POST", CHAT_URL, body=other)
    )


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("depth", [1000, 50_000])
def test_the_checker_reports_a_deep_payload_instead_of_raising(provider: str, depth: int) -> None:
    """Every provider's checker turns a deeply nested event payload into violations."""
    deep = nested(depth).encode()
    if provider.startswith("bedrock"):
        import base64

        inner = b'{"bytes":"' + base64.b64encode(deep) + b'"}'
        name, payload = ("chunk", inner) if provider == "bedrock-invoke" else ("messageStart", deep)
        body = eventstream.encode_event(name, payload)
        content_type = "application/vnd.amazon.eventstream"
    else:
        body = b"data: " + deep + b"\n\n"
        content_type = "text/event-stream"
    assert check_body(body, provider, content_type=content_type)


def test_the_checker_reports_deep_tool_arguments() -> None:
    """Deep JSON in joined tool-call arguments (OpenAI) is reported, not raised."""
    call = {
        "index": 0,
        "id": "t",
        "type": "function",
        "function": {"name": "f", "arguments": nested(5000)},
    }
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}],
    }
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    violations = check_body(body, "openai-chat", content_type="text/event-stream")
    assert any(v.rule == "openai.chat.tool-call-arguments" for v in violations), violations


def test_too_deep_is_a_json_decode_error_that_says_so() -> None:
    """Callers catching json.JSONDecodeError catch it too; the message names the limit."""
    err = JSONTooDeep(128)
    assert isinstance(err, json.JSONDecodeError)
    assert (err.msg, err.doc, err.pos) == ("JSON nested deeper than 128 levels", "", 0)
