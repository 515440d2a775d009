"""Which label (test) was current when each thread was started, so that a network attempt
from a thread left running by an earlier test is blamed on that test, not the one running.

:func:`install` wraps ``threading.Thread.start`` for the rest of the process (one dictionary
write per started thread); :func:`during` sets the current label; :func:`origin_of` reads a
thread's. Threads started before :func:`install`, or outside any label, have none.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

__all__ = ["during", "install", "origin_of"]

_origins: weakref.WeakKeyDictionary[threading.Thread, str | None] = weakref.WeakKeyDictionary()
_label: str | None = None
_original_start = threading.Thread.start


def _start(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
    _origins[self] = _label
    _original_start(self, *args, **kwargs)


def install() -> None:
    """Tag every thread started from now on with the label current at its start."""
    threading.Thread.start = _start  # type: ignore[method-assign]


@contextlib.contextmanager
def during(label: str | None) -> Iterator[None]:
    """Threads started in the ``with`` block are tagged ``label``."""
    global _label
    previous, _label = _label, label
    try:
        yield
    finally:
        _label = previous


def origin_of(thread: threading.Thread) -> str | None:
    """The label current when ``thread`` was started (None: unknown or none)."""
    return _origins.get(thread)
