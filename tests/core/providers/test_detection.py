"""Provider detection from a request and its response content type, and provider names."""

from __future__ import annotations

import pytest

from replayproxy._core.check import PROVIDERS
from replayproxy._core.providers import detect, parse
from replayproxy._errors import UsageError


@pytest.mark.parametrize(
    ("url", "content_type", "headers", "expected"),
    [
        ("https://api.openai.com/v1/chat/completions", "text/event-stream", None, "openai-chat"),
        ("http://127.0.0.1:9/v1/chat/completions/", None, None, "openai-chat"),
        ("https://api.openai.com/v1/responses", "text/event-stream; charset=utf-8", None,
         "openai-responses"),
        ("https://api.anthropic.com/v1/messages", "text/event-stream", None, "anthropic"),
        ("https://proxy.example/llm", "text/event-stream", {"Anthropic-Version": "2023-06-01"},
         "anthropic"),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse",
         "text/event-stream", None, "gemini"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream", None, None,
         "bedrock-converse"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke-with-response-stream",
         "application/vnd.amazon.eventstream", None, "bedrock-invoke"),
        ("https://example.com/whatever", "application/vnd.amazon.eventstream", None,
         "bedrock-converse"),
        ("https://example.com/events", "text/event-stream", None, "sse"),
        ("https://api.openai.com/v1/chat/completions", "application/json", None, None),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent",
         "application/json", None, None),
        ("https://example.com/x", None, None, None),
        # the path decides without a Content-Type, for both Bedrock streams
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke-with-response-stream",
         None, None, "bedrock-invoke"),
        # parameters after the media type, however many, do not change it
        ("https://example.com/events", "text/event-stream; charset=utf-8; x=1", None, "sse"),
        ("https://api.openai.com/v1/chat/completions", "application/json; charset=utf-8; x=1",
         None, None),
        # only the path's trailing slashes are dropped: a further segment is another endpoint
        ("https://example.com/v1/chat/completions/X", "text/event-stream", None, "sse"),
        # Claude on Vertex AI; streamRawPredict of another publisher is not Anthropic's
        ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/"
         "anthropic/models/claude:streamRawPredict", "text/event-stream", None, "anthropic"),
        ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/"
         "mistralai/models/mistral:streamRawPredict", "text/event-stream", None, "sse"),
        # rawPredict (not streamed) is Claude's too: its error bodies are Anthropic's
        ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/"
         "anthropic/models/claude:rawPredict", "text/event-stream", None, "anthropic"),
        ("http://[::1/v1/chat/completions", "text/event-stream", None, "sse"),  # bad IPv6
        # the content type tells the framing: an SSE body is no Bedrock stream, a JSON one none
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
         "text/event-stream", None, "sse"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
         "application/json", None, None),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke",
         "application/vnd.amazon.eventstream", None, "bedrock-invoke"),
        # one answer for every reader: Anthropic's other paths and hosts are Anthropic's
        ("https://api.anthropic.com/v1/complete", "text/event-stream", None, "anthropic"),
        ("https://my.anthropic.example/v2/other", "text/event-stream", None, "anthropic"),
        ("https://api.anthropic.com/v1/chat/completions", "text/event-stream", None,
         "openai-chat"),  # a path of another API wins over the host
        ("https://g.example/v1beta/models/g:generateContent", None, None, "gemini"),
        ("https://g.example/v1beta/tunedModels/g:generateContent", None, None, None),
    ],
)  # fmt: skip
def test_detect(
    url: str, content_type: str | None, headers: dict[str, str] | None, expected: str | None
) -> None:
    """The provider follows from the URL path, request headers and host, and the response
    content type tells the framing; non-stream responses (JSON) give None."""
    assert detect(url, content_type, headers=headers, websocket=False) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("openai", "openai-chat"), ("Bedrock", "bedrock-converse"), (" claude ", "anthropic"),
     ("google", "gemini"), *((p, p) for p in PROVIDERS)],
)  # fmt: skip
def test_normalize_names_and_aliases(name: str, expected: str) -> None:
    """Provider names are case-insensitive and accept a few aliases."""
    assert parse(name) == expected


def test_unknown_provider_is_a_one_line_usage_error() -> None:
    """An unknown provider name raises UsageError listing the valid names."""
    with pytest.raises(UsageError) as raised:
        parse("watsonx")
    assert str(raised.value) == (
        "unknown provider 'watsonx'; choose one of: openai-chat, openai-responses, anthropic, "
        "gemini, bedrock-converse, bedrock-invoke, bedrock-invoke-native, ollama, cohere-v2, sse"
    )
