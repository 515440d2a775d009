"""Reading the cassette text form back into a cassette: the inverse of ``textform.dumps``.

A small line parser: each line is split into tokens (bare words, quoted byte strings with
escapes, ``base64:`` blobs, ``+12.5ms`` offsets), and an interaction is assembled in a draft
until the next ``interaction`` line. Every mistake is a one-line CassetteFormatError naming the
line, never a traceback. A finished interaction goes through the same checks as a decoded one
(:mod:`replayproxy.core.cassette.validate`), and numbers are bounded before they are converted, so
no text can give a cassette that cannot be written or served. The grammar is in
``docs/text-format.md``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field

from replayproxy.core.cassette import validate
from replayproxy.core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
)
from replayproxy.core.cassette.textform import MAGIC
from replayproxy.core.websocket import text as ws_text
from replayproxy.core.websocket.model import WebSocketSession, WsClose, WsMessage
from replayproxy.errors import CassetteFormatError, UsageError

__all__ = ["loads", "parse_bytes", "parse_time", "unescape"]


class _Bad(UsageError):
    """A problem on the current line; :func:`loads` adds the line number."""


# Digits are bounded before int() sees them: 20 whole digits are more than any offset needs
# (the range check comes later), and int() of thousands of digits is slow or refused. ASCII
# digits only: `\d` also matches "٣", which int() reads as 3.
_TIME = re.compile(r"([+-])([0-9]{1,20})(?:\.([0-9]{1,30}))?(ns|us|ms|s)")
_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# A lone surrogate is what an invalid UTF-8 byte becomes when text is read with
# surrogateescape (stdin or argv under a C locale): refused, as a file that is not UTF-8 is,
# rather than written as three other bytes.
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "\\": 0x5C, '"': 0x22, "'": 0x27}


def parse_time(token: str) -> int:
    """``+12.5ms`` (units ns, us, ms, s; sign required) -> exact integer nanoseconds."""
    m = _TIME.fullmatch(token)
    if m is None:
        raise _Bad(f"bad time {token[:40]!r} (expected e.g. +12.5ms, +2s, -300us)")
    sign, whole, frac_s, unit = m.groups()
    frac: str = frac_s or ""
    scale = _UNIT_NS[unit]
    denominator = int(10 ** len(frac))
    ns, rest = divmod(int(whole + frac) * scale, denominator)
    if rest:
        raise _Bad(f"time {token[:40]!r} is finer than a nanosecond")
    return -ns if sign == "-" else ns


def _decode(line: str, i: int, stop: str | None) -> tuple[bytes, int]:
    """Decode escapes from ``line[i]`` up to the ``stop`` char (or the end of the line when
    ``stop`` is None); return the bytes and the index just past the stop char."""
    out = bytearray()
    while i < len(line):
        ch = line[i]
        if ch == stop:
            return bytes(out), i + 1
        if ch == "\\":
            esc = line[i + 1 : i + 2]
            if esc in _ESCAPES:
                out.append(_ESCAPES[esc])
                i += 2
            elif esc == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", line[i + 2 : i + 4]):
                out.append(int(line[i + 2 : i + 4], 16))
                i += 4
            else:
                raise _Bad(f"bad escape {line[i : i + 4]!r} at column {i + 1}")
            continue
        if _SURROGATE.match(ch):  # unescape() of a command-line argument, say
            raise _Bad(f"not UTF-8 text (column {i + 1})")
        out += ch.encode("utf-8")
        i += 1
    if stop is not None:
        raise _Bad("unterminated quoted string")
    return bytes(out), i


def _quoted(line: str, pos: int) -> tuple[bytes, int]:
    """Parse the quoted string starting at ``line[pos]``; return its bytes and the next index."""
    return _decode(line, pos + 1, line[pos])


def unescape(text: str) -> bytes:
    """``text`` with the text form's backslash escapes decoded (no quotes around it)."""
    return _decode(text, 0, None)[0]


