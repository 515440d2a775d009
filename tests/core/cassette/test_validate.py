"""The load-time checks of a cassette's fields: each rule, the field it names, its exact text."""

from __future__ import annotations

import pytest

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.cassette.validate import (
    MAX_OFFSET_NS,
    InvalidField,
    check_end,
    check_interaction,
    check_meta,
    check_offset,
    check_request,
    check_response,
)

_END = Ending(EndKind.COMPLETE, 0)
_LONE_SURROGATE = "\ud800"


def _message(check: object, arg: object) -> str:
    with pytest.raises(InvalidField) as caught:
        check(arg)  # type: ignore[operator]
    return str(caught.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "x must be an integer, got bool"),
        (1.0, "x must be an integer, got float"),
        ("1", "x must be an integer, got str"),
        (-1, "x is negative (-1)"),
        (MAX_OFFSET_NS + 1, f"x is out of range ({MAX_OFFSET_NS + 1} > {2**53} ns)"),
    ],
)
def test_offset_rules(value: object, message: str) -> None:
    """An offset is an int (not a bool), not negative, at most 2**53 ns."""
    with pytest.raises(InvalidField) as caught:
        check_offset(value, "x")  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert caught.value.field == "x"
    assert caught.value.problem == message.removeprefix("x ")


@pytest.mark.parametrize("value", [0, 1, MAX_OFFSET_NS])
def test_offsets_in_range_pass(value: int) -> None:
    """0 and 2**53 are the inclusive bounds."""
    check_offset(value, "x")
    check_end(Ending(EndKind.RESET, value))


def _req(**kw: object) -> Request:
    args: dict[str, object] = {"method": "POST", "url": "https://api.example.com/v1/x"}
    args.update(kw)
    return Request(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (_req(method=""), "request.method '' is not an HTTP method"),
        (_req(method="GE T"), "request.method 'GE T' is not an HTTP method"),
        (_req(method="P" * 30 + " "), f"request.method {'P' * 20!r} is not an HTTP method"),
        (_req(url="https://a/\ud800"), "request.url is not valid UTF-8 text"),
        (_req(url="https://a/ b"), "request.url contains a space"),
        (_req(url="https://a/\tb"), "request.url contains a tab"),
        (_req(url="https://a/\x7f"), "request.url contains control character 0x7f"),
        (_req(url="https://a/\x01"), "request.url contains control character 0x01"),
        (_req(url="https://a/\r"), "request.url contains CR"),
        (_req(url="https://a/\n"), "request.url contains LF"),
        (_req(url="https://a/\x00"), "request.url contains NUL"),
        (
            _req(url="https://a:99999/"),
            "request.url 'https://a:99999/' does not parse (Port out of range 0-65535)",
        ),
        (
            _req(url="https://[::1/"),
            "request.url 'https://[::1/' does not parse (Invalid IPv6 URL)",
        ),
        (
            _req(url="https://[::1/" + "a" * 70),
            f"request.url {('https://[::1/' + 'a' * 70)[:60]!r} does not parse (Invalid IPv6 URL)",
        ),
        (
            _req(url="ftp://host/x"),
            "request.url 'ftp://host/x' is neither an absolute http(s) URL nor a /path",
        ),
        (
            _req(url="https:///x"),
            "request.url 'https:///x' is neither an absolute http(s) URL nor a /path",
        ),
        (
            _req(url="x/y"),
            "request.url 'x/y' is neither an absolute http(s) URL nor a /path",
        ),
        (
            _req(url="//host/y"),
            "request.url '//host/y' is neither an absolute http(s) URL nor a /path",
        ),
        (
            _req(url="ftp:/" + "a" * 80),
            f"request.url {('ftp:/' + 'a' * 80)[:60]!r} is neither an absolute http(s) URL "
            "nor a /path",
        ),
        (
            _req(http_version="HTTP/1.10"),
            "request.http_version 'HTTP/1.10' is not an HTTP version (HTTP/1.1, HTTP/2.0)",
        ),
        (
            _req(http_version="http/1.1"),
            "request.http_version 'http/1.1' is not an HTTP version (HTTP/1.1, HTTP/2.0)",
        ),
        (
            _req(http_version="HTTP/11"),
            "request.http_version 'HTTP/11' is not an HTTP version (HTTP/1.1, HTTP/2.0)",
        ),
        (
            _req(http_version="X" * 30),
            f"request.http_version {'X' * 20!r} is not an HTTP version (HTTP/1.1, HTTP/2.0)",
        ),
        (_req(headers=((b"", b"v"),)), "request.headers[0].name is empty"),
        (
            _req(headers=((b"a", b"1"), (b"b:c", b"v"))),
            "request.headers[1].name contains ':'",
        ),
        (_req(headers=((b"a b", b"v"),)), "request.headers[0].name contains a space"),
        (_req(headers=((b"a\tb", b"v"),)), "request.headers[0].name contains a tab"),
        (
            _req(headers=((b"a\rb", b"v"),)),
            "request.headers[0].name contains CR (header injection)",
        ),
        (
            _req(headers=((b"a\nb", b"v"),)),
            "request.headers[0].name contains LF (header injection)",
        ),
        (
            _req(headers=((b"a\x00b", b"v"),)),
            "request.headers[0].name contains NUL (header injection)",
        ),
        (
            _req(headers=((b"a", b"v\r\nx: y"),)),
            "request.headers[0].value contains CR (header injection)",
        ),
        (
            _req(headers=((b"a", b"v\nx"),)),
            "request.headers[0].value contains LF (header injection)",
        ),
        (
            _req(headers=((b"a", b"\x00"),)),
            "request.headers[0].value contains NUL (header injection)",
        ),
    ],
)
def test_request_rules(request_: Request, message: str) -> None:
    """Each bad request field is named with the rule it breaks."""
    assert _message(check_request, request_) == message


