"""JSON parsing with a documented nesting limit, for matching and checking (pure).

Matching compares request bodies as JSON values and the checker parses every event payload.
Both would otherwise recurse as deep as a document nests: a 2 KB body of 1000 ``[`` made
``json.loads`` or the comparison raise ``RecursionError`` inside a replay hook. :func:`loads`
raises :class:`JSONTooDeep` (a ``json.JSONDecodeError``, so a ``ValueError``, like any other
JSON that does not parse) for a document nested deeper than :data:`MAX_JSON_DEPTH`, so callers
that already treat invalid JSON as "not JSON" handle it without a change, and code that walks
a parsed document recursively never goes deeper than that.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JSONTooDeep", "depth_exceeds", "loads"]

MAX_JSON_DEPTH = 128
"""The deepest nesting of arrays and objects accepted (a request with tool schemas nests ~20)."""


class JSONTooDeep(json.JSONDecodeError):
    """The document nests arrays/objects deeper than the limit (``msg`` says so)."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"JSON nested deeper than {max_depth} levels", "", 0)


def depth_exceeds(doc: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``doc`` nests containers more than ``limit`` deep (iterative: never recurses)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def loads(data: str | bytes | bytearray, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(data)``, raising :class:`JSONTooDeep` for nesting beyond ``max_depth``."""
    try:
        doc = json.loads(data)
    except RecursionError:  # the C decoder's own guard, far above MAX_JSON_DEPTH
        raise JSONTooDeep(max_depth) from None
    if depth_exceeds(doc, max_depth):
        raise JSONTooDeep(max_depth)
    return doc