def _skip_space(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


def _tokens(line: str, pos: int = 0) -> list[str | bytes]:
    """Split ``line[pos:]`` into bare words (str) and quoted / base64 values (bytes). Columns in
    errors count from the start of ``line``, so pass the line as written, indentation and all."""
    out: list[str | bytes] = []
    pos = _skip_space(line, pos)
    while pos < len(line):
        if line[pos] in "\"'":
            value, pos = _quoted(line, pos)
            out.append(value)
            if pos < len(line) and line[pos] not in " \t":
                raise _Bad(f"expected a space after the quoted string at column {pos + 1}")
        else:
            end = pos
            while end < len(line) and line[end] not in " \t":
                end += 1
            word = line[pos:end]
            out.append(_base64(word[7:]) if word.startswith("base64:") else word)
            pos = end
        pos = _skip_space(line, pos)
    return out


def _base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise _Bad(f"bad base64 value {text[:20]!r}") from None


def parse_bytes(token: str) -> bytes:
    """A whole token as written in the text form (quoted or ``base64:``) -> its bytes."""
    return _value(token, 0)


def _value(line: str, pos: int) -> bytes:
    """The one quoted or ``base64:`` value that ``line[pos:]`` must be."""
    toks = _tokens(line, pos)
    if len(toks) != 1 or not isinstance(toks[0], bytes):
        raise _Bad(f"expected one quoted string or base64: value, got {line[pos:]!r}")
    return toks[0]


def _text(tok: str | bytes, what: str) -> str:
    if isinstance(tok, str):
        return tok
    try:
        return tok.decode("utf-8")
    except UnicodeDecodeError:
        raise _Bad(f"{what} is not valid UTF-8") from None


def _int(tok: str | bytes, what: str) -> int:
    if isinstance(tok, str) and re.fullmatch(r"-?[0-9]{1,20}", tok):
        return int(tok)
    shown = repr(tok) if len(tok) <= 20 else repr(tok[:20]) + "..."
    raise _Bad(f"{what} must be an integer of at most 20 digits, got {shown}")


def _parse_header(rest: str, pos: int) -> Header:
    """The ``NAME: VALUE`` of a header line from ``rest[pos]`` (``rest`` is the whole line, so
    error columns are the line's)."""
    pos = _skip_space(rest, pos)
    if pos < len(rest) and rest[pos] in "\"'":
        name, pos = _quoted(rest, pos)
    else:  # a base64: or bare name, up to the colon (the base64 alphabet has no ':')
        b64 = rest.startswith("base64:", pos)
        start = pos + 7 if b64 else pos
        text, colon, _ = rest[start:].partition(":")
        if not colon:
            raise _Bad("header line needs NAME: VALUE")
        name = _base64(text) if b64 else text.strip().encode("utf-8")
        pos = start + len(text)
    if rest[pos : pos + 1] != ":":
        raise _Bad("header line needs a ':' after the name")
    pos = _skip_space(rest, pos + 1)
    raw = rest[pos:].rstrip(" \t")
    if raw[:1] in ("'", '"') or raw.startswith("base64:"):
        return name, _value(rest.rstrip(" \t"), pos)
    return name, raw.encode("utf-8")


@dataclass
class _Draft:
    """An interaction being read, section by section."""

    line: int
    """The number of its ``interaction`` line."""

    request: Request | None = None
    req_headers: list[Header] = field(default_factory=list)
    body: bytes = b""
    response_line: bool = False
    """A ``response`` line was read (``response none`` leaves ``response`` None)."""
    response: Response | None = None
    resp_headers: list[Header] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    end: Ending | None = None
    faults: list[str] = field(default_factory=list)
    recorded_at: float | None = None
    ws_messages: list[WsMessage] = field(default_factory=list)
    ws_end: WsClose | None = None

    def section(self) -> str:
        if self.end is not None:
            return "end"
        if self.response_line:
            return "response"
        if self.request is not None:
            return "request"
        return "start"

    def finish(self) -> Interaction:
        if self.request is None:
            raise _Bad("interaction has no request line")
        if not self.response_line:
            raise _Bad("interaction has no response line (write `response none` if none came)")
        if self.end is None:
            raise _Bad("interaction has no end line")
        request = Request(
            self.request.method,
            self.request.url,
            self.request.http_version,
            tuple(self.req_headers),
            self.body,
        )
        response = None
        if self.response is not None:
            r = self.response
            response = Response(
                r.status,
                r.reason,
                r.http_version,
                tuple(self.resp_headers),
                r.head_offset_ns,
                tuple(self.frames),
            )
        websocket = None
        if self.ws_end is not None:
            websocket = WebSocketSession(tuple(self.ws_messages), self.ws_end)
        elif self.ws_messages:
            raise _Bad("WebSocket messages need a `ws-end` line after them")
        interaction = Interaction(
            request, response, self.end, tuple(self.faults), self.recorded_at, websocket
        )
        try:
            validate.check_interaction(interaction)
        except validate.InvalidField as e:
            raise _Bad(str(e)) from None
        return interaction


def _need(toks: list[str | bytes], n: int, usage: str) -> None:
    if len(toks) != n:
        raise _Bad(f"expected `{usage}`")


def _line(d: _Draft, line: str) -> None:
    stripped = line.strip(" \t")
    sec = d.section()
    if stripped.startswith((">", "<")):
        sigil = stripped[0]
        if sigil == ">" and (sec != "request" or d.body):
            raise _Bad("request header line `>` must follow the request line (before body)")
        if sigil == "<" and (sec != "response" or d.response is None or d.frames):
            raise _Bad("response header line `<` must follow the response line (before frames)")
        indent = len(line) - len(line.lstrip(" \t"))
        header = _parse_header(line, indent + 1)
        (d.req_headers if sigil == ">" else d.resp_headers).append(header)
        return
    toks = _tokens(line)
    key = toks[0]
    if isinstance(key, str) and key[:1] in "+-" and key[1:2].isascii() and key[1:2].isdigit():
        if sec != "response" or d.response is None:
            raise _Bad("a frame line must follow a response line")
        _need(toks, 2, "+OFFSET 'BYTES'")
        if not isinstance(toks[1], bytes):
            raise _Bad("frame bytes must be quoted or base64:")
        d.frames.append(Frame(parse_time(key), toks[1]))
        return
    if key == "recorded-at":
        _need(toks, 2, "recorded-at SECONDS")
        if sec != "start":
            raise _Bad("recorded-at must come before the request line")
        try:
            d.recorded_at = float(_text(toks[1], "recorded-at"))
        except ValueError:
            raise _Bad("recorded-at must be a number") from None
        if not math.isfinite(d.recorded_at):
            raise _Bad("recorded-at must be a finite number")
    elif key == "request":
        _need(toks, 4, "request METHOD URL HTTP-VERSION")
        if sec != "start":
            raise _Bad("second request line in one interaction")
        d.request = Request(
            _text(toks[1], "method"), _text(toks[2], "url"), _text(toks[3], "http version")
        )
    elif key == "body":
        _need(toks, 2, "body 'BYTES'")
        if sec != "request" or d.body:
            raise _Bad("body must follow the request line and its headers, once")
        if not isinstance(toks[1], bytes):
            raise _Bad("body must be quoted or base64:")
        d.body = toks[1]
    elif key == "response":
        if sec != "request":
            raise _Bad("response line must follow the request")
        if toks[1:] == ["none"]:
            d.response_line = True
            return
        _need(toks, 5, "response STATUS REASON HTTP-VERSION +HEAD-OFFSET")
        d.response_line = True
        d.response = Response(
            _int(toks[1], "status"),
            _text(toks[2], "reason"),
            _text(toks[3], "http version"),
            head_offset_ns=parse_time(_text(toks[4], "head offset")),
        )
    elif key == "end":
        if sec != "response":
            raise _Bad("end line must follow the response")
        if len(toks) not in (3, 4):
            raise _Bad("expected `end KIND +OFFSET [MESSAGE]`")
        kind_s = _text(toks[1], "end kind")
        try:
            kind = EndKind(kind_s)
        except ValueError:
            valid = ", ".join(k.value for k in EndKind)
            raise _Bad(f"end kind {kind_s!r} is not one of: {valid}") from None
        message = _text(toks[3], "end message") if len(toks) == 4 else ""
        d.end = Ending(kind, parse_time(_text(toks[2], "end offset")), message)
    elif isinstance(key, str) and key in ws_text.KEYS:
        if sec != "end" or d.faults or d.ws_end is not None:
            raise _Bad(f"{key} lines come after the end line, before faults, ws-end last")
        try:
            item = ws_text.read_line(key, toks, parse_time)
        except ws_text.WsTextError as e:
            raise _Bad(str(e)) from None
        if isinstance(item, WsClose):
            d.ws_end = item
        else:
            d.ws_messages.append(item)
    elif key == "fault":
        _need(toks, 2, "fault SPEC")
        if sec != "end":
            raise _Bad("fault lines come after the end line")
        d.faults.append(_text(toks[1], "fault"))
    else:
        raise _Bad(f"unknown line starting with {key!r}")


def loads(text: str) -> Cassette:
    """Parse the text form. Raises CassetteFormatError naming the line on any mistake."""
    meta: list[tuple[str, str]] = []
    interactions: list[Interaction] = []
    draft: _Draft | None = None
    seen_magic = False
    lineno = 0

    def finish(d: _Draft) -> Interaction:
        nonlocal lineno
        lineno = d.line  # what is missing is reported against the `interaction` line
        try:
            return d.finish()
        except _Bad as e:
            raise _Bad(f"interaction {len(interactions)}: {e}") from None

    try:
        for this_line, raw in enumerate(text.split("\n"), start=1):
            lineno = this_line
            line = raw[:-1] if raw.endswith("\r") else raw  # tolerate CRLF editors
            bad = _SURROGATE.search(line)
            if bad:
                raise _Bad(f"not UTF-8 text (column {bad.start() + 1})")
            stripped = line.strip(" \t")
            if not stripped or stripped.startswith("#"):
                continue
            if not seen_magic:
                if stripped != MAGIC:
                    raise _Bad(f"not a cassette text form (first line must be {MAGIC!r})")
                seen_magic = True
                continue
            head = stripped.partition(" ")[0].partition("\t")[0]  # (str.split() splits at \x1f)
            if head == "interaction":
                if draft is not None:
                    interactions.append(finish(draft))
                draft = _Draft(line=this_line)
            elif head == "meta":
                toks = _tokens(line)
                _need(toks, 3, "meta KEY VALUE")
                if draft is not None:
                    raise _Bad("meta lines must come before the first interaction")
                meta.append((_text(toks[1], "meta key"), _text(toks[2], "meta value")))
            elif draft is None:
                raise _Bad(f"{head!r} outside an interaction (missing `interaction` line)")
            else:
                _line(draft, line)
        if not seen_magic:
            raise _Bad(f"empty text, expected {MAGIC!r}")
        if draft is not None:
            interactions.append(finish(draft))
        try:
            validate.check_meta(meta)
        except validate.InvalidField as e:
            raise _Bad(str(e)) from None
    except _Bad as e:
        raise CassetteFormatError(f"line {lineno}: {e}") from None
    return Cassette(tuple(interactions), tuple(meta))
