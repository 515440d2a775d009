"""The checks of the upstream URL and the speed (core/replay/checks.py), each message exact."""

from __future__ import annotations

import math
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from replayproxy._core.replay.checks import MAX_SPEED, MIN_SPEED, check_speed, check_upstream
from replayproxy._errors import UsageError

# -- upstream ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.openai.com", "https://api.openai.com"),
        ("https://api.openai.com/", "https://api.openai.com"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
        ("http://[::1]:9/", "http://[::1]:9"),
        ("HTTPS://API.example", "HTTPS://API.example"),
    ],
)
def test_upstream_is_accepted_without_its_trailing_slash(url: str, expected: str) -> None:
    """scheme://HOST[:PORT] is accepted as written, less one trailing '/'."""
    assert check_upstream(url) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://x", "invalid upstream 'ftp://x': expected http://HOST[:PORT] or https://..."),
        ("https://", "invalid upstream 'https://': expected http://HOST[:PORT] or https://..."),
        ("api.openai.com", "invalid upstream 'api.openai.com': expected http://HOST[:PORT] or "
         "https://..."),
        ("https://api.openai.com\n", "invalid upstream 'https://api.openai.com\\n': expected "
         "http://HOST[:PORT] or https://..."),
        ("https://api.ope nai.com", "invalid upstream 'https://api.ope nai.com': expected "
         "http://HOST[:PORT] or https://..."),
        ("http://h:99999", "invalid upstream 'http://h:99999': bad port"),
        ("http://h:port", "invalid upstream 'http://h:port': bad port"),
        ("https://api.openai.com/v1", "invalid upstream 'https://api.openai.com/v1': give only "
         "scheme://HOST[:PORT]; clients keep the path in their base URL"),
        ("https://h//", "invalid upstream 'https://h//': give only scheme://HOST[:PORT]; clients "
         "keep the path in their base URL"),
        ("https://h?a=1", "invalid upstream 'https://h?a=1': give only scheme://HOST[:PORT]; "
         "clients keep the path in their base URL"),
        ("http://[::1", "invalid upstream 'http://[::1': expected http://HOST[:PORT] or https://..."),
        ("https://h#top", "invalid upstream 'https://h#top': give only scheme://HOST[:PORT]; "
         "clients keep the path in their base URL"),
    ],
)  # fmt: skip
def test_bad_upstream_is_one_exact_line(url: str, message: str) -> None:
    """A wrong scheme, no host, whitespace, a bad port or a path: one UsageError line."""
    with pytest.raises(UsageError) as info:
        check_upstream(url)
    assert str(info.value) == message


_URLISH = st.text() | st.builds(
    str.__add__,
    st.sampled_from(["http://", "https://", "HTTP://", "http://[", "ftp://", "//"]),
    st.text(),
)


@example("HTTP://0?")  # an empty query: urlsplit calls it "", it is still a query
@example("http://h#")
@given(_URLISH)
def test_any_text_is_refused_in_one_line_or_accepted_as_a_bare_origin(url: str) -> None:
    """Any text: a one-line 'invalid upstream' naming it, or a bare http(s) origin (idempotent)."""
    try:
        got = check_upstream(url)
    except UsageError as e:
        assert str(e).startswith(f"invalid upstream {url!r}: ") and "\n" not in str(e)
        return
    parts = urlsplit(got)
    assert parts.scheme.lower() in ("http", "https") and parts.hostname
    assert parts.path == "" and not parts.query and not parts.fragment
    assert (
        got == url.removesuffix("/") and got.lower() == f"{parts.scheme}://{parts.netloc}".lower()
    )
    assert check_upstream(got) == got


@given(
    st.sampled_from(["http", "https"]),
    st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\.[a-z0-9]{1,10}){0,3}", fullmatch=True),
    st.none() | st.integers(0, 65535),
    st.booleans(),
)
def test_every_origin_is_accepted(scheme: str, host: str, port: int | None, slash: bool) -> None:
    """Every http(s)://HOST[:PORT][/] is accepted and given back without the '/'."""
    origin = f"{scheme}://{host}" + ("" if port is None else f":{port}")
    assert check_upstream(origin + ("/" if slash else "")) == origin


# -- speed ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("speed", "expected"),
    [(0, 0.0), ("2", 2.0), (0.001, 0.001), (1_000_000, 1_000_000.0), ("1.5", 1.5), (" 3 ", 3.0)],
)
def test_check_speed_accepts(speed: float | str, expected: float) -> None:
    """0 (no waiting) and 0.001..1e6, as numbers or strings."""
    assert check_speed(speed) == expected


@pytest.mark.parametrize(
    ("speed", "message"),
    [
        ("fast", "speed must be a number, got 'fast'"),
        (None, "speed must be a number, got None"),
        (-1, "speed must be a finite number >= 0, got -1"),
        ("-1", "speed must be a finite number >= 0, got '-1'"),
        (float("inf"), "speed must be a finite number >= 0, got inf"),
        (float("nan"), "speed must be a finite number >= 0, got nan"),
        (0.0009, "speed must be 0 or from 0.001 to 1e+06, got 0.0009"),
        (1_000_001, "speed must be 0 or from 0.001 to 1e+06, got 1000001"),
    ],
)
def test_check_speed_refuses(speed: object, message: str) -> None:
    """Anything else is one UsageError line naming the value."""
    with pytest.raises(UsageError) as info:
        check_speed(speed)
    assert str(info.value) == message


@given(st.one_of(st.text(), st.floats().map(repr), st.integers().map(str)))
def test_speed_text_is_its_number_or_one_line_refusal(text: str) -> None:
    """Text (an ini value, a mitmproxy option) is float(text) when in range, else refused."""
    try:
        expected: float | None = float(text)
    except ValueError:
        expected = None
    in_range = (
        expected is not None
        and math.isfinite(expected)
        and (expected == 0 or MIN_SPEED <= expected <= MAX_SPEED)
    )
    if in_range:
        assert check_speed(text) == expected
    else:
        with pytest.raises(UsageError) as info:
            check_speed(text)
        assert str(info.value).startswith("speed must be ") and str(info.value).endswith(
            f"got {text!r}"
        )