@pytest.mark.parametrize(
    "request_",
    [
        _req(),
        _req(url="/v1/chat/completions?x=1"),
        _req(url="/"),
        _req(url="http://h:0/"),
        _req(url="http://h:65535/"),
        _req(url="ws://h/x"),
        _req(url="wss://h/x"),
        _req(url="HTTPS://h/x"),
        _req(method="M-SEARCH", http_version="HTTP/2"),
        _req(http_version="HTTP/2.0", headers=((b"x-a", b"v a\tb:c"),)),
    ],
)
def test_good_requests_pass(request_: Request) -> None:
    """Absolute http/https/ws/wss URLs, bare paths, token methods, HTTP/n[.n] pass."""
    check_request(request_)


def _resp(**kw: object) -> Response:
    args: dict[str, object] = {"status": 200}
    args.update(kw)
    return Response(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (_resp(status=99), "response.status 99 is not an HTTP status (100-599)"),
        (_resp(status=600), "response.status 600 is not an HTTP status (100-599)"),
        (_resp(status=True), "response.status True is not an HTTP status (100-599)"),
        (_resp(status="200"), "response.status '200' is not an HTTP status (100-599)"),
        (_resp(status=200.0), "response.status 200.0 is not an HTTP status (100-599)"),
        (_resp(reason="O\rK"), "response.reason contains CR (header injection)"),
        (_resp(reason="O\nK"), "response.reason contains LF (header injection)"),
        (_resp(reason="O\x00K"), "response.reason contains NUL (header injection)"),
        (_resp(reason=_LONE_SURROGATE), "response.reason is not valid UTF-8 text"),
        (
            _resp(http_version="HTTP/x"),
            "response.http_version 'HTTP/x' is not an HTTP version (HTTP/1.1, HTTP/2.0)",
        ),
        (
            _resp(headers=((b"ok", b"1"), (b"ok", b"2"), (b"", b""))),
            "response.headers[2].name is empty",
        ),
        (_resp(head_offset_ns=-5), "response.head_offset_ns is negative (-5)"),
        (
            _resp(frames=(Frame(5, b"a"), Frame(4, b"b"))),
            "response.frames[1].offset_ns goes backwards (4 after 5); offsets never decrease",
        ),
        (
            _resp(frames=(Frame(0, b"a"), Frame(-1, b"b"))),
            "response.frames[1].offset_ns is negative (-1)",
        ),
        (
            _resp(frames=(Frame(MAX_OFFSET_NS + 1, b"a"),)),
            f"response.frames[0].offset_ns is out of range ({MAX_OFFSET_NS + 1} > "
            f"{MAX_OFFSET_NS} ns)",
        ),
        (
            _resp(frames=(Frame(True, b"a"),)),
            "response.frames[0].offset_ns must be an integer, got bool",
        ),
        (
            _resp(frames=(Frame(1.5, b"a"),)),
            "response.frames[0].offset_ns must be an integer, got float",
        ),
    ],
)
def test_response_rules(response: Response, message: str) -> None:
    """Each bad response field is named with the rule it breaks."""
    assert _message(check_response, response) == message


