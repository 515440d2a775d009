"""Give memory back after a big request body, for both shells (the origin and the addon).

A request body of many MiB is read, parsed and compared once, then dropped; but the process
keeps the RSS: mitmproxy's flows form reference cycles that only the cyclic collector frees,
and glibc keeps large freed blocks in the heap once its dynamic mmap threshold has grown past
them. Measured (benchmarks/bench_memory.py, tests/reliability/test_bounded_memory.py): two
unmatched 20 MB requests left +64 MiB on the engine and +50 MiB per request behind mitmproxy.
One collection and one ``malloc_trim`` a moment after such a body returns it; small bodies
never pay for it, and at most one release is pending at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
from collections.abc import Callable

__all__ = ["BIG_BODY", "ReleaseAfterBigBodies"]

BIG_BODY = 8 * 2**20
"""Bodies of at least this many bytes schedule a release."""

_AFTER_S = 1.0


def _malloc_trim() -> Callable[[int], int] | None:
    # glibc only; elsewhere (musl, macOS) the collection alone has to do.
    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
        return trim
    return None


_TRIM = _malloc_trim()


def release() -> None:
    """Collect garbage, then hand freed heap memory back to the OS where the C library can."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


class ReleaseAfterBigBodies:
    """Call :meth:`seen` with each request body's size, on the serving loop."""

    def __init__(self) -> None:
        self._pending = False

    def seen(self, size: int) -> None:
        if self._pending or size < BIG_BODY:
            return
        self._pending = True

        def run() -> None:
            self._pending = False
            release()

        asyncio.get_running_loop().call_later(_AFTER_S, run)
