"""``replayproxy replay`` / ``record`` without a command wait for a signal or for the server to
stop (``replayproxy._cli._common.wait_for_signal``), without waking up to poll.

Real servers (:class:`ReplayServer`), real signals sent to this process. Every wait has a
safety: a SIGTERM after 15 s ends a wait that would otherwise hang, and the test fails.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from replayproxy._cli._common import wait_for_signal
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import cassette, interaction

CASSETTE = cassette(interaction([b"data: 1\n\n"]))
SAFETY_S = 15.0

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signal handlers are installed from the main thread only",
)


def _later(seconds: float, action: object) -> threading.Timer:
    timer = threading.Timer(seconds, action)  # type: ignore[arg-type]
    timer.daemon = True
    timer.start()
    return timer


@pytest.fixture
def safety() -> Iterator[None]:
    """A SIGTERM to this process if the wait hangs (the wait then returns 0: a failure)."""
    timer = _later(SAFETY_S, lambda: os.kill(os.getpid(), signal.SIGTERM))
    yield
    timer.cancel()


@pytest.mark.usefixtures("safety")
def test_a_server_that_stops_by_itself_ends_the_wait_with_status_1() -> None:
    server = ReplayServer(CASSETTE, speed=0).start()
    try:
        _later(0.3, server.stop)
        start = time.monotonic()
        assert wait_for_signal(server) == 1
        assert time.monotonic() - start < SAFETY_S / 2
    finally:
        server.stop()


@pytest.mark.usefixtures("safety")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_wait_with_status_0_and_restores_the_handlers(signum: int) -> None:
    """The server is still running when the signal comes: the caller stops it (serve())."""
    before = signal.getsignal(signum)
    server = ReplayServer(CASSETTE, speed=0).start()
    try:
        ready: list[float] = []
        _later(0.3, lambda: os.kill(os.getpid(), signum))
        assert wait_for_signal(server, ready=lambda: ready.append(time.monotonic())) == 0
        assert len(ready) == 1
        assert server.is_running
    finally:
        server.stop()
    assert signal.getsignal(signum) is before


class _Listener:
    """A listener that counts every look the waiting code takes at it."""

    def __init__(self) -> None:
        self.looks = 0
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        self.looks += 1
        return "http://127.0.0.1:1"

    @property
    def is_running(self) -> bool:
        self.looks += 1
        return not self._stopped.is_set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)


@pytest.mark.usefixtures("safety")
def test_the_wait_does_not_poll_the_server() -> None:
    """For a second of serving nothing touches the server: the main thread sleeps (a poll
    takes the GIL from the serving thread; benchmarks/README.md)."""
    listener = _Listener()
    _later(1.0, listener.stop)
    assert wait_for_signal(listener) == 1
    assert listener.looks == 0
