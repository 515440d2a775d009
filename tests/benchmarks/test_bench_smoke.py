"""Smoke test of the replay benchmark: its tiny configuration runs end to end and prints its tables.

The figures themselves are not asserted (they belong to the benchmark, on a quiet machine);
what is asserted is that every section ran, that the floors and every replayproxy path were
actually measured without client errors, and that the recorder produced a byte-exact cassette.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_replay.py"
HEADERS = (
    "1. Timing error",
    "2. Split fidelity",
    "3. Instant mode throughput",
    "4. Recording overhead",
    "5. Peak memory",
    "6. Peers",
    "Targets",
)
MEASURED_ROWS = (
    r"^1\s+direct: floor \(plain asyncio\)\s+\d",
    r"^1\s+base URL: replayproxy replay \(engine\)\s+\d",
    r"^1\s+proxy: floor \(mitmdump passthrough\)\s+\d",
    r"^1\s+proxy: replayproxy replay \(forward\)\s+\d",
    r"^base URL: replayproxy replay --speed 0 \(engine\)\s+\d+\s+[\d.]+\s+[\d.]+\s+yes\s+0\s*$",
    # (mitmproxy forwards a chunk split across two reads as two: not asserted through it)
    r"^proxy: replayproxy replay --speed 0 \(forward\)\s+\d+\s+[\d.]+\s+[\d.]+\s+\S.*\s0\s*$",
    r"^proxy: mitmdump --server-replay \(same flows\)\s+\d+\s+[\d.]+\s+1\.00\s+no",
    r"^1\s+replayproxy record\s+\d",
    r"recorded cassette: 1 interactions \(1 streams were read\), 1 with the body byte-exact",
    # Peers, measured by events: replayproxy's bytes are the recorded bytes (whether reads
    # equal writes depends on the machine's load, so that cell is not asserted); server replay
    # sends each body whole, in one read.
    r"^replayproxy, base URL \(engine\)\s+yes\s+.*\s\d+\.\d+\s",
    r"^replayproxy, forward proxy \(mitmproxy\)\s+yes\s+.*\s\d+\.\d+\s",
    r"^mitmproxy --server-replay\s+yes\s+no \(1 reads for \d+ frames\)\s+\d",
    # Reel and VCR.py: measured with --peers, else a reason (never a crash).
    r"^Reel \(reel-vcr\) replay\s+(yes|no|-)\s",
    r"^VCR.py \(httpx, in the client\)\s+(yes|no|-)\s",
)


def _run_quick(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(
        [sys.executable, str(BENCH), "--quick"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        # SIGINT, not SIGKILL: the benchmark's finally blocks stop every server it started.
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(f"benchmark --quick did not finish in 90 s:\n{out}\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_quick_benchmark_runs_every_section_and_exits_0(tmp_path: Path) -> None:
    """`bench_replay.py --quick` exits 0, prints every table and measures every path cleanly."""
    r = _run_quick(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert "exited on its own" not in r.stdout  # no server crashed during the run
    for header in HEADERS:
        assert header in r.stdout, header
    for row in MEASURED_ROWS:
        assert re.search(row, r.stdout, re.M), f"missing or unmeasured: {row}\n{r.stdout}"
    # Every timed row reports zero client errors (a wrong body size or a failed stream).
    for line in r.stdout.splitlines():
        if re.match(r"^\d+\s+(direct|proxy|base URL): ", line):
            assert line.rstrip().endswith(" 0"), line
    assert list(tmp_path.iterdir()) == []  # the work directory lives elsewhere and is removed
