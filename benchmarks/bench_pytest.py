"""Benchmark: what the pytest plugin costs per test, next to the same suite without it.

Writes a project of N tests (default 200); each asks for one short streamed Anthropic message
(the simulator's ``anthropic-text`` stream: 12 events, 1.7 KB) with httpx and reads it whole.
Then, all on 127.0.0.1, best of ``--repeat`` runs of ``python -m pytest -q`` on it:

- ``no plugin``: ``-p no:replayproxy``; the tests talk to the local simulator directly (no
  delays), started once per run: the baseline;
- ``record (once)``: the plugin records the N cassettes through mitmproxy (one per test);
- ``replay, base URL``: ``--replayproxy-speed 0``, record mode none: in-process engine;
- ``replay, proxy mode``: the same through the embedded mitmproxy (``HTTPS_PROXY``).

Prints wall time per run (process start to exit) and pytest's own session time, and the
overhead per test against the baseline. A measurement, not a test: always exits 0.

Run: ``python benchmarks/bench_pytest.py [--tests N] [--repeat R] [--keep]``
(``--quick``: 20 tests, 1 run; used by the smoke test).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from replayproxy.testing import Simulator

CONFTEST = """
import os

import pytest

BASELINE = os.environ.get("BENCH_MODE") == "baseline"
PROXY = os.environ.get("BENCH_MODE") == "proxy"
UPSTREAM = os.environ["BENCH_UPSTREAM"]


@pytest.fixture
def base_url(request):
    if BASELINE:
        return UPSTREAM
    use = request.getfixturevalue("replayproxy")
    return UPSTREAM if PROXY else use.url


@pytest.fixture
def replayproxy_config():
    return {} if PROXY else {"upstream": UPSTREAM}
"""

TESTS = """
import httpx
import pytest


@pytest.mark.parametrize("n", range({n}))
def test_chat(base_url, n):
    body = {{"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
             "messages": [{{"role": "user", "content": f"question {{n}}"}}]}}
    with httpx.Client(timeout=30) as client:
        response = client.post(base_url + "/v1/messages", json=body)
    assert response.status_code == 200
    assert b"event: message_stop" in response.content
"""

_SESSION_TIME = re.compile(r" in ([\d.]+)s")


def _run(project: Path, mode: str, upstream: str, *args: str) -> tuple[float, float, str]:
    env = dict(os.environ, BENCH_MODE=mode, BENCH_UPSTREAM=upstream)
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    command += [f"--replayproxy-confdir={project / '.mitmproxy'}"] if mode != "baseline" else []
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    wall = time.perf_counter() - start
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    found = _SESSION_TIME.findall(tail)
    session = float(found[-1]) if found else float("nan")
    if done.returncode != 0:
        tail = f"FAILED (exit {done.returncode}): {tail}"
    return wall, session, tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 tests, one run of each")
    parser.add_argument("--keep", action="store_true", help="keep the project directory")
    args = parser.parse_args(argv)
    n, repeat = (20, 1) if args.quick else (args.tests, args.repeat)
    project = Path(tempfile.mkdtemp(prefix="replayproxy-bench-pytest-"))
    (project / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (project / "test_suite.py").write_text(TESTS.format(n=n))
    rows: list[tuple[str, float, float, str]] = []
    try:
        with Simulator() as sim:
            upstream = sim.url
            baseline = [_run(project, "baseline", upstream, "-p", "no:replayproxy")]
            baseline += [
                _run(project, "baseline", upstream, "-p", "no:replayproxy")
                for _ in range(repeat - 1)
            ]
            before = sim.connections
            record = _run(project, "base", upstream, "--replayproxy-record-mode=once")
            recorded = sim.connections - before
        # The simulator is stopped: replay must not need it.
        replays = {
            "replay, base URL (speed 0)": [
                _run(project, "base", upstream, "--replayproxy-speed=0") for _ in range(repeat)
            ],
            "replay, proxy mode (speed 0)": [],
        }
        # Proxy mode needs its own cassettes (the same requests, recorded through the proxy).
        shutil.rmtree(project / "cassettes", ignore_errors=True)
        with Simulator() as sim:
            _run(project, "proxy", sim.url, "--replayproxy-record-mode=once")
            proxy_upstream = sim.url
        replays["replay, proxy mode (speed 0)"] = [
            _run(project, "proxy", proxy_upstream, "--replayproxy-speed=0") for _ in range(repeat)
        ]
        rows.append(("no plugin (simulator direct)", *min(baseline)))
        rows.append(("record (once, base URL)", *record))
        for label, runs in replays.items():
            rows.append((label, *min(runs)))
        base_wall, base_session = rows[0][1], rows[0][2]
        print(
            f"pytest plugin benchmark: {n} tests, best of {repeat}, Python {sys.version.split()[0]}"
        )
        print(f"(the recording run made {recorded} upstream connections)")
        print()
        print(f"{'suite':32} {'wall s':>8} {'pytest s':>9} {'overhead/test ms':>17}  result")
        for label, wall, session, tail in rows:
            per_test = (session - base_session) / n * 1000
            print(f"{label:32} {wall:8.2f} {session:9.2f} {per_test:17.2f}  {tail}")
        print()
        print(
            "overhead/test = (pytest session time - the no-plugin session time) / tests; wall "
            f"time includes interpreter start and imports (no plugin: {base_wall:.2f} s)."
        )
    finally:
        if args.keep:
            print(f"project kept in {project}")
        else:
            shutil.rmtree(project, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
