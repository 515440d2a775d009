"""The tokens of the cassette text form, read and written: one line split into words and
values, and values written as tokens (:func:`format_time`, :func:`quote`) (pure).

A line is bare words, quoted byte strings with backslash escapes (``\\n``, ``\\x00``, ...),
``base64:`` blobs and ``+12.5ms`` offsets. Every problem is a :class:`LineError` naming the
column where it can; :mod:`replayproxy._core.cassette.textload` puts lines together into
interactions and adds the line number. Numbers are bounded before they are converted.

:func:`escape`, the inverse of :func:`unescape`, is the one way bytes are printed anywhere
(terminal, text form, diffs): valid printable UTF-8 as is, ``\\n \\r \\t \\\\`` as such, everything
else (control bytes, invalid UTF-8, invisible or line-breaking characters such as U+2028 or
U+FEFF) as ``\\xNN`` per byte. So a terminal never receives a raw control sequence, and every
byte stays visible and recoverable.
"""

from __future__ import annotations

import base64
import binascii
import re

from replayproxy._errors import UsageError

__all__ = [
    "SURROGATE",
    "LineError",
    "as_int",
    "as_text",
    "escape",
    "format_time",
    "from_base64",
    "one_value",
    "parse_bytes",
    "parse_time",
    "quote",
    "quoted",
    "skip_space",
    "tokens",
    "unescape",
]


class LineError(UsageError):
    """A problem on the current line; :func:`~replayproxy._core.cassette.textload.loads` adds
    the line number."""


# Digits are bounded before int() sees them: 20 whole digits are more than any offset needs
# (the range check comes later), and int() of thousands of digits is slow or refused. ASCII
# digits only: `\d` also matches "٣", which int() reads as 3.
_TIME = re.compile(r"([+-])([0-9]{1,20})(?:\.([0-9]{1,30}))?(ns|us|ms|s)")
_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# A lone surrogate is what an invalid UTF-8 byte becomes when text is read with
# surrogateescape (stdin or argv under a C locale): refused, as a file that is not UTF-8 is,
# rather than written as three other bytes.
SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "\\": 0x5C, '"': 0x22, "'": 0x27}


def format_time(ns: int) -> str:
    """Exact nanoseconds as signed milliseconds, trailing zeros dropped: ``+12.5ms``."""
    sign = "-" if ns < 0 else "+"
    whole, frac = divmod(abs(ns), 1_000_000)
    text = f"{whole}.{frac:06d}".rstrip("0").rstrip(".")
    return f"{sign}{text}ms"


def parse_time(token: str) -> int:
    """``+12.5ms`` (units ns, us, ms, s; sign required) -> exact integer nanoseconds."""
    m = _TIME.fullmatch(token)
    if m is None:
        raise LineError(f"bad time {token[:40]!r} (expected e.g. +12.5ms, +2s, -300us)")
    sign, whole, frac_s, unit = m.groups()
    frac: str = frac_s or ""
    scale = _UNIT_NS[unit]
    denominator = int(10 ** len(frac))
    ns, rest = divmod(int(whole + frac) * scale, denominator)
    if rest:
        raise LineError(f"time {token[:40]!r} is finer than a nanosecond")
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
                raise LineError(f"bad escape {line[i : i + 4]!r} at column {i + 1}")
            continue
        if SURROGATE.match(ch):  # unescape() of a command-line argument, say
            raise LineError(f"not UTF-8 text (column {i + 1})")
        out += ch.encode("utf-8")
        i += 1
    if stop is not None:
        raise LineError("unterminated quoted string")
    return bytes(out), i


def quoted(line: str, pos: int) -> tuple[bytes, int]:
    """Parse the quoted string starting at ``line[pos]``; return its bytes and the next index."""
    return _decode(line, pos + 1, line[pos])


def unescape(text: str) -> bytes:
    """``text`` with the text form's backslash escapes decoded (no quotes around it)."""
    return _decode(text, 0, None)[0]


