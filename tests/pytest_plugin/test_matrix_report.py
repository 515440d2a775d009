"""The fault matrix's verdicts and report: a naive reader fails exactly the `incomplete` cells,
a correct one passes all; the summary, the JSON/Markdown report, the baseline comparison and a
pytest-xdist run that gives the same report (pytester projects against the simulator)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from replayproxy._core.matrix import cells
from replayproxy.testing import Simulator
from tests.pytest_plugin.matrix_project import results, run_matrix, write_readers
from tests.pytest_plugin.project import run

pytestmark = pytest.mark.slow

MATRIX = "splits,cuts"
CELLS = {cell.id: cell for cell in cells(MATRIX)}
NAIVE = "test_readers.py::test_naive_reader"
CORRECT = "test_readers.py::test_correct_reader"
OFFLINE = "http://127.0.0.1:9"  # the cells only replay: nothing may be contacted


def recorded_run(pytester: pytest.Pytester, confdir: Path) -> tuple[pytest.RunResult, Path]:
    """Record both readers' cassettes and run the matrix on them in one `once` run."""
    write_readers(pytester)
    with Simulator() as sim:
        result = run_matrix(
            pytester, "--replayproxy-record-mode=once", "--replayproxy-matrix-report=out/r.json",
            matrix=MATRIX, upstream=sim.url, confdir=confdir,
        )  # fmt: skip
        assert len(sim.served) == 2  # the [record] items; the cells replay
    return result, pytester.path / "out" / "r.json"


def of(found: list[dict[str, Any]], test: str) -> dict[str, dict[str, Any]]:
    return {r["cell"]: r for r in found if r["test"] == test}


