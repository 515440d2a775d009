"""The fault matrix's results at the end of a session: the summary, the report, the baseline.

Every cell item's :class:`~replayproxy._core.matrix.CellResult` arrives on its teardown report
(:mod:`.matrix`), in ``pytest_runtest_logreport``: in a plain run from this process, under
pytest-xdist from every worker on the controller, so the controller's summary and report hold
them all. :meth:`~replayproxy._core.matrix.MatrixReport.of` orders them (by test, then by the
cell's place in ``--replayproxy-matrix`` as given, then in the sets: a marker's cells), so a run
under ``-n`` gives the same report as a plain one.

- the terminal summary: :meth:`~replayproxy._core.matrix.MatrixReport.table`, then the failing
  cells with their first failure line;
- ``--replayproxy-matrix-report PATH``: the report as JSON at PATH and Markdown beside it;
- ``--replayproxy-matrix-baseline PATH``: the cells that went from pass to fail (regressions)
  and from fail to pass since the stored report. Regressions are failing tests already, so
  they make the session fail as any failure does; the comparison adds no exit status of its
  own (a cell that is skipped or missing now is neither).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from replayproxy._core.matrix import SETS, CellResult, MatrixReport, compare
from replayproxy._errors import ReplayProxyError
from replayproxy.pytest_plugin._matrix import PROPERTY

__all__ = ["MatrixRun", "configure"]

PLUGIN_NAME = "replayproxy-matrix"


@dataclass(eq=False)  # a plugin: pluggy keeps plugins in sets, by identity
class MatrixRun:
    """A session's matrix results, registered as a plugin on the controller (or the only
    process), and where the report goes."""

    report_path: Path | None = None
    baseline: MatrixReport | None = None
    baseline_path: Path | None = None
    results: list[CellResult] = field(default_factory=list)
    written: bool = False
    order: tuple[str, ...] = ()
    """The cell ids in report order: the option's selection as given, then every set's
    cells (a marker's selection is not known here: under xdist only the workers collect)."""

    def report(self) -> MatrixReport:
        """The results so far (a rerun's result replaces its cell's earlier one)."""
        return MatrixReport.of(self.results, self.order)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the cell result a (teardown) report carries."""
        for name, value in report.user_properties:
            if name == PROPERTY and isinstance(value, dict):
                self.results.append(CellResult(**value))

    @pytest.hookimpl(tryfirst=True)  # before the terminal summary, which says it was written
    def pytest_sessionfinish(self) -> None:
        """Write the report (JSON, and Markdown beside it) if asked for."""
        if self.report_path is None or not self.results:
            return
        report = self.report()
        self.report_path.parent.mkdir(parents=True, exist_ok=True)
        self.report_path.write_text(report.to_json(), encoding="utf-8")
        self.report_path.with_suffix(".md").write_text(report.to_markdown(), encoding="utf-8")
        self.written = True

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        """The matrix section of the terminal summary (when the session ran matrix items)."""
        if not self.results:
            return
        write = terminalreporter.write_line
        report = self.report()
        terminalreporter.write_sep("=", "replayproxy fault matrix")
        for line in report.table(width=config.get_terminal_writer().fullwidth):
            write(line)
        failures = report.failures()
        if failures:
            write("")
            write(f"failing cells ({len(failures)}):")
            for line in failures:
                write(f"  {line}")
        if self.baseline is not None:
            comparison = compare(self.baseline, report)
            write("")
            write(
                f"compared with {self.baseline_path}: {len(comparison.regressions)} "
                f"regressions, {len(comparison.fixes)} fixes"
            )
            for line in comparison.lines():
                write(f"  {line}")
        if self.written and self.report_path is not None:
            write("")
            md = self.report_path.with_suffix(".md")
            write(f"replayproxy: matrix report written to {self.report_path} and {md}")


def configure(
    config: pytest.Config, report_path: str, baseline_path: str, order: Sequence[str] = ()
) -> None:
    """Check the report and baseline paths at once (a bad one is a usage error before any
    test runs) and register the session's :class:`MatrixRun`, whose columns follow ``order``
    (the option's cell ids); pytest-xdist workers gather nothing (the controller does)."""
    if hasattr(config, "workerinput"):
        return
    base = Path(config.invocation_params.dir)
    run = MatrixRun(order=tuple(dict.fromkeys([*order, *(c.id for c in SETS["all"])])))
    if report_path:
        run.report_path = base / report_path
        if run.report_path.suffix == ".md":
            raise pytest.UsageError(
                f"--replayproxy-matrix-report {report_path}: name the JSON file (the Markdown "
                "is written beside it, with .md)"
            )
    if baseline_path:
        run.baseline_path = base / baseline_path
        try:
            text = run.baseline_path.read_text(encoding="utf-8")
            run.baseline = MatrixReport.from_json(text, source=str(run.baseline_path))
        except OSError as e:
            raise pytest.UsageError(
                f"--replayproxy-matrix-baseline {baseline_path}: cannot read it ({e.strerror})"
            ) from None
        except ReplayProxyError as e:
            raise pytest.UsageError(f"--replayproxy-matrix-baseline {baseline_path}: {e}") from None
    config.pluginmanager.register(run, PLUGIN_NAME)
