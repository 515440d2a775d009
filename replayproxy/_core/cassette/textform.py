"""The cassette text form: a line-oriented, human-editable, diff-friendly view of a cassette.

:func:`dumps` (here) and :func:`replayproxy._core.cassette.textload.loads` are exact inverses:
``loads(dumps(c)) == c`` for every cassette,
so ``export`` then ``import`` gives back a byte-identical file. The format is specified in
``docs/reference/text-format.md``; in short::

    replayproxy-cassette-text 1
    meta recorded-by replayproxy
    interaction 0
      recorded-at 1764470000.25
      request POST https://api.example.test/v1/chat HTTP/1.1
      > content-type: application/json
      body '{"stream":true}'
      response 200 OK HTTP/1.1 +120.5ms
      < content-type: text/event-stream
      +130ms      'data: {"n":1}\\n\\n'
      +150.25ms   'data: [DONE]\\n\\n'
      end complete +151ms
      fault truncate:events=1

Bytes are quoted with :func:`~replayproxy._core.cassette.texttokens.escape`
(``\\n \\r \\t \\\\ \\" \\' \\xNN``) or, when mostly binary, written as ``base64:...``. Times are
exact nanoseconds, written in ms.
"""

from __future__ import annotations

import re

from replayproxy._core.cassette.model import (
    Cassette,
    Header,
    Interaction,
)
from replayproxy._core.cassette.texttokens import escape, format_time, quote
from replayproxy._core.cassette.websocket_text import session_lines

__all__ = ["MAGIC", "dumps"]

MAGIC = "replayproxy-cassette-text 1"
_BANNER = (
    "# replayproxy cassette text (docs/reference/text-format.md), "
    "read by `replayproxy cassette import`"
)

# -- writing ---------------------------------------------------------------------------------


_BARE_WORD = re.compile(r"[^\s\"'\\][^\s\\]*")
_BARE_NAME = re.compile(r"[!#$%&*+.^_`|~0-9A-Za-z-][!#$%&'*+.^_`|~0-9A-Za-z-]*")
_BARE_VALUE = re.compile(r"[!#$%&()*+,./0-9:;<=>?@A-Z\[\]^_`a-z{|}~-]([ -\[\]-~]*[!-\[\]-~])?")


def _word(text: str) -> str:
    """A string token: bare when unambiguous and visible, quoted otherwise."""
    bare = _BARE_WORD.fullmatch(text) and not text.startswith("base64:")
    if bare and escape(text.encode("utf-8")) == text:
        return text
    return quote(text.encode("utf-8"))


def _header(sigil: str, header: Header) -> str:
    name, value = header
    # A bare `base64` name would read back as the start of a `base64:` value.
    bare_name = _BARE_NAME.fullmatch(name.decode("latin-1")) and name != b"base64"
    n = name.decode("ascii") if bare_name else quote(name)
    bare = _BARE_VALUE.fullmatch(value.decode("latin-1")) and not value.startswith(b"base64:")
    v = value.decode("ascii") if bare else quote(value)
    return f"  {sigil} {n}: {v}"


def _interaction_lines(index: int, x: Interaction) -> list[str]:
    req = x.request
    lines = [f"interaction {index}"]
    if x.recorded_at is not None:
        lines.append(f"  recorded-at {x.recorded_at!r}")
    lines.append(f"  request {_word(req.method)} {_word(req.url)} {_word(req.http_version)}")
    lines.extend(_header(">", h) for h in req.headers)
    if req.body:
        lines.append(f"  body {quote(req.body)}")
    resp = x.response
    if resp is None:
        lines.append("  response none")
    else:
        lines.append(
            f"  response {resp.status} {_word(resp.reason)} {_word(resp.http_version)} "
            f"{format_time(resp.head_offset_ns)}"
        )
        lines.extend(_header("<", h) for h in resp.headers)
        lines.extend(f"  {format_time(f.offset_ns):<11} {quote(f.data)}" for f in resp.frames)
    end = f"  end {x.end.kind.value} {format_time(x.end.offset_ns)}"
    if x.end.message:
        end += " " + _word(x.end.message)
    lines.append(end)
    if x.websocket is not None:
        lines.extend(session_lines(x.websocket))
    lines.extend(f"  fault {_word(spec)}" for spec in x.faults)
    return lines


def dumps(cassette: Cassette) -> str:
    """The text form of ``cassette`` (ends with a newline)."""
    lines = [_BANNER, MAGIC]
    lines.extend(f"meta {_word(k)} {_word(v)}" for k, v in cassette.meta)
    for i, x in enumerate(cassette.interactions):
        lines.append("")
        lines.extend(_interaction_lines(i, x))
    return "\n".join(lines) + "\n"
