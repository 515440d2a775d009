"""Benchmark: what one fault-matrix cell costs in pytest at speed 0, beyond the test body.

Writes a project with one test file and two tests with the same body (one streamed Anthropic
message from the simulator's ``anthropic-text`` stream, 12 events, 1.7 KB, read line by line
with httpx, a cut connection tolerated), both replaying one cassette in base-URL mode:

- ``test_matrix``: ``@pytest.mark.replayproxy(matrix="splits,cuts")``: one item per cell;
- ``test_plain``: the same body parametrized N times (N = the number of cells), no matrix.

The cassette is recorded once (record mode ``once``, the simulator running), then the project
runs ``--repeat`` times in record mode ``none`` at ``--replayproxy-speed=0`` with the
simulator stopped. A conftest in the project logs each item's setup + call + teardown time
(pytest's own report durations), so both kinds of item are timed the same way, side by side in
the same runs. Prints, per kind, the median over runs of the mean ms per item, the overhead per
cell (matrix minus plain: on average and for the median cell) and each cell's figure; a
cell's own fault (``split:bytes=1`` writes 1.7 KB one byte at a time, 20 us apart) is part of
what it costs. A measurement, not a test: always exits 0.

Run: ``python benchmarks/bench_matrix.py [--repeat R] [--matrix SETS] [--keep]``
(``--quick``: the ``cuts`` set, one run; used by the smoke test).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from replayproxy._core.matrix import cells
from replayproxy.testing import Simulator

CONFTEST = """
import json
import os

import pytest

TIMES = os.environ["BENCH_TIMES"]
_spent = {}


def pytest_runtest_logreport(report):
    _spent[report.nodeid] = _spent.get(report.nodeid, 0.0) + report.duration
    if report.when == "teardown":
        with open(TIMES, "a") as f:
            f.write(json.dumps([report.nodeid, _spent.pop(report.nodeid), report.outcome]) + "\\n")
"""

TESTS = """
import os

import httpx
import pytest

UPSTREAM = os.environ["BENCH_UPSTREAM"]
BODY = {{"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
         "messages": [{{"role": "user", "content": "Say hi"}}]}}
# One client for the run: a new httpx.Client loads its CA bundle (tens of ms), which would
# drown what is measured here.
CLIENT = httpx.Client(timeout=30)


def body(url):
    lines = 0
    try:
        with CLIENT.stream("POST", url + "/v1/messages", json=BODY) as response:
            for _ in response.iter_lines():
                lines += 1
    except httpx.TransportError:
        pass  # the cuts: what the reader makes of it is not measured here
    return lines


@pytest.mark.replayproxy(upstream=UPSTREAM, cassette="stream.cassette")
def test_warmup(replayproxy):  # not measured: the first item starts the replay server
    body(replayproxy.url)


@pytest.mark.replayproxy(upstream=UPSTREAM, cassette="stream.cassette", matrix={matrix!r})
def test_matrix(replayproxy):
    body(replayproxy.url)


@pytest.mark.replayproxy(upstream=UPSTREAM, cassette="stream.cassette")
@pytest.mark.parametrize("n", range({n}))
def test_plain(replayproxy, n):
    body(replayproxy.url)
