"""The text form as written: exact lines for every item, and the choices export makes (which
quote, bare or quoted, base64 or escaped) stated value by value."""

from __future__ import annotations

import pytest

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.textform import dumps
from replayproxy._core.cassette.textload import loads
from replayproxy._core.cassette.texttokens import format_time, quote
from replayproxy.testing import MS

BANNER = (
    "# replayproxy cassette text (docs/reference/text-format.md), "
    "read by `replayproxy cassette import`"
)


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "+0ms"),
        (1, "+0.000001ms"),
        (-1, "-0.000001ms"),
        (1_000_000, "+1ms"),
        (10_000_000, "+10ms"),
        (100_000_000, "+100ms"),
        (12_500_000, "+12.5ms"),
        (12_050_000, "+12.05ms"),
        (-300_000, "-0.3ms"),
        (1_000_000_001, "+1000.000001ms"),
        (-2_000_000_000, "-2000ms"),
    ],
)
def test_format_time(ns: int, text: str) -> None:
    """Signed milliseconds, exact, without trailing zeros or a bare decimal point."""
    assert format_time(ns) == text


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"", '""'),
        (b"plain", '"plain"'),
        (b"it's", '"it\'s"'),  # fewer double quotes: double-quoted
        (b'say "hi"', "'say \"hi\"'"),  # more double quotes: single-quoted
        (b"'\"", '"\'\\""'),  # a tie: double-quoted
        (b"a\nb\\", '"a\\nb\\\\"'),
        (b"\x00" * 15, '"' + "\\x00" * 15 + '"'),  # under 16 bytes: never base64
        (b"\x00" * 16, "base64:AAAAAAAAAAAAAAAAAAAAAA=="),
        # 18 bytes, 6 escaped: the escaped text is exactly twice as long, still quoted ...
        (b"\x01" * 6 + b"a" * 12, '"' + "\\x01" * 6 + "a" * 12 + '"'),
        # ... one more escaped byte and it is longer: base64
        (b"\x01" * 7 + b"a" * 11, "base64:AQEBAQEBAWFhYWFhYWFhYWFh"),
    ],
)
def test_quote(data: bytes, text: str) -> None:
    """The quote needing fewer escapes, and base64 only for 16+ mostly-binary bytes."""
    assert quote(data) == text
    assert loads(dumps(_with_body(data))).interactions[0].request.body == data


def _with_body(body: bytes) -> Cassette:
    x = Interaction(Request("POST", "/", body=body), None, Ending(EndKind.NO_RESPONSE, 0))
    return Cassette((x,))


@pytest.mark.parametrize(
    ("word", "text"),
    [
        ("GET", "GET"),
        ("x'y", "x'y"),
        ("#x", "#x"),
        ("+1ms", "+1ms"),
        ("é", "é"),
        ("", '""'),
        ("a b", '"a b"'),
        ("a\tb", '"a\\tb"'),
        ("'x", '"\'x"'),
        ('"x', "'\"x'"),
        ("a\\b", '"a\\\\b"'),
        ("base64:x", '"base64:x"'),
        ("xbase64:", "xbase64:"),
        ("\u2028", '"\\xe2\\x80\\xa8"'),
        ("a\x7f", '"a\\x7f"'),
    ],
)
def test_words_are_bare_only_when_unambiguous(word: str, text: str) -> None:
    """A string is written bare when it reads back as itself, quoted otherwise."""
    c = Cassette((), ((word, "v"),))
    assert dumps(c).splitlines()[2] == f"meta {text} v"
    assert loads(dumps(c)) == c


@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        (b"content-type", b"text/plain; q=1", "> content-type: text/plain; q=1"),
        (b"x'y", b'a\'b "c"', "> x'y: a'b \"c\""),
        (b"base64", b"x", '> "base64": x'),
        (b"base64x", b"base64:x", '> base64x: "base64:x"'),
        (b"x@y", b"v", '> "x@y": v'),
        (b"'a", b"v", '> "\'a": v'),
        (b"a", b"", '> a: ""'),
        (b"a", b" v", '> a: " v"'),
        (b"a", b"v ", '> a: "v "'),
        (b"a", b"'v", '> a: "\'v"'),
        (b"a", b"x\\y", '> a: "x\\\\y"'),
        (b"a", b"\xe9", '> a: "\\xe9"'),
        (b"a", b"(x)", "> a: (x)"),
        (b"\xe9", b"v", '> "\\xe9": v'),
    ],
)
def test_headers_are_bare_only_when_unambiguous(name: bytes, value: bytes, line: str) -> None:
    """Header names and values are written bare when they read back as themselves."""
    x = Interaction(Request("GET", "/", headers=((name, value),)), None, Ending(EndKind.HANG, 0))
    c = Cassette((x,))
    assert dumps(c).splitlines()[5] == "  " + line
    assert loads(dumps(c)) == c


def test_dumps_exact() -> None:
    """Every line of a cassette with every item, as docs/reference/text-format.md shows it."""
    full = Interaction(
        Request(
            "POST",
            "https://api.example.test/v1/chat",
            "HTTP/1.1",
            ((b"content-type", b"application/json"),),
            b'{"stream":true}',
        ),
        Response(
            200,
            "OK",
            "HTTP/2.0",
            ((b"content-type", b"text/event-stream"),),
            120_500_000,
            (Frame(130 * MS, b'data: {"n":1}\n\n'), Frame(1_150_250_000, b"")),
        ),
        Ending(EndKind.COMPLETE, 1151 * MS),
        ("truncate:events=1", "hang"),
        1764470000.25,
    )
    bare = Interaction(
        Request("GET", "/m"), None, Ending(EndKind.NO_RESPONSE, 3 * MS, "connection refused")
    )
    c = Cassette((full, bare), (("recorded-by", "replayproxy 0.1"),))
    assert dumps(c) == "\n".join(
        [
            BANNER,
            "replayproxy-cassette-text 1",
            'meta recorded-by "replayproxy 0.1"',
            "",
            "interaction 0",
            "  recorded-at 1764470000.25",
            "  request POST https://api.example.test/v1/chat HTTP/1.1",
            "  > content-type: application/json",
            "  body '{\"stream\":true}'",
            "  response 200 OK HTTP/2.0 +120.5ms",
            "  < content-type: text/event-stream",
            "  +130ms      'data: {\"n\":1}\\n\\n'",
            '  +1150.25ms  ""',
            "  end complete +1151ms",
            "  fault truncate:events=1",
            "  fault hang",
            "",
            "interaction 1",
            "  request GET /m HTTP/1.1",
            "  response none",
            '  end no_response +3ms "connection refused"',
            "",
        ]
    )
    assert loads(dumps(c)) == c


def test_an_empty_cassette_is_the_banner_and_the_magic_line() -> None:
    """No meta, no interactions: two lines."""
    assert dumps(Cassette(())) == BANNER + "\nreplayproxy-cassette-text 1\n"