@pytest.mark.parametrize(
    "response",
    [
        _resp(status=100),
        _resp(status=599, reason="Any text: with colons\tand tabs"),
        _resp(frames=(Frame(0, b"a"), Frame(0, b"b"), Frame(MAX_OFFSET_NS, b"c"))),
    ],
)
def test_good_responses_pass(response: Response) -> None:
    """Status bounds are inclusive; equal offsets and 2**53 are allowed."""
    check_response(response)


def _inter(**kw: object) -> Interaction:
    args: dict[str, object] = {"request": _req(), "response": _resp(), "end": _END}
    args.update(kw)
    return Interaction(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("interaction", "message"),
    [
        (_inter(request=_req(method="")), "request.method '' is not an HTTP method"),
        (_inter(response=_resp(status=0)), "response.status 0 is not an HTTP status (100-599)"),
        (
            _inter(end=Ending(EndKind.ERROR, -2)),
            "end.offset_ns is negative (-2)",
        ),
        (
            _inter(end=Ending(EndKind.ERROR, 0, _LONE_SURROGATE)),
            "end.message is not valid UTF-8 text",
        ),
        (
            _inter(faults=("delay:ms=1", "drop\n")),
            "faults[1] contains LF (header injection)",
        ),
        (_inter(faults=(_LONE_SURROGATE,)), "faults[0] is not valid UTF-8 text"),
        (_inter(recorded_at=float("nan")), "recorded_at is not a finite number (nan)"),
        (_inter(recorded_at=float("inf")), "recorded_at is not a finite number (inf)"),
        (_inter(recorded_at=float("-inf")), "recorded_at is not a finite number (-inf)"),
    ],
)
def test_interaction_rules(interaction: Interaction, message: str) -> None:
    """Every field group of an interaction is checked, with the field named."""
    assert _message(check_interaction, interaction) == message


def test_good_interactions_pass() -> None:
    """No response (a refused connection), a finite recorded_at and good faults pass."""
    check_interaction(_inter(response=None, recorded_at=1.7e9, faults=("drop:at=1",)))
    check_interaction(_inter(recorded_at=None))


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ((("ok", "1"), (_LONE_SURROGATE, "v")), "meta key is not valid UTF-8 text"),
        ((("k" * 30, _LONE_SURROGATE),), f"meta[{'k' * 20!r}] is not valid UTF-8 text"),
    ],
)
def test_meta_rules(meta: tuple[tuple[str, str], ...], message: str) -> None:
    """Meta keys and values must be writable as UTF-8; the value names its key."""
    assert _message(check_meta, meta) == message
    check_meta((("k", "v"), ("ünï", "cödé")))
