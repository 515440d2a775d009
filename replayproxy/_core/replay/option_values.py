"""The value parsers of the option table (pure): each turns what a shell collected (a click
value, a mitmproxy option, an ini line list, a marker keyword) into one Python value, or raises
a one-line :class:`~replayproxy._errors.UsageError` saying what is wrong with it.

The messages name the value, never the option: the caller
(:func:`replayproxy._core.replay.options.settings_from`) puts in front of them how the user
spelled the option in the place they set it (``option --redact-header``, ``marker keyword
'redact_header'``...).
"""

from __future__ import annotations

import math
from typing import Any

from replayproxy._core import faults as faults_mod
from replayproxy._core.faults import FaultSpec
from replayproxy._core.redaction.body_fields import parse_pointers
from replayproxy._core.replay.http_version import HttpVersion, parse_http_version
from replayproxy._core.replay.record_mode import RecordMode, parse_record_mode
from replayproxy._errors import UsageError

__all__ = [
    "body_fields_to_redact",
    "connection_count",
    "fault_specs",
    "flag",
    "http_version",
    "names_to_redact",
    "negated_flag",
    "record_mode",
    "seconds",
    "string_set",
    "strings",
]


def strings(value: Any) -> tuple[str, ...]:
    """A repeatable option's values; a string (an ini value, one marker keyword) is one item
    per non-empty line."""
    if isinstance(value, str):
        return tuple(line.strip() for line in value.splitlines() if line.strip())
    return tuple(value)


def string_set(value: Any) -> frozenset[str]:
    """A repeatable option's values as a set (:func:`strings`, order and repeats dropped)."""
    return frozenset(strings(value))


def flag(value: Any) -> bool:
    """A switch: any truthy value turns it on."""
    return bool(value)


def negated_flag(value: Any) -> bool:
    """A switch that turns its setting off (``no_equivalence``: ``equivalence=False``)."""
    return not flag(value)


def http_version(value: Any) -> HttpVersion:
    """``recorded``, ``client``, ``1.1`` or ``2``."""
    return parse_http_version(value)


def record_mode(value: Any) -> RecordMode:
    """One of VCR.py's record modes."""
    return parse_record_mode(value)


def fault_specs(value: Any) -> tuple[FaultSpec, ...]:
    """Fault specs (``NAME:PARAM=VALUE,...``); parsed specs pass through."""
    if isinstance(value, FaultSpec):
        return (value,)
    return tuple(f if isinstance(f, FaultSpec) else faults_mod.parse(f) for f in strings(value))


def _pair(item: Any) -> tuple[str, str] | None:
    """``item`` as a ``(name, replacement)`` pair of strings (from Python), else None."""
    if isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return item[0], item[1]
    return None


def names_to_redact(value: Any) -> tuple[str | tuple[str, str], ...]:
    """Header or query parameter names (no blanks, no whitespace or ``:`` inside), each alone
    or as a ``(name, replacement)`` pair (from Python: the value stored instead)."""
    names = strings(value)
    for item in names:
        pair = _pair(item)
        name = pair[0] if pair else item
        if not isinstance(name, str) or not name.strip() or any(c in name for c in " \t\r\n:"):
            raise UsageError(f"invalid name to redact: {item!r}")
    return tuple(_pair(item) or item for item in names)


def body_fields_to_redact(value: Any) -> tuple[str | tuple[str, str], ...]:
    """JSON pointers (``/user``, ``/messages/*/name``), alone or as ``(pointer, replacement)``."""
    items = tuple(_pair(item) or item for item in strings(value))
    pointers = [item[0] if isinstance(item, tuple) else item for item in items]
    bad = [p for p in pointers if not isinstance(p, str)]
    if bad:
        raise UsageError(f"invalid body field to redact: {bad[0]!r} is not a JSON pointer")
    try:
        parse_pointers(pointers)
    except ValueError as e:
        raise UsageError(f"invalid body field to redact: {e}") from None
    return items


def seconds(value: Any) -> float:
    """A timeout in seconds (a number or its text): finite and above 0."""
    try:
        got = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"a timeout must be a number of seconds, got {value!r}") from None
    if not math.isfinite(got) or got <= 0:
        raise UsageError(f"a timeout must be a finite number of seconds > 0, got {value!r}")
    return got


def connection_count(value: Any) -> int:
    """A number of connections (a whole number or its text): at least 1."""
    try:
        got = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"a connection count must be a whole number, got {value!r}") from None
    if not got.is_integer() or got < 1:
        raise UsageError(f"a connection count must be a whole number >= 1, got {value!r}")
    return int(got)
