"""The serving loops wait with microsecond timeouts (``replayproxy._engine.timers``).

The point of :class:`PreciseSelector` is to avoid epoll's whole-millisecond timeout, which
makes every timer up to 1 ms late. How late timers really are is measured side by side in
``benchmarks/bench_timers.py``, not asserted here (shared, noisy machines); these tests pin
what can fail deterministically: the timeout handed to the kernel is not rounded, events
still arrive, the fallbacks hold, and the engine's and mitmproxy's loops use the selector.
"""

from __future__ import annotations

import asyncio
import select
import selectors
import socket
import time
from typing import Any

import pytest

from replayproxy._engine import timers
from replayproxy._engine.server import ReplayServer
from replayproxy._mitm.embedded import EmbeddedProxy

pytestmark = pytest.mark.skipif(
    not hasattr(selectors, "EpollSelector"), reason="the precise selector is for epoll (Linux)"
)


class _RecordingSelect:
    """Wraps ``select.select``: what timeout the selector asked the kernel for."""

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []
        self._real = select.select

    def __call__(self, r: Any, w: Any, x: Any, timeout: float | None = None) -> Any:
        self.timeouts.append(timeout)
        return self._real(r, w, x, timeout)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> _RecordingSelect:
    spy = _RecordingSelect()
    monkeypatch.setattr(select, "select", spy)
    return spy


def test_a_timed_wait_passes_the_exact_timeout_to_the_kernel(recorded: _RecordingSelect) -> None:
    """4.2 ms stays 4.2 ms (epoll_wait alone would wait 5 ms), and the wait really waits."""
    with timers.PreciseSelector() as sel:
        start = time.monotonic()
        assert sel.select(0.0042) == []
        waited = time.monotonic() - start
    assert recorded.timeouts == [0.0042]
    assert waited >= 0.004  # select() never returns early on a timeout


class _RecordingEpoll:
    """Stands in for the selector's epoll object: the timeouts its poll() is given."""

    def __init__(self, epoll: Any) -> None:
        self._epoll = epoll
        self.timeouts: list[float] = []

    def poll(self, timeout: float = -1, maxevents: int = -1) -> Any:
        self.timeouts.append(timeout)
        return self._epoll.poll(timeout, maxevents)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._epoll, name)


def test_a_timed_wait_that_times_out_makes_no_second_system_call(
    recorded: _RecordingSelect,
) -> None:
    """Nothing ready when the timer is due: no epoll call at all (most waits of a replay)."""
    with timers.PreciseSelector() as sel:
        spy = _RecordingEpoll(sel._selector)  # type: ignore[attr-defined]
        sel._selector = spy  # type: ignore[attr-defined]
        assert sel.select(0.0042) == []
        sel._selector = spy._epoll  # type: ignore[attr-defined]
    assert recorded.timeouts == [0.0042]
    assert spy.timeouts == []


def test_after_a_timed_wait_ends_on_an_event_epoll_is_only_polled(
    recorded: _RecordingSelect,
) -> None:
    """The events are collected with a zero timeout: epoll must not wait (rounded) again."""
    a, b = socket.socketpair()
    with a, b, timers.PreciseSelector() as sel:
        sel.register(a, selectors.EVENT_READ, data="reader")
        spy = _RecordingEpoll(sel._selector)  # type: ignore[attr-defined]
        sel._selector = spy  # type: ignore[attr-defined]
        b.send(b"x")
        events = sel.select(5.0)
        sel._selector = spy._epoll  # type: ignore[attr-defined]
    assert [(k.data, ev) for k, ev in events] == [("reader", selectors.EVENT_READ)]
    assert recorded.timeouts == [5.0]
    assert spy.timeouts == [0]


def test_ready_sockets_are_reported_whether_the_wait_is_timed_or_not(
    recorded: _RecordingSelect,
) -> None:
    """A readable socket ends a timed wait at once and comes back as an event, as with epoll."""
    a, b = socket.socketpair()
    with a, b, timers.PreciseSelector() as sel:
        key = sel.register(a, selectors.EVENT_READ, data="reader")
        b.send(b"x")
        start = time.monotonic()
        timed = sel.select(5.0)
        assert time.monotonic() - start < 2.5  # woke on the event, not the 5 s timeout
        assert [(k.data, ev) for k, ev in timed] == [("reader", selectors.EVENT_READ)]
        untimed = sel.select(None)  # no timer due: plain blocking epoll, still ready
        assert [(k.fileobj, ev) for k, ev in untimed] == [(key.fileobj, selectors.EVENT_READ)]
    assert recorded.timeouts == [5.0]  # only the timed wait went through select()


@pytest.mark.parametrize("timeout", [None, 0, -1.0])
def test_untimed_and_zero_waits_do_not_go_through_select(
    recorded: _RecordingSelect, timeout: float | None
) -> None:
    """Blocking and polling waits are epoll's own: select() is only for a positive timeout."""
    a, b = socket.socketpair()
    with a, b, timers.PreciseSelector() as sel:
        sel.register(a, selectors.EVENT_READ)
        b.send(b"x")
        assert len(sel.select(timeout)) == 1
    assert recorded.timeouts == []


def test_an_epoll_fd_past_fd_setsize_falls_back_to_epoll_rounding(
    recorded: _RecordingSelect, monkeypatch: pytest.MonkeyPatch
) -> None:
    """select() takes no descriptor >= FD_SETSIZE: the wait is epoll's, rounded up, no error."""
    with timers.PreciseSelector() as sel:
        monkeypatch.setattr(timers, "FD_SETSIZE", sel.fileno())
        start = time.monotonic()
        assert sel.select(0.0042) == []
        waited = time.monotonic() - start
    assert recorded.timeouts == []
    assert waited >= 0.004


def test_timers_run_drives_a_coroutine_on_a_precise_loop() -> None:
    """timers.run is asyncio.run on the precise selector: result, timers and closing included."""

    async def main() -> tuple[str, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(0.003)
        return type(loop._selector).__name__, loop.time() - start  # type: ignore[attr-defined]

    name, slept = timers.run(main())
    assert name == "PreciseSelector"
    assert slept >= 0.003


def test_the_replay_engine_serves_on_a_precise_loop(tmp_path: Any) -> None:
    """ReplayServer (base-URL replay, the pytest plugin) runs its loop on PreciseSelector."""
    from replayproxy import _store as store
    from replayproxy._core.cassette.model import Cassette

    path = tmp_path / "empty.cassette"
    store.save(path, Cassette())
    with ReplayServer(path) as server:
        loop = server._loop
        assert loop is not None
        assert isinstance(loop._selector, timers.PreciseSelector)  # type: ignore[attr-defined]


def test_the_embedded_mitmproxy_runs_on_a_precise_loop(tmp_path: Any) -> None:
    """The forward-mode origin shares mitmproxy's loop, so that loop gets the selector too."""
    with EmbeddedProxy([], confdir=tmp_path) as proxy:
        assert proxy.loop is not None
        assert isinstance(proxy.loop._selector, timers.PreciseSelector)  # type: ignore[attr-defined]
