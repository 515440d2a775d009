"""A :class:`~replayproxy._core.matrix.report.MatrixReport` as Markdown and as a terminal table.

Markdown (the file beside a JSON report, a CI summary): one row per cell (its id and outcome
class), one column per test (a check mark: passed, a cross: failed, a dash: skipped), then the
failing cells with their first failure line and the skipped ones with their reason. The
terminal table: one row per test, one numbered column per cell with a legend below, or, when
the cells do not fit in the width, one column per outcome class holding ``k/n`` (cells
passed / cells run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replayproxy._core.matrix.cells import OUTCOMES

if TYPE_CHECKING:
    from replayproxy._core.matrix.report import CellResult, MatrixReport

__all__ = ["markdown", "table"]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: MatrixReport) -> str:
    """The report as Markdown: the matrix, the failing cells, the skipped cells."""
    tests = report.tests()
    if not tests:
        return "# Fault matrix\n\nNo results.\n"
    got = {r.key: r for r in report.results}
    lines = [
        "# Fault matrix",
        "",
        "| cell | outcome | " + " | ".join(f"`{_md(t)}`" for t in tests) + " |",
        "|---|---|" + "---|" * len(tests),
    ]
    for c in report.cells():
        marks = [got[(t, c.cell)].mark if (t, c.cell) in got else " " for t in tests]
        lines.append(f"| `{_md(c.cell)}` | {c.outcome} | " + " | ".join(marks) + " |")
    passed = sum(r.passed is True for r in report.results)
    failed = report.failures()
    skipped = [r for r in report.results if r.passed is None]
    lines += ["", f"{passed} passed, {len(failed)} failed, {len(skipped)} skipped."]
    if failed:
        lines += ["", "## Failing cells", ""] + [f"- {_md(f)}" for f in failed]
    if skipped:
        lines += ["", "## Skipped cells", ""]
        lines += [f"- {_md(r.test)} [{_md(r.cell)}]: {_md(r.failure)}" for r in skipped]
    return "\n".join(lines) + "\n"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _by_cell(report: MatrixReport, width: int) -> list[str] | None:
    tests, columns = report.tests(), report.cells()
    got = {r.key: r for r in report.results}
    labels = [str(i + 1) for i in range(len(columns))]
    cell_width = sum(len(label) + 1 for label in labels)
    name_width = min(max(len(t) for t in tests), 60)
    if name_width + 1 + cell_width > width and name_width > 20:
        name_width = max(20, width - 1 - cell_width)
    if name_width + 1 + cell_width > width:
        return None
    head = " ".join(labels)
    out = [f"{'test':<{name_width}} {head}"]
    for t in tests:
        marks = [
            (got[(t, c.cell)].mark if (t, c.cell) in got else " ").rjust(len(label))
            for c, label in zip(columns, labels, strict=True)
        ]
        out.append(f"{_fit(t, name_width):<{name_width}} {' '.join(marks)}".rstrip())
    out += [
        _fit(f"  {label:>{len(labels[-1])}} {c.cell} ({c.outcome})", width)
        for c, label in zip(columns, labels, strict=True)
    ]
    return out


def _by_outcome(report: MatrixReport, width: int) -> list[str]:
    tests = report.tests()
    classes = [o for o in OUTCOMES if any(r.outcome == o for r in report.results)]
    widths = [max(len(o), 7) for o in classes]
    name_width = max(10, min(max(len(t) for t in tests), width - sum(w + 2 for w in widths)))
    head = "".join(f"  {o:>{w}}" for o, w in zip(classes, widths, strict=True))
    out = [f"{'test':<{name_width}}{head}"]
    for t in tests:
        row = f"{_fit(t, name_width):<{name_width}}"
        for o, w in zip(classes, widths, strict=True):
            ran: list[CellResult] = [
                r for r in report.results if r.test == t and r.outcome == o and r.passed is not None
            ]
            text = f"{sum(r.passed is True for r in ran)}/{len(ran)}" if ran else "\u2013"
            row += f"  {text:>{w}}"
        out.append(row)
    out.append("  k/n: cells passed / cells run, by outcome class (skipped cells not counted)")
    return out


def table(report: MatrixReport, width: int = 100) -> list[str]:
    """The terminal table of ``report`` in at most ``width`` columns (see the module doc)."""
    if not report.results:
        return ["no results"]
    return _by_cell(report, width) or _by_outcome(report, width)
