"""Dialect detection: the report names the API a stream speaks, from the request URL's host,
else from markers in the first payloads."""

from __future__ import annotations

import json

import pytest

from replayproxy._core.check import StreamChecker
from replayproxy._core.check.dialect import DialectSniffer
from replayproxy._core.providers import vendor_from_url


def _chat(**fields: object) -> bytes:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "some-model",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}],
        **fields,
    }
    done = {"id": "x", "object": "chat.completion.chunk", "model": chunk["model"],
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # fmt: skip
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in (chunk, done)) + (
        b"data: [DONE]\n\n"
    )


def _dialect(provider: str, body: bytes, url: str | None = None) -> str:
    checker = StreamChecker(provider, url=url)
    checker.feed(body)
    checker.close()
    return checker.dialect


@pytest.mark.parametrize(
    ("url", "vendor"),
    [
        ("https://us-central1-aiplatform.googleapis.com/v1/x:streamGenerateContent", "Vertex AI"),
        ("https://bedrock-mantle.us-east-1.api.aws/v1/chat/completions", "Bedrock Mantle"),
        ("https://bedrock-runtime.us-east-1.api.aws/model/m/converse", None),  # dual-stack
        ("https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1/chat/completions", "Bedrock"),
        ("https://router.huggingface.co/v1/chat/completions", "Hugging Face"),
        ("https://router.huggingface.co/fireworks-ai/v1/chat/completions", "Fireworks"),
        ("https://router.huggingface.co/hf-inference/models/m/v1/chat/completions", "Hugging Face"),
        ("http://localhost:8000/v1/chat/completions", "vLLM"),
        ("https://example.com/v1/chat/completions", None),
        ("https://example.com:11434/v1/chat/completions", "Ollama"),  # no host rule: the port
        ("http://[::1:bad/", None),
        (None, None),
    ],
)
def test_vendor_from_url_at_the_edges(url: str | None, vendor: str | None) -> None:
    """A region before a dash, a host prefix, a router's route (or the router itself), a local
    port when no host names one; nothing for an unknown or malformed URL. (Every vendor's own
    rules are checked from the registry in tests/core/providers/test_vendors.py.)"""
    found = vendor_from_url(url)
    assert (found.name if found else None) == vendor


@pytest.mark.parametrize(
    ("fields", "dialect"),
    [
        ({"x_groq": {"id": "req_1"}}, "OpenAI-compatible (Groq)"),
        ({"model": "deepseek-chat"}, "OpenAI-compatible (DeepSeek)"),
        ({"model": "gpt-4o-mini"}, "OpenAI"),
        ({"obfuscation": "abc"}, "OpenAI"),
        ({"model": "gpt-4o-mini", "x_groq": {}}, "OpenAI-compatible (Groq)"),
        ({}, "OpenAI-compatible"),
    ],
)
def test_chat_dialect_from_payload_markers(fields: dict[str, object], dialect: str) -> None:
    """Without a URL, fields only one vendor sends, then the model name, tell the dialect;
    OpenAI's own names only when no other vendor's are seen."""
    assert _dialect("openai-chat", _chat(**fields)) == dialect


def test_url_wins_over_payload_markers() -> None:
    """The request URL's host is the stronger evidence: a DeepSeek model served by Groq is Groq."""
    body = _chat(model="deepseek-r1-distill-llama-70b")
    assert _dialect("openai-chat", body) == "OpenAI-compatible (DeepSeek)"
    assert _dialect("openai-chat", body, "https://api.groq.com/openai/v1/chat/completions") == (
        "OpenAI-compatible (Groq)"
    )


@pytest.mark.parametrize(
    ("provider", "payload", "dialect"),
    [
        ("anthropic", {"type": "message_start", "message": {"id": "msg_vrtx_01"}},
         "Anthropic on Vertex AI"),
        ("anthropic", {"type": "message_start", "message": {"id": "msg_bdrk_01"}},
         "Anthropic on Bedrock"),
        ("anthropic", {"type": "message_start", "message": {"id": "msg_01"}}, "Anthropic"),
        ("gemini", {"candidates": [], "createTime": "2026-01-01T00:00:00Z"}, "Vertex AI (Gemini)"),
        ("gemini", {"candidates": []}, "Gemini"),
        ("openai-responses", {"type": "response.created", "response": {"model": "grok-4"}},
         "OpenAI-compatible (xAI)"),
        ("openai-responses", {"type": "response.created",
                              "response": {"model": "gpt-5", "content_filters": None}},
         "Azure OpenAI"),
        ("openai-responses", {"type": "response.created", "response": {"model": "gpt-5"}},
         "OpenAI"),
        ("bedrock-converse", {}, "Bedrock (ConverseStream)"),
        ("bedrock-invoke", {}, "Anthropic on Bedrock (InvokeModelWithResponseStream)"),
        ("sse", {}, "generic SSE"),
    ],
)  # fmt: skip
def test_dialect_of_each_provider_family(provider: str, payload: object, dialect: str) -> None:
    """Each provider family names its dialects (Anthropic on Vertex/Bedrock, Vertex Gemini,
    Azure and xAI Responses ...)."""
    sniffer = DialectSniffer(provider)
    sniffer.observe(payload)
    assert sniffer.name == dialect


