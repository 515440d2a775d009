"""The wrapped command and signals: a SIGINT or SIGTERM that arrives while the command is still
starting reaches it once it runs (a matrix cell's command in its own group would otherwise keep
running after its run was interrupted)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from replayproxy._cli import _child


def _signalled_popen(signum: int, started: list[subprocess.Popen[bytes]]) -> type:
    """A Popen that receives ``signum`` itself as soon as the command has started, before the
    caller has its handle."""

    class Popen(subprocess.Popen[bytes]):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)
            os.kill(os.getpid(), signum)

    return Popen


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_cell_command_starts_ends_it(
    monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """In its own group (a matrix cell): the command is ended and the run is interrupted,
    long before the command's own 30 s, not left running."""
    started: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(_child.subprocess, "Popen", _signalled_popen(signum, started))
    begun = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            _child.run_child([sys.executable, "-c", "import time; time.sleep(30)"], {}, timeout=60)
        assert time.monotonic() - begun < 25
        (child,) = started
        assert child.wait(timeout=5) is not None
    finally:
        for child in started:
            child.kill()
            child.wait()


def test_a_sigterm_while_a_wrapped_command_starts_reaches_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a group of its own (``replay -- COMMAND``): the SIGTERM is passed on once the
    command runs, and its status says so (128 + 15)."""
    started: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(_child.subprocess, "Popen", _signalled_popen(signal.SIGTERM, started))
    status = _child.run_child(
        [sys.executable, "-c", "import time; time.sleep(30)"], dict(os.environ)
    )
    assert status == 128 + signal.SIGTERM
