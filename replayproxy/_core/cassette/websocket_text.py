"""WebSocket sessions in the cassette text form (docs/reference/text-format.md, "WebSocket
sessions").

A session is written after the interaction's ``end`` line, before its ``fault`` lines::

      ws< +5.3ms    text '{"type":"session.created"}'
      ws> +116.6ms  text '{"type":"response.create"}'
      ws< +292.9ms  binary base64:AAECAwQFBgcICQoLDA0ODw== frames 8,8
      ws-end close +563.2ms 1000 client ''

``ws>`` is a message from the client, ``ws<`` one from the server (the sigils of request and
response headers); ``frames`` lists fragment sizes when the message has them. ``ws-end`` gives
the close kind (close, dropped, open), its offset, the close code (``-`` for none), who closed
(client, server, unknown) and the reason. :func:`session_lines` writes these lines and
:func:`read_line` reads one; ``textload`` assembles the session.
"""

from __future__ import annotations

import re

from replayproxy._core.cassette import validate
from replayproxy._core.cassette.texttokens import format_time, quote
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage

__all__ = ["KEYS", "WsTextError", "read_line", "session_lines"]

KEYS = ("ws>", "ws<", "ws-end")
_BY = {True: "client", False: "server", None: "unknown"}
_BY_NAME = {v: k for k, v in _BY.items()}


# Digits are bounded before int() sees them (as every number of the text form): int() of
# thousands of digits is slow or refused; ASCII only (int() also reads "٣" as 3).
_NUMBER = re.compile(r"[0-9]{1,20}")
_SIZE = re.compile(r"-?[0-9]{1,20}")


class WsTextError(ValueError):
    """A ``ws`` line that cannot be read; the text loader adds the line number."""


def _offset(parse_time: object, token: str | bytes, what: str) -> int:
    """A ``+12.5ms`` offset, in range like a frame's (0 to 2^53 ns)."""
    assert callable(parse_time)
    at: int = parse_time(str(token))
    try:
        validate.check_offset(at, what)
    except validate.InvalidField as e:
        raise WsTextError(str(e)) from None
    return at


def session_lines(session: WebSocketSession) -> list[str]:
    """The text lines of ``session`` (indented like the interaction's other lines)."""
    lines = []
    for m in session.messages:
        line = (
            f"  {'ws>' if m.from_client else 'ws<'} {format_time(m.offset_ns):<11} "
            f"{'text' if m.text else 'binary'} {quote(m.data)}"
        )
        if m.fragments:
            line += " frames " + ",".join(str(n) for n in m.fragments)
        lines.append(line)
    c = session.close
    code = "-" if c.code is None else str(c.code)
    lines.append(
        f"  ws-end {c.kind.value} {format_time(c.offset_ns)} {code} {_BY[c.by_client]} "
        f"{quote(c.reason.encode('utf-8'))}"
    )
    return lines


def read_line(key: str, toks: list[str | bytes], parse_time: object) -> WsMessage | WsClose:
    """One ``ws>`` / ``ws<`` / ``ws-end`` line, already split into tokens (``toks[0]`` is the
    key); ``parse_time`` is the loader's ``+12.5ms`` parser."""
    assert callable(parse_time)
    if key == "ws-end":
        if len(toks) != 6:
            raise WsTextError(
                "expected `ws-end KIND +OFFSET CODE|- client|server|unknown 'REASON'`"
            )
        kind_s, at, code_s, by, reason = toks[1:]
        try:
            kind = WsCloseKind(str(kind_s))
        except ValueError:
            valid = ", ".join(k.value for k in WsCloseKind)
            raise WsTextError(f"ws-end kind {kind_s!r} is not one of: {valid}") from None
        if code_s != "-" and not (isinstance(code_s, str) and _NUMBER.fullmatch(code_s)):
            shown = repr(code_s) if len(code_s) <= 20 else repr(code_s[:20]) + "..."
            raise WsTextError(f"ws-end code must be a number or -, got {shown}")
        if by not in _BY_NAME:
            raise WsTextError(f"ws-end closer must be client, server or unknown, got {by!r}")
        if not isinstance(reason, bytes):
            raise WsTextError("ws-end reason must be quoted")
        try:
            reason_text = reason.decode("utf-8")
        except UnicodeDecodeError:
            raise WsTextError("ws-end reason is not valid UTF-8") from None
        code = None if code_s == "-" else int(str(code_s))
        try:
            validate.check_close_code(code, "ws-end code")
        except validate.InvalidField as e:
            raise WsTextError(str(e)) from None
        offset = _offset(parse_time, at, "ws-end offset")
        return WsClose(offset, kind, code, reason_text, _BY_NAME[str(by)])
    if len(toks) not in (4, 6):
        raise WsTextError(f"expected `{key} +OFFSET text|binary 'BYTES' [frames N,N,...]`")
    at, kind_w, data = toks[1], toks[2], toks[3]
    if kind_w not in ("text", "binary"):
        raise WsTextError(f"message kind must be text or binary, got {kind_w!r}")
    if not isinstance(data, bytes):
        raise WsTextError("message bytes must be quoted or base64:")
    fragments: tuple[int, ...] = ()
    if len(toks) == 6:
        sizes = toks[5]
        if toks[4] != "frames" or not isinstance(sizes, str):
            raise WsTextError("expected `frames N,N,...` after the message bytes")
        parts = sizes.split(",")
        if not all(_SIZE.fullmatch(n) for n in parts):
            raise WsTextError(f"frames must be sizes like 3,4, got {sizes[:40]!r}")
        fragments = tuple(int(n) for n in parts)
        if sum(fragments) != len(data) or any(n < 0 for n in fragments):
            raise WsTextError(f"frames {sizes[:40]} do not add up to the {len(data)} message bytes")
    offset = _offset(parse_time, at, f"{key} offset")
    return WsMessage(offset, key == "ws>", kind_w == "text", data, fragments)
