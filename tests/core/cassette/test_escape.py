"""Bytes printed for a person (the text form, the terminal, diffs): every byte rendered visibly,
on one line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.texttokens import escape


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"plain text ~!", "plain text ~!"),
        (b"\\ \n \r \t", "\\\\ \\n \\r \\t"),
        (b"\x00\x01\x1f\x7f", "\\x00\\x01\\x1f\\x7f"),
        (b" ", " "),
        (b"\x1b[31m", "\\x1b[31m"),  # a terminal escape sequence stays inert
        ("é日本".encode(), "é日本"),
        (b"\xff\x80\xc3", "\\xff\\x80\\xc3"),  # invalid UTF-8, byte by byte
        ("\u2028".encode(), "\\xe2\\x80\\xa8"),  # line separator
        ("\ufeff".encode(), "\\xef\\xbb\\xbf"),  # BOM
        ("\u00a0".encode(), "\\xc2\\xa0"),  # no-break space: not shown as a space
        ("\u200b".encode(), "\\xe2\\x80\\x8b"),  # zero-width space
        (b"'\"", "'\""),  # no quote given: quotes as they are
    ],
)
def test_escape(data: bytes, text: str) -> None:
    """Printable UTF-8 as is, \\\\ \\n \\r \\t by name, every other byte as \\xNN."""
    assert escape(data) == text


@pytest.mark.parametrize(
    ("quote", "text"), [("'", "\\'\"x"), ('"', "'\\\"x")]
)  # fmt: skip
def test_escape_escapes_only_the_quote_asked_for(quote: str, text: str) -> None:
    """With a quote character, that one (and only that one) gets a backslash."""
    assert escape(b"'\"x", quote) == text


@given(st.binary(max_size=64))
def test_escape_output_is_one_visible_line(data: bytes) -> None:
    """Property: whatever the bytes, the rendering is printable, without line breaks."""
    assert all(ch.isprintable() for ch in escape(data))
