"""Secrets in text people read: values a miss explanation must not print (pure).

A miss explanation (stderr, the unmatched 500 body, a test's failure) quotes the values that
differ, as JSON text cut to a length. A value is shown as ``"<redacted>"`` when its place is
a secret's: a body member named like one (:func:`~replayproxy._core.redaction.secrets.
is_secret_name`: ``api_key``, ``token``, ``password``, ...) anywhere on its pointer, or a body
field the session redacts (``--redact-body-field``) at, under or above it. Inside a quoted
object or array (a member only one side has), :func:`mask_json_text` hides the value of every
member named like a secret, even in text that was cut short.
"""

from __future__ import annotations

from collections.abc import Sequence

from replayproxy._core.redaction.secrets import REDACTED_TEXT, is_secret_name

__all__ = ["hidden_at", "mask_json_text"]

_MASK = f'"{REDACTED_TEXT}"'


def _covers(pattern: Sequence[str], tokens: Sequence[str]) -> bool:
    """Whether the redacted pointer ``pattern`` (``*`` for any token) and ``tokens`` are on one
    path: one is a prefix of the other."""
    return all(p in ("*", t) for p, t in zip(pattern, tokens, strict=False))


def hidden_at(tokens: Sequence[str], hidden: Sequence[Sequence[str]] = ()) -> bool:
    """Whether the value at the body pointer ``tokens`` must not be printed: a token is named
    like a secret, or a pointer of ``hidden`` is at, under or above it."""
    return any(is_secret_name(t) for t in tokens) or any(_covers(h, tokens) for h in hidden)


def _string_end(text: str, i: int) -> int:
    """The index after the JSON string starting at ``text[i] == '"'`` (or the end of a cut
    text)."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)


def _value_end(text: str, i: int) -> int:
    """The index after the JSON value starting at ``text[i]`` (string, container or scalar)."""
    if i < len(text) and text[i] == '"':
        return _string_end(text, i)
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "," and depth == 0:
            return i
        i += 1
    return len(text)


def mask_json_text(text: str) -> str:
    """``text`` (JSON, possibly cut short) with the value of every member named like a secret
    replaced by ``"<redacted>"``. Linear in the text; never raises."""
    out: list[str] = []
    i = pos = 0
    while i < len(text):
        if text[i] != '"':
            i += 1
            continue
        end = _string_end(text, i)
        j = end
        while j < len(text) and text[j] == " ":
            j += 1
        if j < len(text) and text[j] == ":":
            j += 1
            while j < len(text) and text[j] == " ":
                j += 1
            if is_secret_name(text[i + 1 : end - 1]):
                out += [text[pos:j], _MASK]
                i = pos = _value_end(text, j)
                continue
        i = end
    out.append(text[pos:])
    return "".join(out)
