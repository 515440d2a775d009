"""Importing the text form: each malformed line gives one exact error naming its line and what
was expected, and what is well formed reads back value by value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Request
from replayproxy._core.cassette.textload import loads
from replayproxy._core.cassette.texttokens import parse_bytes, parse_time, unescape
from replayproxy._errors import CassetteFormatError, UsageError

MAGIC = "replayproxy-cassette-text 1"
# One of each line; each case below replaces line N (1-based) with its own text.
LINES = [
    MAGIC,  # 1
    "meta k v",  # 2
    "",  # 3
    "interaction 0",  # 4
    "  recorded-at 1.5",  # 5
    "  request POST /x HTTP/1.1",  # 6
    "  > a: b",  # 7
    "  body 'hi'",  # 8
    "  response 200 OK HTTP/1.1 +1ms",  # 9
    "  < c: d",  # 10
    "  +2ms 'data'",  # 11
    "  end complete +3ms",  # 12
    "  fault hang",  # 13
]
REQ_HEADER = "request header line `>` must follow the request line (before body)"
RESP_HEADER = "response header line `<` must follow the response line (before frames)"
TIME_USAGE = "(expected e.g. +12.5ms, +2s, -300us)"
STATUS = "status must be an integer of at most 20 digits, got"
OUTSIDE = "outside an interaction (missing `interaction` line)"
RESPONSE_USAGE = "expected `response STATUS REASON HTTP-VERSION +HEAD-OFFSET`"
NO_RESPONSE = "interaction has no response line (write `response none` if none came)"
NO_WS_END = "WebSocket messages need a `ws-end` line after them"
NOT_TEXT = "not a cassette text form (first line must be"
END_KINDS = "complete, reset, incomplete, hang, client_gone, no_response, error"


def text_with(lineno: int | tuple[int, ...], new: str) -> str:
    """The base text with line ``lineno`` (or each of several) replaced by ``new``."""
    lines = list(LINES)
    for n in (lineno,) if isinstance(lineno, int) else lineno:
        lines[n - 1] = new
    return "\n".join(lines) + "\n"


def test_the_base_text_loads() -> None:
    """The text the error cases start from is valid, and reads back as written."""
    (x,) = loads(text_with(1, MAGIC)).interactions
    assert x.request == Request("POST", "/x", "HTTP/1.1", ((b"a", b"b"),), b"hi")
    assert x.response is not None and x.response.headers == ((b"c", b"d"),)
    assert x.frames == (Frame(2_000_000, b"data"),)
    assert (x.end, x.faults, x.recorded_at) == (Ending(EndKind.COMPLETE, 3_000_000), ("hang",), 1.5)


@pytest.mark.parametrize(
    ("lineno", "new", "error"),
    [
        (1, "hello", f"line 1: {NOT_TEXT} {MAGIC!r})"),
        (2, "meta k", "line 2: expected `meta KEY VALUE`"),
        (2, "meta k v w", "line 2: expected `meta KEY VALUE`"),
        (2, "meta k '\\xff'", "line 2: meta value is not valid UTF-8"),
        (2, "meta '\\xff' v", "line 2: meta key is not valid UTF-8"),
        (2, "request GET / HTTP/1.1", f"line 2: 'request' {OUTSIDE}"),
        (2, "interaction\x1f0", f"line 2: 'interaction\\x1f0' {OUTSIDE}"),
        (3, "interaction\t1", "line 3: interaction 0: interaction has no request line"),
        (5, "  meta a b", "line 5: meta lines must come before the first interaction"),
        (5, "  recorded-at", "line 5: expected `recorded-at SECONDS`"),
        (5, "  recorded-at 1 2", "line 5: expected `recorded-at SECONDS`"),
        (5, "  recorded-at soon", "line 5: recorded-at must be a number"),
        (5, "  recorded-at inf", "line 5: recorded-at must be a finite number"),
        (5, "  recorded-at nan", "line 5: recorded-at must be a finite number"),
        (5, "  recorded-at '\\xff'", "line 5: recorded-at is not valid UTF-8"),
        (7, "  recorded-at 1.5", "line 7: recorded-at must come before the request line"),
        (5, "  > a: b", f"line 5: {REQ_HEADER}"),
        (9, "  > a: b", f"line 9: {REQ_HEADER}"),
        (13, "  > a: b", f"line 13: {REQ_HEADER}"),
        (6, "  request POST /x", "line 6: expected `request METHOD URL HTTP-VERSION`"),
        (6, "  request POST /x HTTP/1.1 x", "line 6: expected `request METHOD URL HTTP-VERSION`"),
        (6, "  request '\\xff' /x HTTP/1.1", "line 6: method is not valid UTF-8"),
        (6, "  request POST '\\xff' HTTP/1.1", "line 6: url is not valid UTF-8"),
        (6, "  request POST /x '\\xff'", "line 6: http version is not valid UTF-8"),
        (7, "  request GET / HTTP/1.1", "line 7: second request line in one interaction"),
        (7, "  a: b", "line 7: unknown line starting with 'a:'"),
        (7, "  'x' y", "line 7: unknown line starting with b'x'"),
        (7, "  +x 'y'", "line 7: unknown line starting with '+x'"),
        (7, "  > a b", "line 7: header line needs NAME: VALUE"),
        (7, "  > 'a' b", "line 7: header line needs a ':' after the name"),
        (7, "  > base64:YQ== b", "line 7: header line needs NAME: VALUE"),
        (7, "  > base64:!!: b", "line 7: bad base64 value '!!'"),
        (7, "  > a: 'b' c", "line 7: expected one quoted string or base64: value, got \"'b' c\""),
        (7, "  > a: 'b' X", "line 7: expected one quoted string or base64: value, got \"'b' X\""),
        (7, "  > a: 'b' \x0c",
         "line 7: expected one quoted string or base64: value, got \"'b' \\x0c\""),
        (7, "  > a: 'b", "line 7: unterminated quoted string"),
        (8, "  body", "line 8: expected `body 'BYTES'`"),
        (8, "  body 'a' 'b'", "line 8: expected `body 'BYTES'`"),
        (8, "  body hi", "line 8: body must be quoted or base64:"),
        (8, "  body 'hi'x", "line 8: expected a space after the quoted string at column 12"),
        (8, "  body base64:a", "line 8: bad base64 value 'a'"),
        (9, "  body 'again'", "line 9: body must follow the request line and its headers, once"),
        (5, "  body 'x'", "line 5: body must follow the request line and its headers, once"),
        (9, "  response 200 OK HTTP/1.1", f"line 9: {RESPONSE_USAGE}"),
        (9, "  response 2x0 OK HTTP/1.1 +1ms", f"line 9: {STATUS} '2x0'"),
        (9, "  response \u0662\u0660\u0660 OK HTTP/1.1 +1ms",
         f"line 9: {STATUS} '\u0662\u0660\u0660'"),
        (9, "  response xxxxxxxxxxxxxxxxxxxx OK HTTP/1.1 +1ms",
         f"line 9: {STATUS} 'xxxxxxxxxxxxxxxxxxxx'"),
        (9, "  response 99999999999999999999 OK HTTP/1.1 +1ms",
         "line 4: interaction 0: response.status 99999999999999999999 is not an HTTP status "
         "(100-599)"),
        (7, "  >", "line 7: header line needs NAME: VALUE"),
        (11, "  +\u0663ms 'x'", "line 11: unknown line starting with '+\u0663ms'"),
        (11, "  + 'x'", "line 11: unknown line starting with '+'"),
        (11, "  X1 'x'", "line 11: unknown line starting with 'X1'"),
        (11, "  +1\u0663ms 'x'", f"line 11: bad time '+1\u0663ms' {TIME_USAGE}"),
        (7, "\x0c> a: b", "line 7: unknown line starting with '\\x0c>'"),
        (7, "X> a: b", "line 7: unknown line starting with 'X>'"),
        (4, "\x0cinteraction 0", f"line 4: '\\x0cinteraction' {OUTSIDE}"),
        (4, "Xinteraction 0", f"line 4: 'Xinteraction' {OUTSIDE}"),
        ((9, 11), "  response none", "line 10: " + RESP_HEADER),
        (11, "  -x 'x'", "line 11: unknown line starting with '-x'"),
        (9, "  response '200' OK HTTP/1.1 +1ms", f"line 9: {STATUS} b'200'"),
        (9, "  response 123456789012345678901 OK HTTP/1.1 +1ms",
         f"line 9: {STATUS} '12345678901234567890'..."),
        (9, "  response 200 '\\xff' HTTP/1.1 +1ms", "line 9: reason is not valid UTF-8"),
        (9, "  response 200 OK '\\xff' +1ms", "line 9: http version is not valid UTF-8"),
        (9, "  response 200 OK HTTP/1.1 '\\xff'", "line 9: head offset is not valid UTF-8"),
        (9, "  response 200 OK HTTP/1.1 1ms", f"line 9: bad time '1ms' {TIME_USAGE}"),
        (9, "  response 200 OK HTTP/1.1 +1.5ns",
         "line 9: time '+1.5ns' is finer than a nanosecond"),
        (13, "  response none", "line 13: response line must follow the request"),
        (5, "  response none", "line 5: response line must follow the request"),
        (10, "  +1ms 'x'\n  < c: d", f"line 11: {RESP_HEADER}"),
        (7, "  < c: d", f"line 7: {RESP_HEADER}"),
        (13, "  < c: d", f"line 13: {RESP_HEADER}"),
        (7, "  +1ms 'x'", "line 7: a frame line must follow a response line"),
        (13, "  +9ms 'x'", "line 13: a frame line must follow a response line"),
        (11, "  +2ms", "line 11: expected `+OFFSET 'BYTES'`"),
        (11, "  +2ms 'a' 'b'", "line 11: expected `+OFFSET 'BYTES'`"),
        (11, "  +2ms data", "line 11: frame bytes must be quoted or base64:"),
        (11, "  +2 'data'", f"line 11: bad time '+2' {TIME_USAGE}"),
        (11, "  -2ms 'data'",
         "line 4: interaction 0: response.frames[0].offset_ns is negative (-2000000)"),
        (11, "  +2ms '\\q'", "line 11: bad escape \"\\\\q'\" at column 9"),
        (11, "  +2ms 'a\\x4'", "line 11: bad escape \"\\\\x4'\" at column 10"),
        (7, "  >  a: 'b\\q'", "line 7: bad escape \"\\\\q'\" at column 11"),
        (7, "\t> a: 'b'c", "line 7: expected a space after the quoted string at column 10"),
        (2, "meta k 'v'w", "line 2: expected a space after the quoted string at column 11"),
        (7, "  end complete +3ms", "line 7: end line must follow the response"),
        (13, "  end complete +3ms", "line 13: end line must follow the response"),
        (12, "  end complete", "line 12: expected `end KIND +OFFSET [MESSAGE]`"),
        (12, "  end complete +3ms a b", "line 12: expected `end KIND +OFFSET [MESSAGE]`"),
        (12, "  end done +3ms", f"line 12: end kind 'done' is not one of: {END_KINDS}"),
        (12, "  end '\\xff' +3ms", "line 12: end kind is not valid UTF-8"),
        (12, "  end complete '\\xff'", "line 12: end offset is not valid UTF-8"),
        (12, "  end complete +3ms '\\xff'", "line 12: end message is not valid UTF-8"),
        (12, "  end complete 3ms", f"line 12: bad time '3ms' {TIME_USAGE}"),
        ((12, 13), "#", "line 4: interaction 0: interaction has no end line"),
        (12, "#", "line 13: fault lines come after the end line"),
        ((9, 10, 11, 12, 13), "#", f"line 4: interaction 0: {NO_RESPONSE}"),
        (6, "#", f"line 7: {REQ_HEADER}"),
        (11, "  fault hang", "line 11: fault lines come after the end line"),
        (13, "  fault", "line 13: expected `fault SPEC`"),
        (13, "  fault a b", "line 13: expected `fault SPEC`"),
        (13, "  fault '\\xff'", "line 13: fault is not valid UTF-8"),
        (13, "  ws> +9ms text 'x'", f"line 4: interaction 0: {NO_WS_END}"),
        (13, "  bogus", "line 13: unknown line starting with 'bogus'"),
    ],
)  # fmt: skip
def test_each_malformed_line_is_an_exact_error(
    lineno: int | tuple[int, ...], new: str, error: str
) -> None:
    """Each way a line can be wrong: its number and what was expected, exactly, on one line."""
    with pytest.raises(CassetteFormatError) as err:
        loads(text_with(lineno, new))
    assert err.value.reason == error


def test_what_an_interaction_lacks_is_reported_at_its_interaction_line() -> None:
    """A missing line is reported against the `interaction` line of that interaction, with its
    index, also for one that is not the last."""
    good = "\n".join(LINES[3:])
    text = "\n".join([MAGIC, good, "interaction 1", "  request GET / HTTP/1.1", good]) + "\n"
    with pytest.raises(CassetteFormatError) as err:
        loads(text)
    assert err.value.reason == "line 12: interaction 1: interaction has no response line " \
        "(write `response none` if none came)"  # fmt: skip


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", f"line 1: empty text, expected {MAGIC!r}"),
        ("\n# only a comment\n  \n", f"line 4: empty text, expected {MAGIC!r}"),
        ("# comment\n\n  hello", f"line 3: {NOT_TEXT} {MAGIC!r})"),
        (f"{MAGIC}x\n", f"line 1: {NOT_TEXT} {MAGIC!r})"),
    ],
)  # fmt: skip
def test_the_magic_line(text: str, error: str) -> None:
    """The first non-blank, non-comment line must be the magic line."""
    assert loads(f"# c\n\t{MAGIC} \r\n").interactions == ()  # blanks around it are fine
    with pytest.raises(CassetteFormatError) as err:
        loads(text)
    assert err.value.reason == error


def test_crlf_comments_and_tabs_keep_the_line_numbers() -> None:
    """CRLF ends, comments and tab indentation are accepted; line numbers count every line."""
    text = (
        f"# c\r\n{MAGIC}\r\n\r\ninteraction 0\r\n\t# x\r\n\trequest GET / HTTP/1.1\r\n\tbogus\r\n"
    )
    with pytest.raises(CassetteFormatError) as err:
        loads(text)
    assert err.value.reason == "line 7: unknown line starting with 'bogus'"


@pytest.mark.parametrize(
    ("token", "ns"),
    [
        ("+0ms", 0),
        ("-0ns", 0),
        ("+1.0ns", 1),
        ("+1.10us", 1_100),
        ("+99999999999999999999ns", 99_999_999_999_999_999_999),
        ("+1." + "0" * 30 + "s", 1_000_000_000),
        ("-2.5s", -2_500_000_000),
    ],
)
def test_parse_time(token: str, ns: int) -> None:
    """Up to 20 whole and 30 decimal digits, any unit, exact or an error."""
    assert parse_time(token) == ns


@pytest.mark.parametrize(
    ("token", "error"),
    [
        ("+123456789012345678901ns", f"bad time '+123456789012345678901ns' {TIME_USAGE}"),
        ("+1." + "0" * 31 + "s", f"bad time '+1.0000000000000000000000000000000s' {TIME_USAGE}"),
        ("+1." + "0" * 40 + "s", f"bad time '+1.{'0' * 37}' {TIME_USAGE}"),
        ("12ms", f"bad time '12ms' {TIME_USAGE}"),
        ("+12", f"bad time '+12' {TIME_USAGE}"),
        ("+12 ms", f"bad time '+12 ms' {TIME_USAGE}"),
        ("+.5ms", f"bad time '+.5ms' {TIME_USAGE}"),
        ("+1.ms", f"bad time '+1.ms' {TIME_USAGE}"),
        ("+\u0661ms", f"bad time '+\u0661ms' {TIME_USAGE}"),
        ("+1.0001us", "time '+1.0001us' is finer than a nanosecond"),
        ("-0.5ns", "time '-0.5ns' is finer than a nanosecond"),
        ("+" + "1" * 20 + "." + "0" * 29 + "1ns",
         f"time '+{'1' * 20}.{'0' * 18}' is finer than a nanosecond"),
        ("+0." + "0" * 29 + "1s", f"time '+0.{'0' * 29}1s' is finer than a nanosecond"),
    ],
)  # fmt: skip
def test_parse_time_errors(token: str, error: str) -> None:
    """A time that is not ±DIGITS[.DIGITS]UNIT, or finer than 1 ns: the error quotes at most 40
    characters of it."""
    with pytest.raises(UsageError) as err:
        parse_time(token)
    assert str(err.value) == error


@pytest.mark.parametrize(
    ("token", "data"),
    [
        ("''", b""),
        ("'a b'", b"a b"),
        ('"it\'s"', b"it's"),
        ("base64:", b""),
        ("base64:AAE=", b"\x00\x01"),
        ("  'x'  ", b"x"),
    ],
)
def test_parse_bytes(token: str, data: bytes) -> None:
    """One quoted string or base64: value, spaces around it ignored."""
    assert parse_bytes(token) == data


@pytest.mark.parametrize(
    ("token", "error"),
    [
        ("x", "expected one quoted string or base64: value, got 'x'"),
        ("'a' 'b'", "expected one quoted string or base64: value, got \"'a' 'b'\""),
        ("", "expected one quoted string or base64: value, got ''"),
        ("'a'b", "expected a space after the quoted string at column 4"),
        ("'a'X", "expected a space after the quoted string at column 4"),
        ("base64:AAE", "bad base64 value 'AAE'"),
        ("base64:" + "A" * 30 + "!", "bad base64 value 'AAAAAAAAAAAAAAAAAAAA'"),
    ],
)
def test_parse_bytes_errors(token: str, error: str) -> None:
    """Anything but one quoted or base64: value is an exact error."""
    with pytest.raises(UsageError) as err:
        parse_bytes(token)
    assert str(err.value) == error


@pytest.mark.parametrize(
    ("line", "header"),
    [
        ("  > a:b", (b"a", b"b")),
        ("  > a: bX", (b"a", b"bX")),
        ("  > a: b\x0c", (b"a", b"b\x0c")),
        ("  >a: b", (b"a", b"b")),
        ("  > X-a: b", (b"X-a", b"b")),
        ("  > a :  b c \t ", (b"a", b"b c")),
        ("  >\ta:\tb", (b"a", b"b")),
        ("  > a: ", (b"a", b"")),
        ("  > a: x:y", (b"a", b"x:y")),
        ("  > 'a\\x7e': c", (b"a~", b"c")),
        ("  > \"a\": 'b'", (b"a", b"b")),
        ("  > base64:YQ==: base64:Yg==", (b"a", b"b")),
        ("  > a: #not a comment", (b"a", b"#not a comment")),
        ("  > a: caf\u00e9", (b"a", "caf\u00e9".encode())),
    ],
)
def test_header_lines_are_read_exactly(line: str, header: tuple[bytes, bytes]) -> None:
    """NAME: VALUE with spaces or tabs around, quoted or base64 names and values."""
    (x,) = loads(text_with(7, line)).interactions
    assert x.request.headers == (header,)


@pytest.mark.parametrize(
    ("text", "data", "column"),
    [("\\x", None, 1), ("ab\\q", None, 3), ("a\\x4", None, 2), ("\\\\\\x", None, 3)],
)
def test_bad_escape_names_its_column(text: str, data: None, column: int) -> None:
    """The column of a bad escape is that of its backslash, counted from 1."""
    with pytest.raises(UsageError, match=rf" at column {column}$"):
        unescape(text)


@given(
    st.text(
        alphabet=st.characters(exclude_characters="\\", exclude_categories=("Cs",)), max_size=30
    )
)
def test_text_without_backslashes_unescapes_to_its_utf8(text: str) -> None:
    """Property: text without escapes (and without lone surrogates) is its own UTF-8."""
    assert unescape(text) == text.encode("utf-8")


@pytest.mark.parametrize("lone", ["\udcff", "\ud800", "\udfff"])
def test_a_lone_surrogate_is_not_utf8(lone: str) -> None:
    """An invalid byte read with surrogateescape (stdin or argv under a C locale) is refused
    with its line and column, never written as other bytes; also in unescape()."""
    for lineno, line in [(2, "meta k 'a{}'"), (7, "  > a: b{}"), (7, "  > a{}: b"), (13, "#{}")]:
        with pytest.raises(CassetteFormatError) as err:
            loads(text_with(lineno, line.format(lone)))
        assert err.value.reason == f"line {lineno}: not UTF-8 text (column {line.index('{') + 1})"
    with pytest.raises(UsageError, match=r"^not UTF-8 text \(column 4\)$"):
        unescape("a\\n" + lone)


def test_bad_escape_shows_four_characters() -> None:
    """The error quotes the backslash and the three characters after it."""
    with pytest.raises(UsageError) as err:
        unescape("ab\\qcdef")
    assert str(err.value) == "bad escape '\\\\qcd' at column 3"
