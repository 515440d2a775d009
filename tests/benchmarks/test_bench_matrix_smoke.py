"""Smoke test of the fault-matrix benchmark: matrix items and plain items are both timed in
one run, and every cell gets a figure.

The figures are not asserted (they belong to the benchmark, on a quiet machine); what is
asserted is that each row was measured, every item passed, and the overhead line was printed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from replayproxy._core.matrix import cells

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_matrix.py"
NUMBER = r"-?\d+\.\d\d"


def test_bench_matrix_quick_times_matrix_and_plain_items_side_by_side(tmp_path: Path) -> None:
    """--quick (the cuts set, one run) prints ms per item for the plain test and the matrix,
    the overhead per cell, and one row per cell; every item passed."""
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    n = len(cells("cuts"))
    assert f"{2 * n + 1} passed" in out, out  # the warm-up, the plain items, the cells
    for row in (
        rf"^plain \(no matrix\)\s+{n}\s+{NUMBER}$",
        rf"^matrix: cuts\s+{n}\s+{NUMBER}$",
        rf"^matrix: every cell\s+{n}\s+{NUMBER}$",
        rf"^overhead per cell: \+?{NUMBER} ms beyond the test body on average, \+?{NUMBER} ms",
    ):
        assert re.search(row, out, re.M), (row, out)
    for cell in cells("cuts"):
        assert re.search(rf"^{re.escape(cell.id)}\s+{NUMBER}\s+[+-]{NUMBER}$", out, re.M), cell
