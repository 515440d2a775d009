"""--redact-json rewrites a request body; its framing header must follow the new length."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Interaction, Request
from replayproxy._core.tools.edit import Edits, apply


def _cassette(body: bytes, *, length_name: bytes = b"Content-Length") -> Cassette:
    headers = (
        (b"host", b"api.example.test"),
        (length_name, str(len(body)).encode()),
        (b"content-type", b"application/json"),
    )
    req = Request("POST", "https://api.example.test/v1/chat", "HTTP/1.1", headers, body)
    return Cassette((Interaction(req, None, Ending(EndKind.NO_RESPONSE, 0, "refused")),))


@pytest.mark.parametrize("length_name", [b"Content-Length", b"content-length"])
def test_content_length_follows_the_redacted_body(length_name: bytes) -> None:
    """The content-length header (any case) is rewritten to the new body's length, keeping its
    name, position and the other headers."""
    body = b'{"model":"m","user":"alice@example.com"}'
    (x,) = apply(
        _cassette(body, length_name=length_name), Edits(redact_json=("/user",))
    ).interactions
    assert x.request.body == b'{"model":"m","user":"<redacted>"}'
    assert x.request.headers == (
        (b"host", b"api.example.test"),
        (length_name, b"%d" % len(x.request.body)),
        (b"content-type", b"application/json"),
    )


@given(secret=st.text(min_size=0, max_size=40))
def test_content_length_always_matches_the_body(secret: str) -> None:
    """Property: whatever the redacted value was, the header states the body's exact length."""
    body = json.dumps({"user": secret, "n": 1}, ensure_ascii=False).encode()
    (x,) = apply(_cassette(body), Edits(redact_json=("/user",))).interactions
    assert x.request.header("content-length") == str(len(x.request.body))
