"""Process plumbing for the benchmarks: server subprocesses and the multi-process client pool.

- :class:`Server` starts one server subprocess (stdout/stderr to a log file, never a pipe that
  could fill up and stall it), waits until it reports its port, reads its peak memory
  (``VmHWM`` from ``/proc/PID/status``) and stops it by PID (terminate, then kill).
- :class:`Clients` is a pool of client *processes* (``spawn``) so hundreds of concurrent
  streams are read by several interpreters, not one busy event loop.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import _client

__all__ = ["Clients", "Server", "bin_path", "port_from_file", "port_from_log", "servers"]


def bin_path(name: str) -> str:
    """A console script installed next to the running interpreter (same venv)."""
    p = Path(sys.executable).with_name(name)
    if not p.exists():
        raise RuntimeError(f"{name} not found next to {sys.executable}")
    return str(p)


def port_from_log(pattern: str) -> Callable[[Server], int | None]:
    rx = re.compile(pattern)

    def find(server: Server) -> int | None:
        m = rx.search(server.log_text())
        return int(m.group(1)) if m else None

    return find


def port_from_file(path: Path) -> Callable[[Server], int | None]:
    def find(server: Server) -> int | None:
        try:
            return int(path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    return find


class Server:
    """One server subprocess on 127.0.0.1, identified by its PID."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        find_port: Callable[[Server], int | None],
        workdir: Path,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.log_path = workdir / f"{re.sub(r'[^a-z0-9]+', '-', name.lower())}.log"
        self.argv = list(argv)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        self.find_port = find_port
        self.port = 0
        self.stopped = False  # True once we stopped it: any earlier exit is a crash

    def wait(self, timeout: float = 30.0) -> int:
        """Block until the server reports its port; stop it and raise if it never does."""
        deadline = time.monotonic() + timeout
        try:
            while not self.port:
                port = self.find_port(self)
                if port:
                    self.port = port
                    break
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"{self.name} exited ({self.proc.returncode}): {self.tail()}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{self.name} did not report a port in {timeout}s: {self.tail()}"
                    )
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise
        return self.port

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        return self.log_path.read_text("utf-8", "replace")

    def tail(self, n: int = 800) -> str:
        return self.log_text()[-n:].strip().replace("\n", " | ")

    def crashed(self) -> str:
        """Why the process ended before we stopped it ("" while it runs or if we stopped it)."""
        rc = self.proc.poll()
        if rc is None or self.stopped:
            return ""
        return f"exited on its own (status {rc}): {self.tail(300)}"

    def vm_hwm_kib(self) -> int | None:
        """Peak resident set size of the process so far (``VmHWM``), in KiB."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return None
        m = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        return int(m.group(1)) if m else None

    def interrupt(self) -> None:
        """Ask the process (by its PID) to shut down cleanly, without waiting."""
        if self.proc.poll() is None and not self.stopped:
            self.stopped = True
            self.proc.send_signal(signal.SIGINT)

    def stop(self) -> None:
        """Stop the process by its PID: SIGINT (clean shutdown), then SIGKILL after 5 s."""
        self.interrupt()
        if self.proc.poll() is None:
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if not self._log.closed:
            self._log.close()


def _noop() -> int:
    return os.getpid()


class Clients:
    """A pool of ``procs`` client processes; work is split evenly between them."""

    def __init__(self, procs: int) -> None:
        self.procs = procs
        self.pool = ProcessPoolExecutor(procs, mp_context=multiprocessing.get_context("spawn"))
        # Start every worker now, so interpreter start-up never lands inside a measurement.
        for f in [self.pool.submit(_noop) for _ in range(procs * 2)]:
            f.result(60)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def streams(
        self,
        host: str,
        port: int,
        jobs: list[tuple[str, int | None, bytes, int]],
        timeout: float,
        keep: bool = False,
    ) -> list[_client.StreamResult]:
        procs = min(self.procs, len(jobs)) or 1
        shares = [jobs[k::procs] for k in range(procs)]
        futs = [
            self.pool.submit(_client.run_streams, host, port, sh, timeout, keep) for sh in shares
        ]
        return [r for f in futs for r in f.result(timeout + 60)]

    def throughput(
        self,
        host: str,
        port: int,
        requests: list[bytes],
        chunks: list[int],
        conns: int,
        duration: float,
    ) -> list[_client.ThroughputResult]:
        start = time.monotonic_ns() + 300_000_000
        per = [
            conns // self.procs + (1 if k < conns % self.procs else 0) for k in range(self.procs)
        ]
        futs = [
            self.pool.submit(
                _client.run_throughput, host, port, requests, chunks, n, start, duration
            )
            for n in per
            if n
        ]
        return [f.result(duration + 120) for f in futs]


@contextlib.contextmanager
def servers() -> Iterator[list[Server]]:
    """Collects started servers and stops every one of them on exit, even on errors."""
    started: list[Server] = []
    try:
        yield started
    finally:
        for s in started:  # all shut down in parallel ...
            with contextlib.suppress(Exception):
                s.interrupt()
        for s in reversed(started):  # ... then each is waited for (and killed if it hangs)
            with contextlib.suppress(Exception):
                s.stop()
