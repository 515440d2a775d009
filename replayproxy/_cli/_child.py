"""Running the command a proxy wraps (``-- COMMAND``): its exit status, signals passed on, and
its process group ended when a matrix cell times out or is interrupted."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import IO, Any

from replayproxy._errors import UsageError

__all__ = ["Signals", "run_child"]

# How long a SIGINT may take to stop the wrapped command by itself before we forward it.
# A Ctrl-C at a terminal already reaches the whole foreground process group, child included;
# forwarding at once would hit the child twice.
_SIGINT_GRACE_S = 1.0


class Signals:
    """Installs SIGINT/SIGTERM handlers for the duration of a ``with`` block (main thread only)."""

    def __init__(self, on_signal: Callable[[int], None]) -> None:
        self.on_signal = on_signal
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.on_signal(signum)

    def __enter__(self) -> Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def _exit_status(returncode: int) -> int:
    # A command killed by signal N exits like it would under a shell: 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """Stop the command's process group (the command and what it started, nothing else):
    SIGTERM, then SIGKILL for whatever is still there a second later. The group is waited
    for, not only the command: a shell's background job ignores SIGINT and outlives it."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)
        deadline = time.monotonic() + 1.0
        while _group_alive(child.pid) and time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.05)  # reaps the command; the rest are not our children
        if not _group_alive(child.pid):
            return


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is left (zombies not yet reaped count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_child(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float | None = None,
    output: IO[bytes] | None = None,
) -> int:
    """Run ``command`` with ``env`` until it exits; return its exit status (128+N if killed).

    SIGTERM is forwarded at once. SIGINT is forwarded only if the command is still running
    :data:`_SIGINT_GRACE_S` later (a terminal's Ctrl-C has already reached it). With
    ``timeout`` the command runs in a process group of its own, which is ended after
    ``timeout`` seconds (then :class:`subprocess.TimeoutExpired` is raised); SIGINT and SIGTERM
    go to that group at once, a second one ends it, and :class:`KeyboardInterrupt` is raised
    once the command is gone (a matrix run stops instead of going on to its next cell). With
    ``output`` its stdout and stderr go there instead of ours.
    """
    own_group = timeout is not None
    child: subprocess.Popen[bytes] | None = None
    pending_sigint: list[float] = []
    interrupted: list[int] = []
    early: list[int] = []  # a SIGTERM that came before the command started
    deadline = None if timeout is None else time.monotonic() + timeout

    def on_signal(signum: int) -> None:
        if own_group:
            # Nothing else reaches a command in its own group: pass the signal on at once.
            interrupted.append(signum)
            if child is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signum)
        elif signum == signal.SIGINT:
            pending_sigint.append(time.monotonic())
        elif child is None:
            early.append(signum)
        elif child.poll() is None:
            child.send_signal(signum)

    # The handlers go in before the command starts: a signal in between would otherwise hit
    # Python's default handler and leave a command in its own group running.
    with Signals(on_signal):
        try:
            child = subprocess.Popen(
                list(command),
                env=dict(env),
                stdout=output,
                stderr=subprocess.STDOUT if output is not None else None,
                process_group=0 if own_group else None,
            )
        except OSError as e:
            raise UsageError(f"cannot run {command[0]!r}: {e.strerror or e}") from None
        if interrupted:  # a signal came while it was starting: it never saw it
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, interrupted[0])
        for signum in early:
            child.send_signal(signum)
        while True:
            try:
                status = _exit_status(child.wait(timeout=0.1))
            except subprocess.TimeoutExpired:
                pass
            else:
                if interrupted:
                    _end_group(child)  # what the command started may have outlived it
                    raise KeyboardInterrupt
                return status
            if len(interrupted) > 1 or (deadline is not None and time.monotonic() > deadline):
                _end_group(child)
                if interrupted:
                    raise KeyboardInterrupt
                raise subprocess.TimeoutExpired(list(command), timeout or 0.0)
            if pending_sigint and time.monotonic() - pending_sigint[0] > _SIGINT_GRACE_S:
                pending_sigint.clear()
                if child.poll() is None:
                    child.send_signal(signal.SIGINT)
