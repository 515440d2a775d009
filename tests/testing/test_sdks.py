"""Real provider SDKs (openai, anthropic) stream from the simulator and get the expected text."""

from __future__ import annotations

import json
import ssl

import anthropic
import httpx
import openai
import pytest

from replayproxy.testing import STREAMS, Simulator, expected_text

MESSAGES = [{"role": "user", "content": "hi"}]


def _openai(sim: Simulator, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim.url + "/v1", api_key="sk-test", max_retries=0, **kw)  # type: ignore[arg-type]


def _anthropic(sim: Simulator, **kw: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=sim.url, api_key="sk-ant-test", max_retries=0, **kw)  # type: ignore[arg-type]


def test_openai_chat_stream(simulator: Simulator) -> None:
    """openai streams chat completions and reassembles the whole text."""
    with _openai(simulator) as client:
        stream = client.chat.completions.create(
            model="gpt-4.1-nano", messages=MESSAGES, stream=True
        )  # type: ignore[arg-type]
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == expected_text(STREAMS["openai-chat-text"])
    served = simulator.wait_served(1)[0]
    assert served.request.path == "/v1/chat/completions"
    assert served.request.header("authorization") == "Bearer sk-test"


def test_openai_chat_over_https(
    tls_simulator: Simulator, ssl_client_context: ssl.SSLContext
) -> None:
    """openai streams through HTTPS when its httpx client trusts the trustme CA."""
    http = httpx.Client(verify=ssl_client_context)
    with _openai(tls_simulator, http_client=http) as client:
        stream = client.chat.completions.create(
            model="gpt-4.1-nano", messages=MESSAGES, stream=True
        )  # type: ignore[arg-type]
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == expected_text(STREAMS["openai-chat-text"])


def test_openai_tool_call_and_non_streaming(simulator: Simulator) -> None:
    """openai gets the streamed tool call arguments, and a non-streaming completion."""
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {}}}]
    with _openai(simulator) as client:
        stream = client.chat.completions.create(
            model="grok-3-mini",
            messages=MESSAGES,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
            stream=True,
        )
        args = "".join(
            tc.function.arguments or ""
            for c in stream
            for ch in c.choices
            for tc in ch.delta.tool_calls or []
            if tc.function
        )
        whole = client.chat.completions.create(model="gpt-4.1-nano", messages=MESSAGES)  # type: ignore[arg-type]
    assert json.loads(args) == {"location": "San Francisco"}
    assert whole.choices[0].message.content == expected_text(STREAMS["openai-chat-text"])


def test_openai_responses_stream(simulator: Simulator) -> None:
    """openai streams the Responses API (named events, no [DONE]) to a completed response."""
    with _openai(simulator) as client:
        events = list(client.responses.create(model="gpt-5-mini", input="news?", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == expected_text(STREAMS["openai-responses"])
    assert events[-1].type == "response.completed"


def test_openai_reset_is_connection_error(simulator: Simulator) -> None:
    """A mid-stream reset surfaces in openai as a connection error."""
    with _openai(simulator, default_headers={"x-sim-reset-after": "5"}) as client:
        stream = client.chat.completions.create(
            model="gpt-4.1-nano", messages=MESSAGES, stream=True
        )  # type: ignore[arg-type]
        # openai 3.x wraps it in APIConnectionError; 2.x lets httpx.ReadError through mid-stream.
        with pytest.raises((openai.APIConnectionError, httpx.ReadError)):
            for _ in stream:
                pass
    assert simulator.wait_served(1)[0].finish == "reset"


def test_anthropic_text_stream(simulator: Simulator) -> None:
    """anthropic streams Messages (with a ping) and reassembles the whole text."""
    with (
        _anthropic(simulator) as client,
        client.messages.stream(
            model="claude-sim-text",
            max_tokens=100,
            messages=MESSAGES,  # type: ignore[arg-type]
        ) as stream,
    ):
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == expected_text(STREAMS["anthropic-text"])
    assert final.stop_reason == "end_turn"
    req = simulator.wait_served(1)[0].request
    # anthropic < 1 sends x-api-key, newer versions send a bearer token.
    assert "sk-ant-test" in (req.header("x-api-key") or req.header("authorization") or "")


def test_anthropic_tool_use_stream(simulator: Simulator) -> None:
    """anthropic accumulates input_json_delta pieces into the tool_use input."""
    tools = [{"name": "json", "description": "d", "input_schema": {"type": "object"}}]
    with (
        _anthropic(simulator) as client,
        client.messages.stream(
            model="claude-sim-tools",
            max_tokens=100,
            messages=MESSAGES,
            tools=tools,  # type: ignore[arg-type]
        ) as stream,
    ):
        final = stream.get_final_message()
    block = final.content[0]
    assert block.type == "tool_use"
    assert block.input == json.loads(expected_text(STREAMS["anthropic-tool-use"]))


def test_anthropic_status_error(simulator: Simulator) -> None:
    """x-sim-status 529 gives anthropic an HTTP 529 with its overloaded_error body."""
    client = _anthropic(simulator, default_headers={"x-sim-status": "529"})
    with client, pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(model="claude-sim-text", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
    assert info.value.status_code == 529
    assert "overloaded_error" in str(info.value.body)
