"""The request options the checker reads from a JSON request body."""

from __future__ import annotations

import pytest

from replayproxy._core.check import RequestOptions, request_options


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"stream": true, "stream_options": {"include_usage": true}}', True),
        (b'{"stream": true, "stream_options": {"include_usage": false}}', False),
        (b'{"stream": true}', False),
        (b"not json", None),
        (b"[1, 2]", None),
        (b"", None),
        (None, None),
    ],
)
def test_request_options(body: bytes | None, expected: bool | None) -> None:
    """include_usage is read from a JSON request body; unknown when there is none."""
    assert request_options(body) == RequestOptions(include_usage=expected)
