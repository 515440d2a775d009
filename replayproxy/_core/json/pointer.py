"""RFC 6901 JSON pointers (pure): parse, format, order, and drop the member a pointer names.

Used by matching (``--ignore-body-field``) and by body redaction (``--redact-body-field``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from replayproxy._errors import UsageError

__all__ = ["drop_member", "format_pointer", "parse_pointer", "pointer_order", "unescape_tokens"]

# RFC 6901: "~" only escapes ("~0", "~1"); an array index is decimal without leading zeros.
_BAD_TILDE = re.compile(r"~(?![01])")
_INDEX = re.compile(r"0|[1-9][0-9]*")


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Split an RFC 6901 JSON pointer (``/a/b~1c``) into its reference tokens."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise UsageError(f"JSON pointer must start with '/': {pointer!r}")
    if _BAD_TILDE.search(pointer):
        raise UsageError(f"JSON pointer has '~' not followed by 0 or 1: {pointer!r}")
    return unescape_tokens(pointer)


def format_pointer(tokens: Sequence[str]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def pointer_order(tokens: tuple[str, ...]) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, int(t), "") if t.isascii() and t.isdigit() else (1, 0, t) for t in tokens)


def unescape_tokens(pointer: str) -> tuple[str, ...]:
    """The reference tokens of ``/a/b~1c`` (leading ``/`` assumed, no checks): ``~1`` is ``/``
    and ``~0`` is ``~``, unescaped in that order (RFC 6901 §4)."""
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def drop_member(doc: Any, tokens: tuple[str, ...]) -> Any:
    """``doc`` without the member at ``tokens`` (a copy along the path; absent paths are fine)."""
    if not tokens:
        return doc
    head, rest = tokens[0], tokens[1:]
    if isinstance(doc, dict) and head in doc:
        out = dict(doc)
        if rest:
            out[head] = drop_member(doc[head], rest)
        else:
            del out[head]
        return out
    if isinstance(doc, list) and _INDEX.fullmatch(head) and int(head) < len(doc):
        items = list(doc)
        if rest:
            items[int(head)] = drop_member(items[int(head)], rest)
        else:
            del items[int(head)]
        return items
    return doc
