"""Fixtures for the recording tests: simulators, a shared mitmproxy confdir, the CLI as a process.

* ``confdir`` (session) — one mitmproxy configuration directory (its CA is made once).
* ``plain_sim`` / ``tls_sim`` (module) — started simulators (HTTP / HTTPS with the session
  ``ca``); each test sets ``behavior`` itself (it is reset and ``served`` cleared per test).
* ``recorder_cli`` (function) — starts ``replayproxy record ... --listen 127.0.0.1:0`` as a
  subprocess (:class:`RecordProcess`), waits for its ready lines, and kills it at teardown.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from replayproxy.testing import Behavior, Simulator

REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")


@pytest.fixture(scope="session")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mitmproxy confdir shared by the session (the CA is generated on first use)."""
    return tmp_path_factory.mktemp("mitmproxy-conf")


@pytest.fixture(scope="module")
def _plain_sim() -> Iterator[Simulator]:
    with Simulator() as sim:
        yield sim


@pytest.fixture(scope="module")
def _tls_sim(ca: Any) -> Iterator[Simulator]:
    with Simulator(tls=ca) as sim:
        yield sim


@pytest.fixture
def plain_sim(_plain_sim: Simulator) -> Iterator[Simulator]:
    """The module's plain-HTTP simulator, with default behavior and no served records."""
    _plain_sim.behavior = Behavior()
    _plain_sim.clear()
    yield _plain_sim


@pytest.fixture
def tls_sim(_tls_sim: Simulator) -> Iterator[Simulator]:
    """The module's HTTPS simulator (certificate from the session ``ca``), reset per test."""
    _tls_sim.behavior = Behavior()
    _tls_sim.clear()
    yield _tls_sim


def clean_env(**extra: str) -> dict[str, str]:
    """The test process environment without inherited proxy/CA settings, plus ``extra``."""
    drop = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    env = {k: v for k, v in os.environ.items() if k.lower() not in drop}
    env.update(extra)
    return env


class RecordProcess:
    """A running ``replayproxy record`` process and its ready lines."""

    def __init__(self, args: Sequence[str], env: dict[str, str], timeout: float = 20.0) -> None:
        self.args = [REPLAYPROXY, "record", "--listen", "127.0.0.1:0", *args]
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.url = ""
        self.ca_cert: str | None = None
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("listening on "):
                self.url = line.split()[-1]
            elif line.startswith("ca-cert "):
                self.ca_cert = line.split(" ", 1)[1].strip()
            if self.url and (self.ca_cert or "--upstream" in args):
                break
        if not self.url:
            _out, err = self.finish(timeout)
            raise AssertionError(f"recorder did not start: {self.lines} {err}")

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def finish(self, timeout: float = 20.0) -> tuple[str, str]:
        """Wait for exit; return the rest of stdout and all of stderr."""
        out, err = self.proc.communicate(timeout=timeout)
        return out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.communicate(timeout=10)


def run_record(
    args: Sequence[str], env: dict[str, str], timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run ``replayproxy record --listen 127.0.0.1:0 ARGS`` to completion (with a command)."""
    return subprocess.run(
        [REPLAYPROXY, "record", "--listen", "127.0.0.1:0", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def recorder_cli() -> Iterator[Callable[..., RecordProcess]]:
    """Factory: start a recorder process (``RecordProcess``); all are killed at teardown."""
    started: list[RecordProcess] = []

    def start(args: Sequence[str], env: dict[str, str] | None = None) -> RecordProcess:
        proc = RecordProcess(args, env if env is not None else clean_env())
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