_SIMPLE = {0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def _visible(ch: str) -> bool:
    # str.isprintable() is False for control, format (bidi, BOM, zero-width), line/paragraph
    # separators and non-ASCII spaces: all things that would hide or move text on a terminal.
    # (Only non-ASCII characters get here: the ASCII space is handled before.)
    return ch.isprintable()


def escape(data: bytes, quote: str = "") -> str:
    """``data`` as one line of safe text; ``quote`` (``"`` or ``'``) is escaped too if given."""
    out: list[str] = []
    text = data.decode("utf-8", errors="surrogateescape")
    for ch in text:
        code = ord(ch)
        if code < 0x80:
            if code in _SIMPLE:
                out.append(_SIMPLE[code])
            elif ch == quote:
                out.append("\\" + ch)
            elif 0x20 <= code < 0x7F:
                out.append(ch)
            else:
                out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # an invalid UTF-8 byte, smuggled by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif _visible(ch):
            out.append(ch)
        else:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
    return "".join(out)


def quote(data: bytes) -> str:
    """Bytes as a quoted string (the quote char needing fewer escapes), or ``base64:`` if binary."""
    q = "'" if data.count(b'"') > data.count(b"'") else '"'
    text = escape(data, q)
    # Mostly-binary data (compressed bodies, protobuf) reads better and diffs smaller as base64.
    if len(data) >= 16 and len(text) > 2 * len(data):
        return "base64:" + base64.b64encode(data).decode("ascii")
    return q + text + q


def skip_space(line: str, pos: int) -> int:
    """The index of the first character at or after ``pos`` that is not a space or tab."""
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


def tokens(line: str, pos: int = 0) -> list[str | bytes]:
    """Split ``line[pos:]`` into bare words (str) and quoted / base64 values (bytes). Columns in
    errors count from the start of ``line``, so pass the line as written, indentation and all."""
    out: list[str | bytes] = []
    pos = skip_space(line, pos)
    while pos < len(line):
        if line[pos] in "\"'":
            value, pos = quoted(line, pos)
            out.append(value)
            if pos < len(line) and line[pos] not in " \t":
                raise LineError(f"expected a space after the quoted string at column {pos + 1}")
        else:
            end = pos
            while end < len(line) and line[end] not in " \t":
                end += 1
            word = line[pos:end]
            out.append(from_base64(word[7:]) if word.startswith("base64:") else word)
            pos = end
        pos = skip_space(line, pos)
    return out


def from_base64(text: str) -> bytes:
    """The bytes of a ``base64:`` value (``text`` is what follows the prefix)."""
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise LineError(f"bad base64 value {text[:20]!r}") from None


def parse_bytes(token: str) -> bytes:
    """A whole token as written in the text form (quoted or ``base64:``) -> its bytes."""
    return one_value(token, 0)


def one_value(line: str, pos: int) -> bytes:
    """The one quoted or ``base64:`` value that ``line[pos:]`` must be."""
    toks = tokens(line, pos)
    if len(toks) != 1 or not isinstance(toks[0], bytes):
        raise LineError(f"expected one quoted string or base64: value, got {line[pos:]!r}")
    return toks[0]


def as_text(tok: str | bytes, what: str) -> str:
    """A token as text: a bare word, or a quoted value that is UTF-8 (``what`` names it)."""
    if isinstance(tok, str):
        return tok
    try:
        return tok.decode("utf-8")
    except UnicodeDecodeError:
        raise LineError(f"{what} is not valid UTF-8") from None


def as_int(tok: str | bytes, what: str) -> int:
    """A bare token as an integer of at most 20 digits (``what`` names it)."""
    if isinstance(tok, str) and re.fullmatch(r"-?[0-9]{1,20}", tok):
        return int(tok)
    shown = repr(tok) if len(tok) <= 20 else repr(tok[:20]) + "..."
    raise LineError(f"{what} must be an integer of at most 20 digits, got {shown}")
