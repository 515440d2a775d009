"""Smoke test of the timer benchmark: both loops are measured and compared in one run.

The figures are not asserted (they belong to the benchmark, on a quiet machine); what is
asserted is that each loop got a row of four figures and the ratio line was printed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_timers.py"
NUMBER = r"\d+\.\d{3}"
ROWS = (
    r"^Timer lateness, ms \(1 x 5 timers per loop, Python 3\.\d+\.\d+\)$",
    rf"^stock asyncio \(floor\)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}$",
    rf"^replayproxy \(PreciseSelector\)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}$",
    r"^median lateness: \d+\.\d\dx the stock loop's$",
)


def test_bench_timers_measures_both_loops_side_by_side(tmp_path: Path) -> None:
    """--rounds 1 --timers 5 prints one row per loop and the ratio of their medians."""
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "1", "--timers", "5"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for row in ROWS:
        assert re.search(row, proc.stdout, re.MULTILINE), (row, proc.stdout)
