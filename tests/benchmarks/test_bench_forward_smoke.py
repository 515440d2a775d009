"""Smoke test of the forward benchmark: `bench_forward.py --quick` runs every section and every
row was measured without client errors. The figures are not asserted (they belong to the
benchmark, on a quiet machine)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_forward.py"
HEADERS = ("1. Forward replay vs mitmdump passthrough", "2. Keepalive starvation", "Targets")
ROW = r"^{n}\s+{shape}\s+{path}\s+\d"


def test_quick_forward_benchmark_measures_every_client_shape_and_keepalive(tmp_path: Path) -> None:
    """Both paths x the three client shapes x every stream count are measured with 0 errors, the
    keepalive probe ran in both modes, and every target has a verdict."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCH), "--quick"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # the benchmark's finally blocks stop its servers
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(f"bench_forward.py --quick did not finish in 120 s:\n{out}\n{err}")
    assert proc.returncode == 0, out + err
    assert "Traceback" not in out + err
    for header in HEADERS:
        assert header in out, header
    for n in (1, 5):
        for shape in ("raw", "httpx", "httpx-tls"):
            for path in (r"mitmdump passthrough \(floor\)", r"replayproxy replay \(forward\)"):
                pattern = ROW.format(n=n, shape=shape, path=path)
                line = re.search(pattern + r".*$", out, re.M)
                assert line, f"missing or unmeasured: {pattern}\n{out}"
                assert line.group(0).rstrip().endswith(" 0"), line.group(0)  # 0 client errors
    for mode in (r"mitmdump \(floor\)", "forward", "base URL"):
        assert re.search(rf"^{mode}\s+5\s+3\s+\d+\.\d\s+\d+\.\d\s+0\s*$", out, re.M), out
    verdicts = re.findall(r"\s(met|NOT met|NOT MEASURED)\s*$", out, re.M)
    assert len(verdicts) == 2 * 3 * 3 + 2 and "NOT MEASURED" not in verdicts, out
    assert list(tmp_path.iterdir()) == []