"""


def _run(project: Path, upstream: str, times: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BENCH_UPSTREAM=upstream, BENCH_TIMES=str(times))
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += [f"--replayproxy-confdir={project / '.mitmproxy'}", *args]
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else done.stderr[-300:]


def _cell(nodeid: str) -> str | None:
    """The cell id of a matrix item's node id (``""`` for the plain test, ``None`` for the
    rest)."""
    if "::test_plain[" in nodeid:
        return ""
    if "::test_matrix[" not in nodeid:
        return None
    return nodeid.split("::test_matrix[", 1)[1][:-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", default="splits,cuts", help="the sets (default splits,cuts)")
    parser.add_argument("--repeat", type=int, default=5, help="runs (default 5; the median)")
    parser.add_argument("--quick", action="store_true", help="the cuts set, one run")
    parser.add_argument("--keep", action="store_true", help="keep the project directory")
    args = parser.parse_args(argv)
    selection, repeat = ("cuts", 1) if args.quick else (args.matrix, args.repeat)
    chosen = cells(selection)
    n = len(chosen)
    outcome = {c.id: c.set for c in chosen}
    project = Path(tempfile.mkdtemp(prefix="replayproxy-bench-matrix-"))
    (project / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (project / "test_bench.py").write_text(TESTS.format(matrix=selection, n=n))
    times = project / "times.jsonl"
    try:
        with Simulator() as sim:
            upstream = sim.url
            recorded = _run(project, upstream, times, "--replayproxy-record-mode=once")
        if not (project / "stream.cassette").exists():
            print(f"recording failed: {_tail(recorded)}\n{recorded.stdout[-2000:]}")
            return 0
        plain_runs: list[float] = []
        matrix_runs: list[float] = []
        by_set: dict[str, list[float]] = {}
        by_cell: dict[str, list[float]] = {}
        outcomes: dict[str, int] = {}
        sessions: list[float] = []
        tails: list[str] = []
        for _ in range(repeat):
            times.unlink(missing_ok=True)
            start = time.perf_counter()
            done = _run(project, upstream, times, "--replayproxy-speed=0")
            sessions.append(time.perf_counter() - start)
            tails.append(_tail(done))
            plain: list[float] = []
            matrix: list[float] = []
            sets: dict[str, list[float]] = {}
            for line in times.read_text().splitlines():
                nodeid, spent, result = json.loads(line)
                outcomes[result] = outcomes.get(result, 0) + 1
                cell = _cell(nodeid)
                if cell is None:
                    continue
                if not cell:
                    plain.append(spent * 1000)
                    continue
                matrix.append(spent * 1000)
                sets.setdefault(outcome.get(cell, "?"), []).append(spent * 1000)
                by_cell.setdefault(cell, []).append(spent * 1000)
            plain_runs.append(statistics.fmean(plain))
            matrix_runs.append(statistics.fmean(matrix))
            for name, spent_ms in sets.items():
                by_set.setdefault(name, []).append(statistics.fmean(spent_ms))
        plain_ms = statistics.median(plain_runs)
        matrix_ms = statistics.median(matrix_runs)
        print(
            f"fault matrix benchmark: {selection} ({n} cells) vs the same test {n} times "
            f"without the matrix; speed 0, base URL, median of {repeat} runs, "
            f"Python {sys.version.split()[0]}"
        )
        print(f"(per run: {tails[-1]}; item outcomes over all runs: {outcomes})")
        print()
        print(f"{'items':34} {'count':>5} {'ms per item':>12}")
        print(f"{'plain (no matrix)':34} {n:5d} {plain_ms:12.2f}")
        for name, runs in by_set.items():
            count = sum(1 for c in chosen if c.set == name)
            print(f"{'matrix: ' + name:34} {count:5d} {statistics.median(runs):12.2f}")
        print(f"{'matrix: every cell':34} {n:5d} {matrix_ms:12.2f}")
        print()
        cell_ms = sorted(statistics.median(spent) for spent in by_cell.values())
        print(
            f"overhead per cell: {matrix_ms - plain_ms:+.2f} ms beyond the test body on "
            f"average, {statistics.median(cell_ms) - plain_ms:+.2f} ms for the median cell "
            f"(target <= 20 ms); pytest run, wall: {statistics.median(sessions):.2f} s"
        )
        print()
        print(f"{'cell':50} {'ms per item':>12} {'beyond plain':>13}")
        for cell, spent in by_cell.items():
            ms = statistics.median(spent)
            print(f"{cell:50} {ms:12.2f} {ms - plain_ms:+13.2f}")
    finally:
        if args.keep:
            print(f"project kept in {project}")
        else:
            shutil.rmtree(project, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
