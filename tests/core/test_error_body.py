"""Error bodies in each provider's JSON error shape, chosen by request path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy.core.error_body import error_body, error_family


@pytest.mark.parametrize(
    ("path", "family"),
    [
        ("/v1/chat/completions", "openai"),
        ("/openai/deployments/x/chat/completions", "openai"),
        ("/v1/responses", "openai"),
        ("/v1/messages", "anthropic"),
        ("/v1/complete", "anthropic"),
        ("/v1beta/models/gemini-2.0-flash:streamGenerateContent", "gemini"),
        ("/v1/projects/p/locations/l/publishers/google/models/g:generateContent", "gemini"),
        ("/model/anthropic.claude-v2/converse-stream", "bedrock"),
        ("/model/x/invoke-with-response-stream", "bedrock"),
        ("/model_prices.json", "openai"),
        ("/", "openai"),
    ],
)
def test_family_is_chosen_by_path(path: str, family: str) -> None:
    """Each provider's paths get its error shape; anything else gets OpenAI's."""
    assert error_family(path) == family


def test_each_shape_is_what_the_sdk_parses() -> None:
    """OpenAI error.message, Anthropic type=error + error.message, Google error.status."""
    _, body = error_body("/v1/chat/completions", "why\nbecause")
    assert json.loads(body)["error"]["message"] == "why\nbecause"
    _, body = error_body("/v1/messages", "why")
    doc = json.loads(body)
    assert doc["type"] == "error" and doc["error"] == {"type": "api_error", "message": "why"}
    _, body = error_body("/v1beta/models/g:generateContent", "why", status=503)
    assert json.loads(body)["error"] == {"code": 503, "message": "why", "status": "UNAVAILABLE"}
    headers, body = error_body("/model/m/converse", "why")
    assert json.loads(body) == {"message": "why"}
    assert (b"x-amzn-errortype", b"InternalServerException") in headers


@given(st.text(), st.text(max_size=40))
def test_any_message_round_trips_and_is_never_retried(message: str, path: str) -> None:
    """Any text survives as JSON; every shape carries content-type JSON and x-should-retry."""
    headers, body = error_body(path, message)
    assert headers[0] == (b"content-type", b"application/json")
    assert (b"x-should-retry", b"false") in headers
    doc = json.loads(body)
    inner = doc.get("error", doc)
    assert inner["message"] == message
