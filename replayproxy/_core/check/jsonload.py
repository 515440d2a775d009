"""The one JSON decoder of the checker: every payload, tool-argument string, request body and
contract event is parsed through :func:`loads`, so a limit on what the checker will parse (size,
nesting depth) is added in one place.
"""

from __future__ import annotations

import json
from typing import Any

from replayproxy._core.json import limits

__all__ = ["JSONDecodeError", "loads"]

JSONDecodeError = json.JSONDecodeError


def loads(text: str | bytes) -> Any:
    """Decode one JSON document; raises ``ValueError`` (``JSONDecodeError`` for bad JSON and
    for nesting deeper than :data:`~replayproxy._core.json.limits.MAX_JSON_DEPTH`,
    ``UnicodeDecodeError`` for bytes that are not UTF-8)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return limits.loads(text)
