"""What a loaded cassette may contain: range and content checks, one function per field group.

Both loaders (the msgpack codec and the text form) build model objects and then pass each one
through :func:`check_interaction` / :func:`check_meta`, so a cassette that loads is safe to
serve, match, check and re-encode whatever its origin: no status line or header that could
inject into the response sent to a client (CR, LF, NUL), no URL that a later ``urlsplit``
cannot parse, no offset that is negative, out of range or going backwards, no text that cannot
be written back as UTF-8. The rules are listed in ``docs/reference/cassette-format.md`` §7.

A problem is an :class:`InvalidField` naming the field (``response.headers[2].name``); the
loaders add where it was (byte offset or line, interaction index) and raise
:class:`~replayproxy._errors.CassetteFormatError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from replayproxy._core.cassette.model import Ending, Frame, Header, Interaction, Request, Response
from replayproxy._core.cassette.websocket import MAX_CLOSE_CODE, MIN_CLOSE_CODE, WebSocketSession

__all__ = [
    "MAX_OFFSET_NS",
    "URL_SCHEMES",
    "InvalidField",
    "check_end",
    "check_interaction",
    "check_meta",
    "check_offset",
    "check_request",
    "check_response",
    "check_websocket",
]

MAX_OFFSET_NS = 2**53
"""The largest offset a cassette may hold (about 104 days). Every offset is then exact as a
float too, so timing arithmetic (``--speed``) can neither overflow nor round an order away."""

URL_SCHEMES = ("http", "https", "ws", "wss")

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HTTP_VERSION = re.compile(r"HTTP/[0-9](?:\.[0-9])?")
_FORBIDDEN_IN_LINE = re.compile(r"[\r\n\x00]")
_FORBIDDEN_IN_URL = re.compile(r"[\x00-\x20\x7f]")
_FORBIDDEN_IN_NAME = re.compile(rb"[\r\n\x00:\x20\t]")
_FORBIDDEN_IN_VALUE = re.compile(rb"[\r\n\x00]")


class InvalidField(ValueError):
    """One field breaks a rule. ``str()`` is ``"<field> <problem>"``, one line."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field} {problem}")