def test_a_naive_reader_fails_exactly_the_incomplete_cells_and_a_correct_one_passes_all(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """The naive reader (a closed connection is the end) fails every `incomplete` cell that
    runs and passes every `splits` cell; the correct reader (no terminal event: raise) passes
    every cell; skipped cells are the same for both and say why."""
    result, report = recorded_run(pytester, confdir)
    found = results(report)
    naive, correct = of(found, NAIVE), of(found, CORRECT)
    assert set(naive) == set(correct) == set(CELLS)
    skipped = {c for c, r in naive.items() if r["passed"] is None}
    assert skipped == {c for c, r in correct.items() if r["passed"] is None}
    assert all(naive[c]["failure"] for c in skipped)
    incomplete = {c for c, cell in CELLS.items() if cell.outcome == "incomplete"} - skipped
    same = {c for c, cell in CELLS.items() if cell.set == "splits"}
    assert len(incomplete) >= 8 and not same & skipped
    assert {c for c, r in naive.items() if r["passed"] is False} == incomplete
    assert {c for c, r in naive.items() if r["passed"] is True} == same
    assert {c for c, r in correct.items() if r["passed"] is True} == set(CELLS) - skipped
    assert {naive[c]["failure"] for c in incomplete} == {"DID NOT RAISE IncompleteStream"}
    result.assert_outcomes(passed=2 + 2 * len(same) + len(incomplete), failed=len(incomplete),
                           skipped=2 * len(skipped))  # fmt: skip


def test_the_summary_and_the_report_list_each_test_and_cell(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """The terminal summary has the matrix table (a row per test) and each failing cell with
    its first failure line; the JSON has one result per test and cell (no [record]); the
    Markdown beside it names every test and every cell."""
    result, report = recorded_run(pytester, confdir)
    out = result.stdout.str()
    section = out[out.index("replayproxy fault matrix") :]
    table = section[: section.index("failing cells")]
    failing = [r for r in results(report) if r["passed"] is False]
    # A row per test (names cut to the terminal's width), a mark per cell.
    rows = [line for line in table.splitlines() if line.startswith("test_readers.py::test_")]
    assert [row[len("test_readers.py::test_")] for row in rows] == ["c", "n"]
    assert [row.count("\u2717") for row in rows] == [0, len(failing)]
    assert all(row.count("\u2713") + row.count("\u2717") + row.count("\u2013") == len(CELLS)
               for row in rows)  # fmt: skip
    for r in failing:
        assert f"  {r['test']} [{r['cell']}]: {r['failure']}\n" in section
    assert f"failing cells ({len(failing)}):" in section
    found = results(report, durations=True)
    assert sorted((r["test"], r["cell"]) for r in found) == sorted(
        (t, c) for t in (NAIVE, CORRECT) for c in CELLS
    )
    assert all(r["duration"] > 0 for r in found)
    assert all(r["spec"] == CELLS[r["cell"]].spec and r["set"] == CELLS[r["cell"]].set
               and r["outcome"] == CELLS[r["cell"]].outcome for r in found)  # fmt: skip
    markdown = report.with_suffix(".md").read_text(encoding="utf-8")
    assert f"`{NAIVE}`" in markdown and f"`{CORRECT}`" in markdown
    for cell in CELLS:
        assert f"`{cell}`" in markdown
    assert f"matrix report written to {report} and {report.with_suffix('.md')}" in out


def test_a_baseline_names_a_planted_regression(pytester: pytest.Pytester, confdir: Path) -> None:
    """Against the stored report, the correct reader turned naive (RP_BROKEN=1) shows each of
    its incomplete cells as a regression (pass -> fail), and nothing else changes; the
    session fails (the cells fail as tests)."""
    _, report = recorded_run(pytester, confdir)
    baseline = pytester.path / "baseline.json"
    report.rename(baseline)
    result = run_matrix(
        pytester, f"--replayproxy-matrix-baseline={baseline}",
        matrix=MATRIX, upstream=OFFLINE, confdir=confdir, env={"RP_BROKEN": "1"},
    )  # fmt: skip
    before = of(results(baseline), CORRECT)
    planted = sorted(
        (c for c, r in before.items() if r["passed"] and CELLS[c].outcome == "incomplete"),
        key=list(CELLS).index,
    )
    out = result.stdout.str()
    assert f"compared with {baseline}: {len(planted)} regressions, 0 fixes" in out
    lines = re.findall(r"^  regression: (\S+) \[(\S+)\]: (.*)$", out, re.M)
    assert [(t, c) for t, c, _ in lines] == [(CORRECT, c) for c in planted]
    assert {why for _, _, why in lines} == {"DID NOT RAISE IncompleteStream"}
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_same_project_under_xdist_gives_the_same_report(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """With `-n 2` the items run on both workers, each on one server of its own (one URL per
    worker process, the cassette switched per item); the controller's report has the same
    results as a plain run's, durations aside."""
    recorded_run(pytester, confdir)
    pytester.makeconftest(
        """
        import os

        import pytest

        @pytest.fixture(autouse=True)
        def log_server(replayproxy):
            yield
            with open(os.environ["RP_SERVERS"], "a") as f:
                f.write(f"{os.getpid()} {replayproxy.url}\\n")
        """
    )
    servers = pytester.path / "servers.txt"
    env = {"RP_SERVERS": str(servers)}
    plain = run_matrix(pytester, "--replayproxy-matrix-report=plain.json", matrix=MATRIX,
                       upstream=OFFLINE, confdir=confdir, env=env)  # fmt: skip
    servers.unlink()
    xdist = run_matrix(pytester, "-n", "2", "--replayproxy-matrix-report=xdist.json",
                       matrix=MATRIX, upstream=OFFLINE, confdir=confdir, env=env)  # fmt: skip
    assert xdist.parseoutcomes() == plain.parseoutcomes()
    assert results(pytester.path / "xdist.json") == results(pytester.path / "plain.json")
    by_process: dict[str, set[str]] = {}
    for line in servers.read_text().splitlines():
        pid, url = line.split()
        by_process.setdefault(pid, set()).add(url)
    assert len(by_process) == 2, by_process  # both workers ran items
    assert all(len(urls) == 1 for urls in by_process.values()), by_process
    assert "replayproxy fault matrix" in xdist.stdout.str()


def test_through_the_proxy_the_naive_reader_fails_exactly_the_incomplete_cells(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """In proxy mode (mitmproxy between the client and the replay) the cells mean the same:
    recorded through the proxy, the naive reader fails exactly the `incomplete` cells of
    `cuts`, the correct one passes all (skips aside)."""
    write_readers(pytester)
    with Simulator() as sim:
        result = run_matrix(
            pytester, "--replayproxy-record-mode=once", "--replayproxy-matrix-report=r.json",
            matrix="cuts", mode="proxy", upstream=sim.url, confdir=confdir,
        )  # fmt: skip
        assert len(sim.served) == 2
    found = results(pytester.path / "r.json")
    ran = {r["cell"] for r in found if r["passed"] is not None}
    assert len(ran) >= 8, found
    assert {c for c, r in of(found, NAIVE).items() if r["passed"] is False} == ran
    assert {c for c, r in of(found, CORRECT).items() if r["passed"] is True} == ran
    result.assert_outcomes(passed=2 + len(ran), failed=len(ran), skipped=2 * (12 - len(ran)))


def test_bad_report_and_baseline_paths_stop_the_session_at_once(
    pytester: pytest.Pytester,
) -> None:
    """A missing or malformed baseline, or a report path ending in .md, is a usage error in
    one line naming the option, before any test runs."""
    write_readers(pytester)
    missing = run(pytester, "--replayproxy-matrix-baseline=nope.json", upstream=OFFLINE)
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*--replayproxy-matrix-baseline nope.json: cannot read it*"])
    (pytester.path / "bad.json").write_text('{"results": 3}')
    bad = run(pytester, "--replayproxy-matrix-baseline=bad.json", upstream=OFFLINE)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--replayproxy-matrix-baseline bad.json: *bad.json*"])
    md = run(pytester, "--replayproxy-matrix-report=r.md", upstream=OFFLINE)
    assert md.ret == pytest.ExitCode.USAGE_ERROR
    md.stderr.fnmatch_lines(["*--replayproxy-matrix-report r.md: name the JSON file*"])
