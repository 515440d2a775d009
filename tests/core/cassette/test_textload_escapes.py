"""The text form's escapes against their edge cases: hex digits of either case, every simple
escape, and each way an escape can be malformed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette import textload, texttokens
from replayproxy._core.cassette.texttokens import escape
from replayproxy._errors import CassetteFormatError, UsageError

HAND_WRITTEN = """replayproxy-cassette-text 1

interaction 0
  request GET http://x/ HTTP/1.1
  response 200 OK HTTP/1.1 +0ms
  +1ms "\\xFF\\xAb\\x0a"
  end complete +2ms
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\xff", b"\xff"),
        ("\\xFF", b"\xff"),
        ("\\xAb", b"\xab"),
        ("\\x00\\x7F", b"\x00\x7f"),
        ("\\n\\r\\t\\\\\\\"\\'", b"\n\r\t\\\"'"),
        ("a\\x41b", b"aAb"),
        ("\u00e9", "\u00e9".encode()),
    ],
)
def test_escapes_decode_to_their_bytes(text: str, expected: bytes) -> None:
    """Every escape of docs/reference/text-format.md, with hex digits in either case, gives its
    byte."""
    assert texttokens.unescape(text) == expected


def test_a_hand_written_upper_case_hex_escape_loads() -> None:
    """A cassette edited by hand with \\xFF (export writes \\xff) loads to the same bytes."""
    (x,) = textload.loads(HAND_WRITTEN).interactions
    assert x.response is not None and x.response.body == b"\xff\xab\n"


@pytest.mark.parametrize("text", ["\\x", "\\x4", "\\xG0", "\\x0g", "\\X41", "\\q", "\\", "\\ "])
def test_a_malformed_escape_is_a_one_line_error(text: str) -> None:
    """A short or non-hex \\x, an upper-case \\X, an unknown or trailing backslash: an error
    naming the escape and its column."""
    with pytest.raises(UsageError, match=r"^bad escape .* at column 1$"):
        texttokens.unescape(text)


def test_an_unterminated_quote_is_an_error_naming_its_line() -> None:
    """A quoted value without its closing quote is a CassetteFormatError naming the line."""
    broken = HAND_WRITTEN.replace('\\x0a"', "\\x0a")
    with pytest.raises(CassetteFormatError, match="line 6: unterminated quoted string"):
        textload.loads(broken)


@given(st.binary(max_size=64))
def test_escape_then_unescape_is_identity(data: bytes) -> None:
    """Property: any bytes escaped for export decode back to themselves."""
    assert texttokens.unescape(escape(data)) == data


def test_the_token_readers_stay_importable_from_textload() -> None:
    """parse_time, parse_bytes and unescape moved to texttokens.py; imports from textload.py
    still give the very same functions."""
    for name in ("parse_time", "parse_bytes", "unescape"):
        assert getattr(textload, name) is getattr(texttokens, name), name
        assert name in textload.__all__