def _utf8(value: str, field: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidField(field, "is not valid UTF-8 text") from None


def _line_text(value: str, field: str) -> None:
    """Text that is written into a status or request line: no CR, LF or NUL."""
    _utf8(value, field)
    found = _FORBIDDEN_IN_LINE.search(value)
    if found:
        raise InvalidField(field, f"contains {_name_char(found.group())} (header injection)")


def _name_char(ch: str | bytes) -> str:
    code = ord(ch)  # a str or a bytes of one character
    return {0x0D: "CR", 0x0A: "LF", 0x00: "NUL", 0x20: "a space", 0x09: "a tab", 0x3A: "':'"}.get(
        code, f"control character {code:#04x}"
    )


def check_offset(value: int, field: str) -> None:
    """An offset in nanoseconds: an int (not a bool), 0 to :data:`MAX_OFFSET_NS`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidField(field, f"must be an integer, got {type(value).__name__}")
    if value < 0:
        raise InvalidField(field, f"is negative ({value})")
    if value > MAX_OFFSET_NS:
        raise InvalidField(field, f"is out of range ({value} > {MAX_OFFSET_NS} ns)")


def _check_headers(headers: Iterable[Header], field: str) -> None:
    for i, (name, value) in enumerate(headers):
        if not name:
            raise InvalidField(f"{field}[{i}].name", "is empty")
        found = _FORBIDDEN_IN_NAME.search(name)
        if found:
            problem = f"contains {_name_char(found.group())}"
            if found.group() in (b"\r", b"\n", b"\x00"):
                problem += " (header injection)"
            raise InvalidField(f"{field}[{i}].name", problem)
        found = _FORBIDDEN_IN_VALUE.search(value)
        if found:
            raise InvalidField(
                f"{field}[{i}].value", f"contains {_name_char(found.group())} (header injection)"
            )


def _check_http_version(value: str, field: str) -> None:
    if not _HTTP_VERSION.fullmatch(value):
        raise InvalidField(field, f"{value[:20]!r} is not an HTTP version (HTTP/1.1, HTTP/2.0)")


def _check_url(url: str) -> None:
    _utf8(url, "request.url")
    found = _FORBIDDEN_IN_URL.search(url)
    if found:
        raise InvalidField("request.url", f"contains {_name_char(found.group())}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not 0-65535
    except ValueError as e:
        raise InvalidField("request.url", f"{url[:60]!r} does not parse ({e})") from None
    # Absolute (as recorded) or a bare path (hand-written cassettes: the host is not matched).
    absolute = parts.scheme in URL_SCHEMES and bool(parts.hostname)
    if not absolute and not (url.startswith("/") and not parts.scheme and not parts.netloc):
        raise InvalidField(
            "request.url", f"{url[:60]!r} is neither an absolute http(s) URL nor a /path"
        )


def check_request(request: Request) -> None:
    """Method is a token, URL absolute and parseable, headers safe to send."""
    if not _TOKEN.fullmatch(request.method):
        raise InvalidField("request.method", f"{request.method[:20]!r} is not an HTTP method")
    _check_url(request.url)
    _check_http_version(request.http_version, "request.http_version")
    _check_headers(request.headers, "request.headers")


def _check_frames(frames: tuple[Frame, ...]) -> None:
    previous = 0
    for i, frame in enumerate(frames):
        at = frame.offset_ns
        # One cheap test per frame (a cassette can hold millions); the details only on failure.
        if type(at) is not int or not previous <= at <= MAX_OFFSET_NS:
            field = f"response.frames[{i}].offset_ns"
            check_offset(at, field)
            raise InvalidField(
                field, f"goes backwards ({at} after {previous}); offsets never decrease"
            )
        previous = at


def check_response(response: Response) -> None:
    """Status 100-599, reason and headers without CR/LF/NUL, offsets in range and in order."""
    status = response.status
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise InvalidField("response.status", f"{status!r} is not an HTTP status (100-599)")
    _line_text(response.reason, "response.reason")
    _check_http_version(response.http_version, "response.http_version")
    _check_headers(response.headers, "response.headers")
    check_offset(response.head_offset_ns, "response.head_offset_ns")
    _check_frames(response.frames)


def check_end(end: Ending) -> None:
    check_offset(end.offset_ns, "end.offset_ns")
    _utf8(end.message, "end.message")


def check_close_code(code: int | None, field: str = "websocket.close.code") -> None:
    """A WebSocket close code: ``None`` (none was sent) or what a close frame's 2 bytes hold."""
    if code is None:
        return
    if isinstance(code, bool) or not isinstance(code, int):
        raise InvalidField(field, f"must be an integer, got {type(code).__name__}")
    if not MIN_CLOSE_CODE <= code <= MAX_CLOSE_CODE:
        shown = str(code) if len(str(code)) <= 20 else str(code)[:20] + "..."
        raise InvalidField(
            field, f"{shown} is not a WebSocket close code ({MIN_CLOSE_CODE}-{MAX_CLOSE_CODE})"
        )


def check_websocket(session: WebSocketSession) -> None:
    """Message and close offsets in range like frame offsets (0 to :data:`MAX_OFFSET_NS`: a
    message at 2^63 ns would be an endless wait), and a close code that fits a close frame."""
    for i, m in enumerate(session.messages):
        if type(m.offset_ns) is not int or not 0 <= m.offset_ns <= MAX_OFFSET_NS:
            check_offset(m.offset_ns, f"websocket.messages[{i}].offset_ns")
    check_offset(session.close.offset_ns, "websocket.close.offset_ns")
    check_close_code(session.close.code)
    _utf8(session.close.reason, "websocket.close.reason")


def check_interaction(interaction: Interaction) -> None:
    """Every field group of one interaction; raises :class:`InvalidField` on the first problem."""
    check_request(interaction.request)
    if interaction.response is not None:
        check_response(interaction.response)
    check_end(interaction.end)
    for i, spec in enumerate(interaction.faults):
        _line_text(spec, f"faults[{i}]")
    recorded_at = interaction.recorded_at
    if recorded_at is not None and not math.isfinite(recorded_at):
        raise InvalidField("recorded_at", f"is not a finite number ({recorded_at})")
    if interaction.websocket is not None:
        check_websocket(interaction.websocket)


def check_meta(meta: Iterable[tuple[str, str]]) -> None:
    for key, value in meta:
        _utf8(key, "meta key")
        _utf8(value, f"meta[{key[:20]!r}]")
