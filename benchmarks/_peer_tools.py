"""The peers of the comparison (Reel, VCR.py), installed in a venv of their own and started.

They live in their own venv, never in replayproxy's: ``reel-vcr`` registers a pytest plugin
that would load into replayproxy's own test runs. With ``--peers`` the benchmark creates the
venv (``pip install reel-vcr vcrpy httpx``) at ``$REPLAYPROXY_BENCH_PEERS`` (default
``~/.cache/replayproxy/bench-peers-pyX.Y``), or reuses it; where that fails, or without
``--peers``, each peer row says why it was not measured.

- **Reel** (``reel-vcr``, a proxy with a JSONL tape): ``reel record`` in front of the floor
  server records the stream as a Reel user would (through Reel's own recorder), then
  ``reel replay`` serves it. Reel takes no port 0, so a free port is picked just before.
- **VCR.py**: replays inside the client (it patches httpx), so ``_vcr_client.py`` runs as the
  client, in the peers' venv: it records once against the floor, then replays.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from _harness import Clients, Server, port_from_log
from _peers import Seen
from _streams import BenchStream, request_bytes
from _targets import HERE, LOOPBACK, Target, Unavailable

__all__ = ["Peers"]

PACKAGES = ("reel-vcr", "vcrpy", "httpx")
_INSTALL_TIMEOUT_S = 600
_NO_PROXY = {"NO_PROXY": "*", "no_proxy": "*"}  # loopback only, whatever the environment says


def _default_dir() -> Path:
    v = sys.version_info
    return Path("~/.cache/replayproxy").expanduser() / f"bench-peers-py{v.major}.{v.minor}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


class Peers:
    """Where the peers' venv is, whether each peer is usable there, and how to run them."""

    def __init__(self, wanted: bool) -> None:
        self.dir = Path(os.environ.get("REPLAYPROXY_BENCH_PEERS") or _default_dir())
        self.python = self.dir / "bin" / "python"
        self.problem = ""
        if not wanted:
            self.problem = "not requested (run with --peers)"
        elif not self._ready():
            self.problem = self._install()

    def _ready(self) -> bool:
        return (self.dir / "bin" / "reel").exists() and self._imports("vcr, httpx") == ""

    def _imports(self, modules: str) -> str:
        if not self.python.exists():
            return f"no peers venv at {self.dir}"
        r = subprocess.run(
            [str(self.python), "-c", f"import {modules}"], capture_output=True, text=True
        )
        return "" if r.returncode == 0 else r.stderr.strip().splitlines()[-1][:120]

    def _install(self) -> str:
        """Create the venv and pip-install the peers; '' on success, else why not."""
        print(f"   installing {' '.join(PACKAGES)} into {self.dir} ...", flush=True)
        try:
            self.dir.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [sys.executable, "-m", "venv", str(self.dir)], check=True, capture_output=True
            )
            r = subprocess.run(
                [str(self.python), "-m", "pip", "install", "-q", *PACKAGES],
                capture_output=True,
                text=True,
                timeout=_INSTALL_TIMEOUT_S,
            )
        except (OSError, subprocess.SubprocessError) as e:
            return f"could not create the peers venv: {e}"
        if r.returncode != 0:
            lines = [ln for ln in r.stderr.splitlines() if ln.startswith("ERROR")] or [r.stderr]
            return f"pip install failed: {lines[-1].strip()[:150]}"
        return ""

    # -- Reel -----------------------------------------------------------------------------

    def reel(
        self,
        workdir: Path,
        floor_port: int,
        stream: BenchStream,
        clients: Clients,
        started: list[Server],
    ) -> Target:
        """Record ``stream`` through ``reel record`` from the floor, then start ``reel
        replay`` on that tape. Every server started is added to ``started`` at once (the
        caller stops them by PID, whatever happens here)."""
        reel = self.dir / "bin" / "reel"
        if self.problem or not reel.exists():
            raise Unavailable(self.problem or f"reel is not installed in {self.dir}")
        tape = workdir / "reel.jsonl"
        running = r"Uvicorn running on http://[\d.]+:(\d+)"
        rec = Server(
            "reel record",
            [str(reel), "record", "--cassette", str(tape), "--host", LOOPBACK,
             "--port", str(_free_port()), "--upstream", f"http://{LOOPBACK}:{floor_port}"],
            port_from_log(running), workdir, env=_NO_PROXY,
        )  # fmt: skip
        started.append(rec)
        rec.wait(60)
        job = (stream.name, None, request_bytes(stream, f"{LOOPBACK}:{rec.port}"), 0)
        seen = clients.streams(LOOPBACK, rec.port, [job], timeout=stream.frames[-1][0] / 1e9 + 30)
        rec.stop()
        if seen[0].error or not tape.exists() or not tape.read_text().strip():
            raise Unavailable(f"reel record wrote no tape ({seen[0].error or 'empty'})")
        rep = Server(
            "reel replay",
            [str(reel), "replay", "--cassette", str(tape), "--host", LOOPBACK,
             "--port", str(_free_port()), "--timing", "realtime"],
            port_from_log(running), workdir, env=_NO_PROXY,
        )  # fmt: skip
        started.append(rep)
        return Target("reel replay", 0, [rep])

    # -- VCR.py ---------------------------------------------------------------------------

    def vcr(self, workdir: Path, floor_port: int, stream: BenchStream, runs: int) -> list[Seen]:
        """Record ``stream`` with VCR.py from the floor once, then replay it ``runs`` times."""
        if self.problem:
            raise Unavailable(self.problem)
        problem = self._imports("vcr, httpx")
        if problem:
            raise Unavailable(f"VCR.py is not usable in {self.dir}: {problem}")
        cassette = workdir / "vcr.yaml"
        body = workdir / "vcr-body.json"
        body.write_bytes(stream.body)
        url = f"http://{LOOPBACK}:{floor_port}/v1/chat/completions?{stream.query}"
        timeout = stream.frames[-1][0] / 1e9 * (runs + 1) + 60
        for mode in ("record", "replay"):
            r = subprocess.run(
                [str(self.python), str(HERE / "_vcr_client.py"),
                 str(cassette), url, str(body), mode, str(runs)],
                capture_output=True, text=True, timeout=timeout,
                env={**os.environ, **_NO_PROXY},
            )  # fmt: skip
            if r.returncode != 0:
                raise Unavailable(f"VCR.py {mode} failed: {r.stderr.strip()[-150:]}")
        out = []
        for line in r.stdout.splitlines():
            doc = json.loads(line)
            reads = tuple((int(t), int(n)) for t, n in doc["reads"])
            out.append(Seen(int(doc["t_send"]), reads, base64.b64decode(doc["body"]), doc["error"]))
        return out
