"""Real SDKs against the shipped cassettes, in both proxy modes: a miss reaches the SDK's
exception as the full explanation (once: no retries), and requests a framework shapes
differently (one text part instead of a string) match through provider-aware equivalence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import requests

from replayproxy import _store as store
from tests.replay.conftest import ReplayTarget

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"


def body_of(name: str) -> dict[str, Any]:
    (it,) = store.load(CASSETTES / f"{name}.cassette").interactions
    doc: dict[str, Any] = json.loads(it.request.body)
    return doc


def openai_client(target: ReplayTarget, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=target.base_url + "/v1", api_key="sk-test", **kw)


def anthropic_client(target: ReplayTarget, **kw: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=target.base_url, api_key="sk-ant-test", **kw)


def test_openai_sdk_exception_carries_every_difference_and_the_fix(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """openai's APIStatusError names all differing fields and the options; one request only."""
    session = replay_proxy.serve(CASSETTES / "openai-chat-text.cassette")
    request = body_of("openai-chat-text") | {"temperature": 0.2, "max_tokens": 50, "user": "u1"}
    with pytest.raises(openai.InternalServerError) as caught:
        # Default max_retries (2): x-should-retry: false keeps one miss one request.
        openai_client(replay_proxy).chat.completions.create(**request)
    e = caught.value
    # The SDK orders the members; the options follow the request's order.
    fixes = [f"--ignore-body-field /{name}" for name in ("temperature", "max_tokens", "user")]
    assert all(fix in str(e) for fix in fixes)
    assert "to match it, add: --ignore-body-field" in str(e)
    assert isinstance(e.body, dict) and "closest recorded interaction: #0" in e.body["message"]
    assert "differs in 3 places" in e.body["message"]  # the three fields (the host is not compared)
    assert e.response.headers["x-replayproxy-unmatched"] == "1"
    short = e.response.headers["x-replayproxy-explanation"]
    assert short.startswith("nearest #0 differs in /") and all(f in short for f in fixes)
    assert len(session.misses) == 1


def test_anthropic_sdk_exception_carries_the_explanation(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """anthropic's error message contains the explanation, in its error shape; no retries."""
    session = replay_proxy.serve(CASSETTES / "anthropic-text.cassette")
    # (anthropic 2.x has no `temperature` argument any more: stop_sequences exists in all.)
    request = body_of("anthropic-text") | {"max_tokens": 7, "stop_sequences": ["END"]}
    with pytest.raises(anthropic.InternalServerError) as caught:
        anthropic_client(replay_proxy).messages.create(**request)
    e = caught.value
    assert "--ignore-body-field /max_tokens" in str(e)
    assert "--ignore-body-field /stop_sequences" in str(e)
    assert isinstance(e.body, dict) and e.body["type"] == "error"
    assert "body at /max_tokens: recorded 1024, requested 7" in e.body["error"]["message"]
    assert len(session.misses) == 1


def test_openai_responses_sdk_exception_carries_the_explanation(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """A Responses request differing in /include and /tool_choice gets both named at once."""
    replay_proxy.serve(CASSETTES / "openai-responses.cassette")
    request = body_of("openai-responses") | {
        "include": ["reasoning.encrypted_content"],
        "tool_choice": "required",
    }
    with pytest.raises(openai.InternalServerError) as caught:
        openai_client(replay_proxy).responses.create(**request)
    assert "--ignore-body-field /include" in str(caught.value)
    assert "--ignore-body-field /tool_choice" in str(caught.value)


@pytest.mark.parametrize("equivalence", [True, False])
def test_openai_chat_text_parts_match_a_string_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str], equivalence: bool
) -> None:
    """The SDK sending one text part replays a string-content recording (not when exact)."""
    replay_proxy.serve(CASSETTES / "openai-chat-text.cassette", equivalence=equivalence)
    request = body_of("openai-chat-text")
    text = request["messages"][0]["content"]
    request["messages"][0]["content"] = [{"type": "text", "text": text}]
    del request["stream_options"]  # as langchain-openai sends it with a custom base URL
    client = openai_client(replay_proxy, max_retries=0)
    if not equivalence:
        with pytest.raises(openai.InternalServerError, match="/messages/0/content"):
            client.chat.completions.create(**request)
        return
    chunks = list(client.chat.completions.create(**request))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


@pytest.mark.parametrize("equivalence", [True, False])
def test_anthropic_text_blocks_match_a_string_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str], equivalence: bool
) -> None:
    """The anthropic SDK sending a text block replays a string-content recording."""
    replay_proxy.serve(CASSETTES / "anthropic-text.cassette", equivalence=equivalence)
    request = body_of("anthropic-text")
    text = request["messages"][0]["content"]
    request["messages"][0]["content"] = [{"type": "text", "text": text}]
    client = anthropic_client(replay_proxy, max_retries=0)
    if not equivalence:
        with pytest.raises(anthropic.InternalServerError, match="/messages/0/content"):
            client.messages.create(**request)
        return
    events = list(client.messages.create(**request))
    assert events[-1].type == "message_stop"


@pytest.mark.parametrize("equivalence", [True, False])
def test_responses_input_parts_match_a_string_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str], equivalence: bool
) -> None:
    """Responses input as a user message with one input_text part replays a string input."""
    replay_proxy.serve(CASSETTES / "openai-responses.cassette", equivalence=equivalence)
    request = body_of("openai-responses")
    request["input"] = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": request["input"]}],
        }
    ]
    client = openai_client(replay_proxy, max_retries=0)
    if not equivalence:
        with pytest.raises(openai.InternalServerError, match="/input"):
            client.responses.create(**request)
        return
    events = list(client.responses.create(**request))
    assert events[-1].type == "response.completed"


def test_httpx_and_requests_see_the_provider_error_shapes(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """Gemini misses get Google's error shape, other paths OpenAI's; both are JSON."""
    replay_proxy.serve(CASSETTES / "gemini-text.cassette")
    url = replay_proxy.base_url + "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"
    r = httpx.post(url + "?alt=sse", json={"contents": []}, timeout=10)
    assert r.status_code == 500 and r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error["status"] == "INTERNAL" and error["code"] == 500
    assert "--ignore-body-field /contents/0" in error["message"]
    r2 = requests.get(replay_proxy.base_url + "/model_prices.json", timeout=10)
    assert r2.status_code == 500 and r2.headers["x-replayproxy-unmatched"] == "1"
    message = r2.json()["error"]["message"]
    assert "method: recorded POST, requested GET" in message
    assert "no option makes a different method, path or body match" in message
