"""engine/memory.py: when memory is handed back after a big body (on the virtual clock), what
a release does, and what freezing the startup heap keeps and frees."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import platform
import weakref

import pytest

from replayproxy._engine import memory
from replayproxy._engine.memory import BIG_BODY, ReleaseAfterBigBodies
from tests.replay.virtual_time import VirtualClock, run_virtual

GLIBC = platform.libc_ver()[0] == "glibc"


class _Node:
    other: object


def _garbage_cycle() -> weakref.ref[_Node]:
    """A two-object cycle nothing refers to (with the collector off, it stays until a
    collection frees it); a weak reference to one of its objects."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_big_bodies_schedule_one_release_a_second_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body under 8 MiB schedules nothing; one of 8 MiB schedules one release 1 s later, and
    a big body seen while it is pending moves that one release to 1 s after itself (no second
    release); after it ran, the next big body schedules another."""
    releases: list[float] = []

    async def main() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        monkeypatch.setattr(memory, "release", lambda: releases.append(loop.time() - start))
        watch = ReleaseAfterBigBodies()
        watch.seen(0)
        watch.seen(BIG_BODY - 1)
        await asyncio.sleep(5)
        assert releases == []
        watch.seen(BIG_BODY)  # at 5 s
        await asyncio.sleep(0.5)
        watch.seen(BIG_BODY * 4)  # still pending: moved to 6.5 s, no second release
        await asyncio.sleep(1.5)
        watch.seen(BIG_BODY)  # at 7 s, the first one done
        await asyncio.sleep(2)
        return loop.time() - start

    run_virtual(main, VirtualClock())
    assert BIG_BODY == 8 * 2**20
    assert releases == [pytest.approx(6.5, abs=1e-6), pytest.approx(8.0, abs=1e-6)]


def test_release_collects_cycles_and_trims_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """release() frees garbage held only by a reference cycle and calls malloc_trim(0)."""
    trims: list[int] = []

    def trim(pad: int) -> int:
        trims.append(pad)
        return 1

    monkeypatch.setattr(memory, "_TRIM", trim)

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gone = _garbage_cycle()
        assert gone() is not None  # only the cyclic collector can free it
        memory.release()
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()
    assert trims == [0]


def test_release_without_malloc_trim_only_collects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the C library has no malloc_trim (musl, macOS), release() still works."""
    monkeypatch.setattr(memory, "_TRIM", None)
    memory.release()


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_malloc_trim_is_found_in_glibc() -> None:
    """On glibc, the trim function is found and callable (returns 0 or 1)."""
    trim = memory._malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)


@pytest.mark.parametrize(
    ("found", "loaded"),
    [("/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"), (None, "libc.so.6")],
)
def test_malloc_trim_loads_the_c_library_by_its_found_name(
    monkeypatch: pytest.MonkeyPatch, found: str | None, loaded: str
) -> None:
    """The C library is loaded by the name ctypes finds for "c", else as "libc.so.6"; its
    malloc_trim is returned."""
    asked: list[object] = []

    class Lib:
        malloc_trim = staticmethod(lambda pad: 0)

    def find_library(name: str) -> str | None:
        asked.append(name)
        return found

    def cdll(name: object) -> Lib:
        asked.append(name)
        return Lib()

    monkeypatch.setattr(ctypes.util, "find_library", find_library)
    monkeypatch.setattr(ctypes, "CDLL", cdll)
    assert memory._malloc_trim() is Lib.malloc_trim
    assert asked == ["c", loaded]


@pytest.mark.parametrize(
    "failure", [OSError("no such library"), TypeError("bad name"), AttributeError]
)
def test_malloc_trim_is_none_where_the_c_library_has_none(
    monkeypatch: pytest.MonkeyPatch, failure: BaseException | type[BaseException]
) -> None:
    """A C library that cannot be loaded, or has no malloc_trim (musl, macOS): None."""

    def cdll(name: object) -> object:
        if failure is AttributeError:
            return object()  # loaded, but no malloc_trim in it
        assert isinstance(failure, BaseException)
        raise failure

    monkeypatch.setattr(ctypes, "CDLL", cdll)
    assert memory._malloc_trim() is None


def test_freeze_startup_heap_collects_first_then_freezes() -> None:
    """freeze_startup_heap() frees the garbage cycles present first, then freezes what is
    alive (the collector no longer lists it) and returns the frozen count. (Undone here with
    gc.unfreeze(), which hands the objects back to the collector.)"""

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gone = _garbage_cycle()
        kept = {"frames": [(1, b"x")]}
        n = memory.freeze_startup_heap()
        assert gone() is None
        assert n == gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
    assert any(o is kept for o in gc.get_objects())
