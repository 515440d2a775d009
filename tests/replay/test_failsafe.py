"""The fail-closed answer's parts, exactly: the one-line summary of an exception, the redacted
request description, and the explained 500 (engine/failsafe.py). The end-to-end path (a
raising matcher through mitmproxy and the origin) is in tests/reliability/test_fail_closed.py.
"""

from __future__ import annotations

import pytest

from replayproxy._engine.failsafe import (
    ERROR_HEADER,
    ERROR_STATUS,
    ReplayFailure,
    describe,
    failure_of,
    failure_response,
    summarize,
)
from replayproxy._errors import CassetteError, UsageError


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (RecursionError("maximum recursion depth exceeded"),
         "RecursionError: maximum recursion depth exceeded"),
        (KeyError("model"), "KeyError: 'model'"),
        (ValueError(), "ValueError"),
        (ValueError("   "), "ValueError"),
        (ValueError("  first line\nsecond line  "), "ValueError: first line"),
        (ValueError("\n\nafter blank lines"), "ValueError: after blank lines"),
        # Our own errors are already user-facing: no type name in front.
        (UsageError("bad fault spec"), "bad fault spec"),
        (CassetteError("cannot read\nmore", path="x.cassette"), "x.cassette: cannot read"),
        (UsageError(""), ""),
    ],
)  # fmt: skip
def test_summarize_is_the_type_and_the_first_line(exc: BaseException, expected: str) -> None:
    """summarize(): "TypeName: first line", the bare type name without a message, and our own
    errors' first line alone."""
    assert summarize(exc) == expected


def test_summarize_cuts_a_long_line_to_240_characters() -> None:
    """A first line over 240 characters is cut to 237 and "..."; 240 exactly is kept whole."""
    assert summarize(UsageError("x" * 240)) == "x" * 240
    assert summarize(UsageError("x" * 241)) == "x" * 237 + "..."
    long = summarize(ValueError("y" * 500))
    assert long == "ValueError: " + "y" * (237 - len("ValueError: ")) + "..."
    assert len(long) == 240


@pytest.mark.parametrize(
    ("method", "url", "expected"),
    [
        ("POST", "https://api.test/v1/chat", "POST /v1/chat"),
        ("GET", "https://api.test", "GET /"),
        ("GET", "https://api.test/p?", "GET /p"),
        ("GET", "https://api.test/m?key=SECRET&alt=sse", "GET /m?key=<redacted>&alt=sse"),
        ("GET", "https://api.test/m?api_key=S&access_token=T",
         "GET /m?api_key=<redacted>&access_token=<redacted>"),
        ("GET", "https://api.test/p?a=1#frag", "GET /p?a=1"),
        ("POST", "http://[::1", "POST (unparsable URL)"),
        ("A" * 20, "https://api.test/x", "A" * 16 + " /x"),
    ],
)  # fmt: skip
def test_describe_names_the_request_without_credentials(
    method: str, url: str, expected: str
) -> None:
    """describe(): method (at most 16 characters) and path with query, credentials redacted."""
    assert describe(method, url) == expected


def test_describe_cuts_at_200_characters() -> None:
    """A description over 200 characters is cut to 197 and "..."; 200 exactly is kept."""
    fits = "https://api.test/" + "p" * (200 - len("GET /"))
    assert describe("GET", fits) == "GET /" + "p" * 195
    over = fits + "q"
    assert describe("GET", over) == "GET /" + "p" * 192 + "..."


def test_failure_lines_name_the_request_and_the_summary() -> None:
    """The stderr line and the response body name the request and the exception, and say the
    request went nowhere."""
    failure = failure_of(KeyError("model"), "POST /v1/chat")
    assert failure == ReplayFailure("POST /v1/chat", "KeyError: 'model'")
    assert failure.one_line() == "replay failed for POST /v1/chat: KeyError: 'model'"
    assert failure.explain() == (
        "replayproxy: replay failed for POST /v1/chat: KeyError: 'model'\n"
        "The request was not sent anywhere (replay never contacts the network).\n"
    )


def test_failure_response_is_an_explained_500() -> None:
    """failure_response(): status 500, a UTF-8 text body (an unencodable character replaced),
    the x-replayproxy-error header and the body's exact length."""
    failure = ReplayFailure("POST /\udcff", "ValueError: é")
    status, headers, body = failure_response(failure)
    assert (status, ERROR_STATUS, ERROR_HEADER) == (500, 500, "x-replayproxy-error")
    text = (
        "replayproxy: replay failed for POST /?: ValueError: \u00e9\n"
        "The request was not sent anywhere (replay never contacts the network).\n"
    )
    assert body == text.encode()
    assert headers == (
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"x-replayproxy-error", b"1"),
        (b"content-length", str(len(body)).encode()),
    )
