"""Smoke test of the WebSocket timing benchmark: one session per path runs end to end,
in this process and through the CLI in processes of their own.

The figures are not asserted (they belong to the benchmark, on a quiet machine); what is
asserted is that every path was measured and that the breakdown saw the proxy path's inbound
hop through the replay addon's arrival channel (no such column without it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_websocket.py"
NUMBER = r"\d+\.\d\d"
ROWS = (
    *(
        rf"^{path}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}-{NUMBER}$"
        for path in ("floor", "direct", "proxy", "direct-cli", "proxy-cli")
    ),
    *(
        rf"^target p99 <= 5 ms, {path}: (met|NOT met) "
        rf"\({NUMBER}; 95 % interval {NUMBER}-{NUMBER}\)$"
        for path in ("direct", "proxy", "direct-cli", "proxy-cli")
    ),
    rf"^direct\s+engine -?{NUMBER} / -?{NUMBER}\s+outbound {NUMBER} / {NUMBER}$",
    rf"^proxy\s+engine -?{NUMBER} / -?{NUMBER}\s+outbound {NUMBER} / {NUMBER}"
    rf"\s+absorbed {NUMBER} / {NUMBER}$",
)


def test_bench_websocket_measures_every_path_and_the_absorbed_hop(tmp_path: Path) -> None:
    """--runs 1 --breakdown-runs 1 prints the table and the breakdown, absorbed hop included."""
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "1", "--breakdown-runs", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    for row in ROWS:
        assert re.search(row, proc.stdout, re.MULTILINE), (row, proc.stdout)