def test_only_the_first_payloads_are_looked_at() -> None:
    """A marker after the first few payloads does not change the dialect (bounded work)."""
    sniffer = DialectSniffer("openai-chat")
    for _ in range(3):
        sniffer.observe({"model": "some-model"})
    sniffer.observe({"x_groq": {}})
    assert sniffer.name == "OpenAI-compatible"


def test_a_malformed_url_is_no_crash() -> None:
    """A URL urlsplit rejects (a bad IPv6 literal) names no vendor and detects nothing."""
    from replayproxy._core.providers import detect

    assert detect("http://[::1:bad/v1/chat/completions", "text/event-stream") == "sse"
    assert _dialect("openai-chat", _chat(), "http://[::1:bad/") == "OpenAI-compatible"


def test_claude_on_vertex_is_detected_and_named() -> None:
    """A Vertex AI streamRawPredict URL for an Anthropic model is the Anthropic grammar, and the
    dialect says where it runs."""
    from replayproxy._core.providers import detect

    url = (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/"
        "publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict"
    )
    assert detect(url, "text/event-stream") == "anthropic"
    body = b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'
    assert _dialect("anthropic", body, url) == "Anthropic on Vertex AI"


@pytest.mark.parametrize(
    ("url", "dialect"),
    [
        ("https://router.huggingface.co/cerebras/v1/chat/completions",
         "OpenAI-compatible (Cerebras)"),
        ("https://api.sambanova.ai/v1/chat/completions", "OpenAI-compatible (SambaNova)"),
        ("https://bedrock-mantle.us-east-1.api.aws/v1/chat/completions",
         "OpenAI-compatible (Bedrock Mantle)"),
        ("https://org-acct.snowflakecomputing.com/api/v2/cortex/v1/chat/completions",
         "OpenAI-compatible (Snowflake)"),
    ],
)  # fmt: skip
def test_the_host_names_the_dialect_before_the_payloads(url: str, dialect: str) -> None:
    """A host of an OpenAI-compatible server names it even when the payloads carry OpenAI's
    own markers (a gpt- model, service_tier), as Bedrock Mantle and Snowflake pass through."""
    body = _chat(model="gpt-4.1", service_tier="default")
    assert _dialect("openai-chat", body) == "OpenAI"
    assert _dialect("openai-chat", body, url) == dialect


def test_the_registry_apis_name_their_own_dialects() -> None:
    """Ollama's native API, Cohere v2 and the legacy /v1/complete name their dialects."""
    ollama = b'{"model":"m","message":{"role":"assistant","content":"hi"},"done":true}\n'
    assert _dialect("ollama", ollama, "http://localhost:11434/api/chat") == "Ollama"
    cohere = b'event: message-end\ndata: {"type":"message-end","delta":{}}\n\n'
    assert _dialect("cohere-v2", cohere, "https://api.cohere.com/v2/chat") == "Cohere"
    complete = (
        b'event: completion\ndata: {"type":"completion","completion":"",'
        b'"stop_reason":"stop_sequence"}\n\n'
    )
    assert _dialect("anthropic", complete) == "Anthropic (Text Completions)"
    assert _dialect("anthropic", complete, "https://api.anthropic.com/v1/complete") == (
        "Anthropic (Text Completions)"
    )


def test_another_vendors_marker_overrides_an_echoed_host_in_responses_too() -> None:
    """api.openai.com is also the URI of base-URL swaps: in a Responses stream, Azure's
    content_filters still names Azure OpenAI, as a marker does in Chat Completions."""
    sniffer = DialectSniffer("openai-responses", "https://api.openai.com/v1/responses")
    assert sniffer.name == "OpenAI"
    sniffer.observe({"type": "response.created", "response": {"content_filters": None}})
    assert sniffer.name == "Azure OpenAI"
