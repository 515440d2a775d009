"""The cassette text form: exact round trips, readable output, one-line errors naming the line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette import codec, textform, textload, texttokens
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.texttokens import escape
from replayproxy._errors import CassetteFormatError
from replayproxy.testing import MS
from replayproxy.testing.strategies import any_bytes, cassettes
from tests.cassette.samples import sample_cassette


@settings(max_examples=200)
@given(cassettes())
def test_any_cassette_round_trips_byte_identically(cassette: Cassette) -> None:
    """dumps then loads gives an equal cassette, which encodes to the very same bytes."""
    text = textform.dumps(cassette)
    back = textload.loads(text)
    assert back == cassette
    assert codec.encode(back) == codec.encode(cassette)


@given(any_bytes())
def test_quoted_bytes_round_trip_and_stay_on_one_line(data: bytes) -> None:
    """Any bytes quote to a single printable line that parses back to the same bytes."""
    token = texttokens.quote(data)
    assert "\n" not in token and "\r" not in token
    assert all(ch == " " or ch.isprintable() for ch in token)
    assert texttokens.parse_bytes(token) == data


@given(st.integers(-(2**63), 2**63))
def test_times_round_trip_exactly(ns: int) -> None:
    """Any nanosecond offset survives the millisecond notation."""
    assert texttokens.parse_time(texttokens.format_time(ns)) == ns


@pytest.mark.parametrize(
    ("token", "ns"),
    [
        ("+12.5ms", 12_500_000),
        ("+2s", 2_000_000_000),
        ("-300us", -300_000),
        ("+7ns", 7),
        ("+0.000001ms", 1),
        ("+1.5s", 1_500_000_000),
    ],
)
def test_time_units_people_may_type(token: str, ns: int) -> None:
    """Times may be typed in s, ms, us or ns with decimals."""
    assert texttokens.parse_time(token) == ns


def test_export_reads_like_the_wire() -> None:
    """Frames are one per line with their offset, SSE text is readable, secrets stay as recorded."""
    text = textform.dumps(sample_cassette())
    assert "replayproxy-cassette-text 1" in text
    assert "  request POST https://api.example.test/v1/chat/completions HTTP/1.1" in text
    assert "  > content-type: application/json" in text
    assert "  response 200 OK HTTP/1.1 +50ms" in text
    assert '  +70ms       \'data: {"n":0,"text":"Hel"}\\n\\n\'' in text
    assert "w\u00e9rld" in text  # valid UTF-8 printed as is
    assert "\" w\\xc3'\n" in text  # a UTF-8 char split across frames shows as \xNN ...
    assert "  +110ms      '\\xa9rld\"}" in text  # ... on both sides of the cut
    assert '  end no_response +3ms "connection refused"' in text


def test_binary_frames_use_base64_and_round_trip() -> None:
    """A mostly binary frame is written as base64: and read back exactly."""
    blob = bytes(range(256))
    x = Interaction(
        Request("GET", "/"), Response(200, frames=(Frame(MS, blob),)), Ending(EndKind.COMPLETE, MS)
    )
    text = textform.dumps(Cassette((x,)))
    assert "+1ms        base64:AAECAw" in text
    assert textload.loads(text) == Cassette((x,))


def test_hand_edited_text_is_accepted() -> None:
    """Indentation, tabs, CRLF line ends, comments and other time units are fine when importing."""
    text = (
        "# a comment\r\n"
        "replayproxy-cassette-text 1\r\n"
        "interaction 7\n"
        "request\tGET /x HTTP/1.1\n"
        "> accept: text/event-stream\n"
        "response 200 OK HTTP/1.1 +0.1s\n"
        "   # frames follow\n"
        '+0.2s "data: a\\n\\n"\n'
        "+250ms ''\n"
        "end reset +0.3s\n"
        "fault 'truncate:events=1'\n"
    )
    c = textload.loads(text)
    (x,) = c.interactions
    assert x.request.headers == ((b"accept", b"text/event-stream"),)
    assert x.frames == (Frame(200 * MS, b"data: a\n\n"), Frame(250 * MS, b""))
    assert x.end == Ending(EndKind.RESET, 300 * MS)
    assert x.faults == ("truncate:events=1",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "line 1: empty text"),
        ("hello\n", "line 1: not a cassette text form"),
        ("replayproxy-cassette-text 1\nrequest GET / HTTP/1.1\n", "line 2: 'request' outside"),
        ("replayproxy-cassette-text 1\ninteraction\nrequest GET /\n", "line 3: expected `request"),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\nresponse none\n"
            "end bogus +1ms\n",
            "line 5: end kind 'bogus' is not one of: complete",
        ),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\n"
            "response 200 OK HTTP/1.1 +1ms\n+2ms 'abc\n",
            "line 5: unterminated quoted string",
        ),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\n"
            "response 200 OK HTTP/1.1 +1ms\n+2ms '\\q'\n",
            "line 5: bad escape",
        ),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\n"
            "response 200 OK HTTP/1.1 soon\n",
            "line 4: bad time 'soon'",
        ),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\n",
            "line 2: .*no response",
        ),
        (
            "replayproxy-cassette-text 1\ninteraction\nrequest GET / HTTP/1.1\nresponse none\n"
            "+1ms 'x'\n",
            "line 5: a frame line must follow a response line",
        ),
    ],
)
def test_mistakes_are_one_line_errors_with_the_line_number(text: str, message: str) -> None:
    """Every malformed text gives a CassetteFormatError on one line that names the line."""
    with pytest.raises(CassetteFormatError, match=message) as e:
        textload.loads(text)
    assert "\n" not in str(e.value)


def test_escape_hides_nothing() -> None:
    """Control bytes, invalid UTF-8 and invisible characters are escaped, text is kept."""
    assert (
        escape(b"a\x1b[31m\xff\xe2\x80\xa8\xef\xbb\xbfz\r\n")
        == "a\\x1b[31m\\xff\\xe2\\x80\\xa8\\xef\\xbb\\xbfz\\r\\n"
    )
    assert escape("naïve 日本".encode()) == "naïve 日本"
