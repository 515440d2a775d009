"""Redaction of JSON body fields by pointer, in requests and responses (pure).

``--redact-body-field /user`` replaces the value at that RFC 6901 pointer with
``"<redacted>"`` wherever a body is JSON: the whole request body, the whole response body (a
token endpoint's ``/access_token``), and each ``data:`` line of an event stream. A ``*``
segment matches every member of an object or element of an array (``/messages/*/name``).
Matching treats a redacted value as a wildcard, like a redacted header. Each pointer may have
a replacement of its own instead of ``"<redacted>"`` (``values``, aligned with the pointers).

A body with nothing to redact is kept byte for byte. A redacted document is re-encoded
compactly (``separators=(",", ":")``, UTF-8). In a response, the frames keep their count and
their offsets; the frame boundaries move with the bytes before them (a boundary inside a
replaced span moves to the same distance into the replacement, or its end), so the timing
and, outside the replaced spans, the byte splits stay as recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from replayproxy._core.cassette.model import Frame
from replayproxy._core.json import limits
from replayproxy._core.json.pointer import unescape_tokens

__all__ = ["Pointer", "parse_pointers", "redact_body", "redact_frames", "redact_json"]

REDACTED_VALUE = "<redacted>"

Pointer = tuple[str, ...]

_DATA_LINE = re.compile(rb"^data:[ ]?([^\r\n]*)", re.MULTILINE)


def parse_pointers(pointers: Sequence[str]) -> tuple[Pointer, ...]:
    """Split RFC 6901 pointers (``/a/b~1c``) into tokens; raises ValueError naming a bad one."""
    out = []
    for p in pointers:
        if not p.startswith("/"):
            raise ValueError(f"JSON pointer must start with '/': {p!r}")
        out.append(unescape_tokens(p))
    return tuple(out)


def redact_json(doc: Any, pointer: Pointer, value: Any = REDACTED_VALUE) -> tuple[Any, bool]:
    """``doc`` with the value(s) at ``pointer`` replaced by ``value`` (a copy along the path),
    and whether anything was. Iterates the pointer's tokens (bounded by its length, never by
    the doc)."""
    if not pointer:
        return doc, False
    head, rest = pointer[0], pointer[1:]
    out: Any
    if isinstance(doc, dict):
        targets: list[Any] = list(doc) if head == "*" else [head] if head in doc else []
        out = dict(doc)
    elif isinstance(doc, list):
        if head == "*":
            targets = list(range(len(doc)))
        elif head.isascii() and head.isdigit() and int(head) < len(doc):
            targets = [int(head)]
        else:
            targets = []
        out = list(doc)
    else:
        return doc, False
    changed = False
    for target in targets:  # dict keys or list indexes: the same walk for both
        if rest:
            out[target], hit = redact_json(doc[target], rest, value)
        else:
            out[target], hit = value, True
        changed |= hit
    return (out, True) if changed else (doc, False)


def _values(pointers: Sequence[Pointer], values: Sequence[Any] | None) -> Sequence[Any]:
    return values if values is not None else [REDACTED_VALUE] * len(pointers)


def _redacted_text(text: bytes, pointers: Sequence[Pointer], values: Sequence[Any]) -> bytes | None:
    """The re-encoded document if ``text`` is JSON with something to redact, else None."""
    if not text.strip() or text.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        doc = limits.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    changed = False
    for pointer, value in zip(pointers, values, strict=True):
        doc, hit = redact_json(doc, pointer, value)
        changed |= hit
    if not changed:
        return None
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def redact_body(
    body: bytes, pointers: Sequence[Pointer], values: Sequence[Any] | None = None
) -> bytes:
    """A request body with the fields at ``pointers`` redacted (unchanged if not JSON)."""
    if not pointers:
        return body
    new = _redacted_text(body, pointers, _values(pointers, values))
    return body if new is None else new


def _spans(
    body: bytes, pointers: Sequence[Pointer], values: Sequence[Any]
) -> list[tuple[int, int, bytes]]:
    whole = _redacted_text(body, pointers, values)
    if whole is not None:
        return [(0, len(body), whole)]
    spans = []
    for m in _DATA_LINE.finditer(body):
        new = _redacted_text(m.group(1), pointers, values)
        if new is not None:
            spans.append((m.start(1), m.end(1), new))
    return spans


def _moved(x: int, spans: Sequence[tuple[int, int, bytes]]) -> int:
    shift = 0
    for start, end, new in spans:
        if x >= end:
            shift += len(new) - (end - start)
        elif x > start:
            return start + shift + min(x - start, len(new))
        else:
            break
    return x + shift


def redact_frames(
    frames: Sequence[Frame], pointers: Sequence[Pointer], values: Sequence[Any] | None = None
) -> tuple[Frame, ...]:
    """Response frames with the fields at ``pointers`` redacted in the whole body (if JSON)
    or in each ``data:`` line; offsets and frame count kept."""
    frames = tuple(frames)
    if not pointers or not frames:
        return frames
    body = b"".join(f.data for f in frames)
    spans = _spans(body, pointers, _values(pointers, values))
    if not spans:
        return frames
    parts = []
    pos = 0
    for start, end, new in spans:
        parts += [body[pos:start], new]
        pos = end
    parts.append(body[pos:])
    new_body = b"".join(parts)
    out = []
    old_end = 0
    new_start = 0
    for f in frames:
        old_end += len(f.data)
        new_end = _moved(old_end, spans)  # the body's end moves to the new body's end
        out.append(Frame(f.offset_ns, new_body[new_start:new_end]))
        new_start = new_end
    return tuple(out)
