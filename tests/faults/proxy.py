"""Start ``replayproxy replay`` as a subprocess and read its ready lines (test helper)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ReplayProcess", "replay_process"]

EXE = str(Path(sys.executable).with_name("replayproxy"))


@dataclass
class ReplayProcess:
    url: str
    ca_cert: str | None
    proc: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)


@contextmanager
def replay_process(
    cassette: Path, args: Sequence[str], confdir: Path, timeout: float = 30.0
) -> Iterator[ReplayProcess]:
    """``replayproxy replay CASSETTE --listen 127.0.0.1:0 ARGS``; stopped (by PID) on exit."""
    cmd = [EXE, "replay", str(cassette), "--listen", "127.0.0.1:0", "--confdir", str(confdir)]
    cmd += args
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    stderr: list[str] = []
    threading.Thread(target=lambda: stderr.extend(proc.stderr or ()), daemon=True).start()
    try:
        url = ca = None
        deadline = time.monotonic() + timeout
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"replayproxy exited early: {''.join(stderr)}")
            if line.startswith("listening on "):
                url = line.split()[-1]
            elif line.startswith("ca-cert "):
                ca = line.split(" ", 1)[1].strip()
            if url and (ca or "--upstream" in args):
                break
        assert url, "no ready line"
        yield ReplayProcess(url, ca, proc, stderr)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
