"""Reading the cassette text form back into a cassette: the inverse of ``textform.dumps``.

A small line parser: each line is split into tokens (bare words, quoted byte strings with
escapes, ``base64:`` blobs, ``+12.5ms`` offsets: :mod:`replayproxy._core.cassette.texttokens`,
whose ``parse_time``, ``parse_bytes`` and ``unescape`` are re-exported here), and an
interaction is assembled in a draft until the next ``interaction`` line. Every mistake is a
one-line CassetteFormatError naming the line, never a traceback. A finished interaction goes
through the same checks as a decoded one (:mod:`replayproxy._core.cassette.validate`), and
numbers are bounded before they are converted, so no text can give a cassette that cannot be
written or served. The grammar is in ``docs/reference/text-format.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from replayproxy._core.cassette import validate
from replayproxy._core.cassette import websocket_text as ws_text
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.textform import MAGIC
from replayproxy._core.cassette.texttokens import (
    SURROGATE,
    LineError,
    as_int,
    as_text,
    from_base64,
    one_value,
    parse_bytes,
    parse_time,
    quoted,
    skip_space,
    tokens,
    unescape,
)
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsMessage
from replayproxy._errors import CassetteFormatError

__all__ = ["loads", "parse_bytes", "parse_time", "unescape"]


def _parse_header(rest: str, pos: int) -> Header:
    """The ``NAME: VALUE`` of a header line from ``rest[pos]`` (``rest`` is the whole line, so
    error columns are the line's)."""
    pos = skip_space(rest, pos)
    if pos < len(rest) and rest[pos] in "\"'":
        name, pos = quoted(rest, pos)
    else:  # a base64: or bare name, up to the colon (the base64 alphabet has no ':')
        b64 = rest.startswith("base64:", pos)
        start = pos + 7 if b64 else pos
        text, colon, _ = rest[start:].partition(":")
        if not colon:
            raise LineError("header line needs NAME: VALUE")
        name = from_base64(text) if b64 else text.strip().encode("utf-8")
        pos = start + len(text)
    if rest[pos : pos + 1] != ":":
        raise LineError("header line needs a ':' after the name")
    pos = skip_space(rest, pos + 1)
    raw = rest[pos:].rstrip(" \t")
    if raw[:1] in ("'", '"') or raw.startswith("base64:"):
        return name, one_value(rest.rstrip(" \t"), pos)
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
            raise LineError("interaction has no request line")
        if not self.response_line:
            raise LineError("interaction has no response line (write `response none` if none came)")
        if self.end is None:
            raise LineError("interaction has no end line")
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
            raise LineError("WebSocket messages need a `ws-end` line after them")
        interaction = Interaction(
            request, response, self.end, tuple(self.faults), self.recorded_at, websocket
        )
        try:
            validate.check_interaction(interaction)
        except validate.InvalidField as e:
            raise LineError(str(e)) from None
        return interaction


def _need(toks: list[str | bytes], n: int, usage: str) -> None:
    if len(toks) != n:
        raise LineError(f"expected `{usage}`")


def _line(d: _Draft, line: str) -> None:
    stripped = line.strip(" \t")
    sec = d.section()
    if stripped.startswith((">", "<")):
        sigil = stripped[0]
        if sigil == ">" and (sec != "request" or d.body):
            raise LineError("request header line `>` must follow the request line (before body)")
        if sigil == "<" and (sec != "response" or d.response is None or d.frames):
            raise LineError(
                "response header line `<` must follow the response line (before frames)"
            )
        indent = len(line) - len(line.lstrip(" \t"))
        header = _parse_header(line, indent + 1)
        (d.req_headers if sigil == ">" else d.resp_headers).append(header)
        return
    toks = tokens(line)
    key = toks[0]
    if isinstance(key, str) and key[:1] in "+-" and key[1:2].isascii() and key[1:2].isdigit():
        if sec != "response" or d.response is None:
            raise LineError("a frame line must follow a response line")
        _need(toks, 2, "+OFFSET 'BYTES'")
        if not isinstance(toks[1], bytes):
            raise LineError("frame bytes must be quoted or base64:")
        d.frames.append(Frame(parse_time(key), toks[1]))
        return
    if key == "recorded-at":
        _need(toks, 2, "recorded-at SECONDS")
        if sec != "start":
            raise LineError("recorded-at must come before the request line")
        try:
            d.recorded_at = float(as_text(toks[1], "recorded-at"))
        except ValueError:
            raise LineError("recorded-at must be a number") from None
        if not math.isfinite(d.recorded_at):
            raise LineError("recorded-at must be a finite number")
    elif key == "request":
        _need(toks, 4, "request METHOD URL HTTP-VERSION")
        if sec != "start":
            raise LineError("second request line in one interaction")
        d.request = Request(
            as_text(toks[1], "method"), as_text(toks[2], "url"), as_text(toks[3], "http version")
        )
    elif key == "body":
        _need(toks, 2, "body 'BYTES'")
        if sec != "request" or d.body:
            raise LineError("body must follow the request line and its headers, once")
        if not isinstance(toks[1], bytes):
            raise LineError("body must be quoted or base64:")
        d.body = toks[1]
    elif key == "response":
        if sec != "request":
            raise LineError("response line must follow the request")
        if toks[1:] == ["none"]:
            d.response_line = True
            return
        _need(toks, 5, "response STATUS REASON HTTP-VERSION +HEAD-OFFSET")
        d.response_line = True
        d.response = Response(
            as_int(toks[1], "status"),
            as_text(toks[2], "reason"),
            as_text(toks[3], "http version"),
            head_offset_ns=parse_time(as_text(toks[4], "head offset")),
        )
    elif key == "end":
        if sec != "response":
            raise LineError("end line must follow the response")
        if len(toks) not in (3, 4):
            raise LineError("expected `end KIND +OFFSET [MESSAGE]`")
        kind_s = as_text(toks[1], "end kind")
        try:
            kind = EndKind(kind_s)
        except ValueError:
            valid = ", ".join(k.value for k in EndKind)
            raise LineError(f"end kind {kind_s!r} is not one of: {valid}") from None
        message = as_text(toks[3], "end message") if len(toks) == 4 else ""
        d.end = Ending(kind, parse_time(as_text(toks[2], "end offset")), message)
    elif isinstance(key, str) and key in ws_text.KEYS:
        if sec != "end" or d.faults or d.ws_end is not None:
            raise LineError(f"{key} lines come after the end line, before faults, ws-end last")
        try:
            item = ws_text.read_line(key, toks, parse_time)
        except ws_text.WsTextError as e:
            raise LineError(str(e)) from None
        if isinstance(item, WsClose):
            d.ws_end = item
        else:
            d.ws_messages.append(item)
    elif key == "fault":
        _need(toks, 2, "fault SPEC")
        if sec != "end":
            raise LineError("fault lines come after the end line")
        d.faults.append(as_text(toks[1], "fault"))
    else:
        raise LineError(f"unknown line starting with {key!r}")


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
        except LineError as e:
            raise LineError(f"interaction {len(interactions)}: {e}") from None

    try:
        for this_line, raw in enumerate(text.split("\n"), start=1):
            lineno = this_line
            line = raw[:-1] if raw.endswith("\r") else raw  # tolerate CRLF editors
            bad = SURROGATE.search(line)
            if bad:
                raise LineError(f"not UTF-8 text (column {bad.start() + 1})")
            stripped = line.strip(" \t")
            if not stripped or stripped.startswith("#"):
                continue
            if not seen_magic:
                if stripped != MAGIC:
                    raise LineError(f"not a cassette text form (first line must be {MAGIC!r})")
                seen_magic = True
                continue
            head = stripped.partition(" ")[0].partition("\t")[0]  # (str.split() splits at \x1f)
            if head == "interaction":
                if draft is not None:
                    interactions.append(finish(draft))
                draft = _Draft(line=this_line)
            elif head == "meta":
                toks = tokens(line)
                _need(toks, 3, "meta KEY VALUE")
                if draft is not None:
                    raise LineError("meta lines must come before the first interaction")
                meta.append((as_text(toks[1], "meta key"), as_text(toks[2], "meta value")))
            elif draft is None:
                raise LineError(f"{head!r} outside an interaction (missing `interaction` line)")
            else:
                _line(draft, line)
        if not seen_magic:
            raise LineError(f"empty text, expected {MAGIC!r}")
        if draft is not None:
            interactions.append(finish(draft))
        try:
            validate.check_meta(meta)
        except validate.InvalidField as e:
            raise LineError(str(e)) from None
    except LineError as e:
        raise CassetteFormatError(f"line {lineno}: {e}") from None
    return Cassette(tuple(interactions), tuple(meta))
