"""Error bodies in each provider's JSON error shape, chosen by request path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.wire.error_body import error_body, error_family


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


_RETRY = (b"x-should-retry", b"false")
_JSON = (b"content-type", b"application/json")


@pytest.mark.parametrize(
    ("path", "status", "headers", "body"),
    [
        (
            "/v1/chat/completions",
            500,
            (_JSON, _RETRY),
            b'{"error": {"message": "n\xc3\xa9e \xe2\x80\x94 x", "type": "replayproxy_error", '
            b'"param": null, "code": "replayproxy_error"}}\n',
        ),
        (
            "/v1/messages?beta=true",
            500,
            (_JSON, _RETRY),
            b'{"type": "error", "error": {"type": "api_error", '
            b'"message": "n\xc3\xa9e \xe2\x80\x94 x"}}\n',
        ),
        (
            "/v1beta/models/g:generateContent",
            500,
            (_JSON, _RETRY),
            b'{"error": {"code": 500, "message": "n\xc3\xa9e \xe2\x80\x94 x", '
            b'"status": "INTERNAL"}}\n',
        ),
        (
            "/model/m/invoke/",
            502,
            (_JSON, (b"x-amzn-errortype", b"InternalServerException"), _RETRY),
            b'{"message": "n\xc3\xa9e \xe2\x80\x94 x"}\n',
        ),
    ],
)
def test_exact_headers_and_body(
    path: str, status: int, headers: tuple[tuple[bytes, bytes], ...], body: bytes
) -> None:
    """The whole answer, byte for byte: header order, key order, UTF-8 kept, one newline."""
    got_headers, got_body = error_body(path, "n\u00e9e \u2014 x", status=status)
    assert got_headers == headers
    assert got_body == body


@pytest.mark.parametrize(
    ("status", "google"),
    [
        (500, "INTERNAL"),
        (501, "UNIMPLEMENTED"),
        (502, "UNAVAILABLE"),
        (503, "UNAVAILABLE"),
        (504, "INTERNAL"),
        (404, "INTERNAL"),
    ],
)
def test_gemini_status_names(status: int, google: str) -> None:
    """Gemini's error.status is the google.rpc code name for the HTTP status, INTERNAL if none."""
    _, body = error_body("/v1beta/models/g:streamGenerateContent", "m", status=status)
    assert json.loads(body)["error"] == {"code": status, "message": "m", "status": google}


def test_default_status_is_500() -> None:
    """Without a status, Gemini's error code is 500."""
    _, body = error_body("/v1beta/models/g:generateContent", "m")
    assert json.loads(body)["error"]["code"] == 500


@pytest.mark.parametrize(
    ("path", "family"),
    [
        ("/v1/messages/", "anthropic"),
        ("/v1/messages?x=/v1/chat", "anthropic"),
        ("/v1/messages?a=1?b", "anthropic"),
        ("/v1/messagesX", "openai"),
        ("/v1/models/a:b/c", "openai"),
        ("/v1/chat/completions?next=/v1/messages", "openai"),
        ("/v1/messages/count_tokens", "anthropic"),
        ("/v1/messages/count_tokens/", "anthropic"),
        ("/v1/messages/batches", "openai"),
        ("/v1/complete//", "anthropic"),
        ("/v1beta/models/g:generateContent/", "gemini"),
        ("/v1beta/models/g:generateContent?alt=sse", "gemini"),
        ("/v1beta/tunedModels/g:generateContent", "openai"),
        ("/v1beta/models:list/x", "openai"),
        ("/v1/models/gpt-4", "openai"),
        ("/model/m/converse", "bedrock"),
        ("/model/m/converse/", "bedrock"),
        ("/model/m/invoke", "bedrock"),
        ("/model/m/converse-stream?x=1", "bedrock"),
        ("/v1/model/m/converse", "openai"),
        ("/model/m/other", "openai"),
        # the registry's one answer: Claude on Vertex is Anthropic's, another publisher's
        # rawPredict is not Gemini's, a streaming Bedrock path is Bedrock's behind a prefix
        ("/v1/projects/p/locations/l/publishers/anthropic/models/c:streamRawPredict", "anthropic"),
        ("/v1/projects/p/locations/l/publishers/mistralai/models/m:rawPredict", "openai"),
        ("/proxy/model/m/converse-stream", "bedrock"),
        ("/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", "gemini"),
        ("//v1/messages", "anthropic"),
    ],
)
def test_family_edges(path: str, family: str) -> None:
    """The query and trailing slashes are ignored; suffixes and prefixes must match exactly."""
    assert error_family(path) == family
