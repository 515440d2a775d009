"""Give memory back after a big request body, for both shells (the origin and the addon).

A request body of many MiB is read, parsed and compared once, then dropped; but the process
keeps the RSS: mitmproxy's flows form reference cycles that only the cyclic collector frees,
and glibc keeps large freed blocks in the heap once its dynamic mmap threshold has grown past
them. Measured (benchmarks/bench_memory.py, tests/reliability/test_bounded_memory.py): two
unmatched 20 MB requests left +64 MiB on the engine and +50 MiB per request behind mitmproxy.
One collection and one ``malloc_trim`` a moment after such a body returns it; small bodies
never pay for it, and at most one release is pending at a time.

``malloc_trim`` cannot give back the free top of a *thread's* arena, and a big body is also
handled on threads (the engine's loop thread, the worker that matches it): whether it stayed
resident then depended on which thread allocated it, so on the machine's load (beside
``stress-ng`` 5 runs in 8 kept both bodies, +80 MiB; alone, +1.4 MiB). A serving process
therefore fixes glibc's mmap threshold (:func:`fix_mmap_threshold`): every block of
:data:`MMAP_THRESHOLD` or more is its own mapping, unmapped when freed, in any arena.

It also keeps the cyclic collector's *full* passes short in a serving process
(:func:`freeze_startup_heap`): a full pass walks every tracked object, and a replay process
holds some 85,000 of them before it serves a byte (mitmproxy's modules, the click CLI, the
loaded cassette with one object per recorded frame). Each pass then stopped the event loop for
25-90 ms, and 200 concurrent streams, whose long-lived connections are what trigger full
passes, all showed that stall in their gaps (benchmarks: gap p99 13 ms against a 2.2 ms floor
at 200 streams). Moving the startup heap to the permanent generation once leaves the passes
only what was allocated since.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
from collections.abc import Callable

__all__ = [
    "BIG_BODY",
    "MMAP_THRESHOLD",
    "ReleaseAfterBigBodies",
    "fix_mmap_threshold",
    "freeze_startup_heap",
]

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

MMAP_THRESHOLD = 1 << 20
"""Blocks of at least this many bytes get their own mapping in a serving process (glibc's
default starts at 128 KiB and grows, up to 32 MiB, each time such a block is freed)."""

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def fix_mmap_threshold() -> bool:
    """Make every allocation of :data:`MMAP_THRESHOLD` bytes or more a mapping of its own,
    returned to the OS when freed, whichever thread's arena it came from; True if the C
    library took it (glibc). For a process that owns its heap, like
    :func:`freeze_startup_heap`."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    return False


def release() -> None:
    """Collect garbage, then hand freed heap memory back to the OS where the C library can."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def freeze_startup_heap() -> int:
    """Collect once, then exempt every object alive now from later collections (``gc.freeze``);
    returns how many objects are frozen.

    For a process that owns its heap and is about to serve: call it after imports, cassette
    loading and server start. The frozen objects are still freed by reference counting; only
    a cycle among them that becomes garbage later stays (the startup heap lives as long as the
    process anyway). Objects allocated afterwards (requests, connections, mitmproxy's flows)
    are collected as before. Not for library use (``ReplayServer`` inside a test run): it
    would exempt the host process's objects too.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class ReleaseAfterBigBodies:
    """Call :meth:`seen` with each request body's size, on the serving loop."""

    def __init__(self) -> None:
        self._timer: asyncio.TimerHandle | None = None

    def seen(self, size: int) -> None:
        """A body of ``size`` bytes was handled: after a big one, release a moment after the
        last one (each big body moves the release later, so it runs once what held the
        bodies, such as a connection still open or a second request, is gone too)."""
        if size < BIG_BODY:
            return
        if self._timer is not None:
            self._timer.cancel()

        def run() -> None:
            self._timer = None
            release()

        self._timer = asyncio.get_running_loop().call_later(_AFTER_S, run)
