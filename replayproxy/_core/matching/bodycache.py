"""A least-recently-used cache of parsed bodies, bounded by the bytes of the bodies (pure).

Matching compares a request with every recorded request; explaining a miss parses every
recorded body again. Parsing once per body is what the cache is for, but a cache bounded by
*count* (the old ``lru_cache(maxsize=1024)``) keeps 1024 bodies whatever their size: 500
unmatched 1 MB requests took the process to 1 GB. This one is bounded by the total length of
the bodies it keeps (a parsed JSON document takes a few times its text), bodies above a size
are parsed each time and never kept, and each matcher owns its own cache: it goes away with
the session instead of living in the process.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ITEM", "BodyCache"]

T = TypeVar("T")

DEFAULT_MAX_BYTES = 8 * 2**20
"""Total length of the bodies one cache keeps parsed (8 MiB of text)."""

DEFAULT_MAX_ITEM = 1 * 2**20
"""Bodies longer than this (1 MiB) are parsed each time they are needed, never kept."""


class BodyCache(Generic[T]):
    """``get(body)`` is ``parse(body)``, remembered for recently used bodies. Not thread-safe
    (a matcher runs under its session's lock)."""

    def __init__(
        self,
        parse: Callable[[bytes], T],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_item: int = DEFAULT_MAX_ITEM,
    ) -> None:
        self.parse = parse
        self.max_bytes = max_bytes
        self.max_item = min(max_item, max_bytes)
        self.size = 0
        self._items: OrderedDict[bytes, T] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, body: bytes) -> T:
        if len(body) > self.max_item:
            return self.parse(body)
        try:
            value = self._items[body]
        except KeyError:
            pass
        else:
            self._items.move_to_end(body)
            return value
        value = self.parse(body)
        self._items[body] = value
        self.size += len(body)
        while self.size > self.max_bytes:
            old, _ = self._items.popitem(last=False)
            self.size -= len(old)
        return value
