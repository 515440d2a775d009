"""The fault matrix's results: one :class:`CellResult` per test and cell, their JSON form, and
how two runs compare.

The pytest plugin and ``replayproxy matrix`` both build a :class:`MatrixReport`; its JSON
(``{"version": 1, "results": [...]}``) is what ``--report`` writes and a baseline is read
from. Results are kept in a stable order (test, then the cell's place in the selection the user
gave, then its id), so two runs of the same matrix write the same file, whatever order the cells
finished in. Rendering is in :mod:`.render`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from replayproxy._core.matrix import render
from replayproxy._core.matrix.cells import OUTCOMES
from replayproxy._errors import UsageError

__all__ = [
    "FAILED",
    "PASSED",
    "SKIPPED",
    "VERSION",
    "CellResult",
    "Comparison",
    "MatrixReport",
    "compare",
]

VERSION = 1
"""The version of the report's JSON form."""

PASSED = "\u2713"
FAILED = "\u2717"
SKIPPED = "\u2013"  # an en dash: a skipped cell


@dataclass(frozen=True, slots=True)
class CellResult:
    """How one test (a pytest node id without its ``[cell]``, or the CLI's command) did
    under one cell. ``passed`` is ``None`` when the cell was skipped (``failure`` says why)."""

    test: str
    cell: str
    spec: str
    set: str
    outcome: str
    passed: bool | None
    duration: float
    failure: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.test, self.cell

    @property
    def mark(self) -> str:
        """The table's mark: a check mark passed, a cross failed, a dash skipped."""
        return SKIPPED if self.passed is None else PASSED if self.passed else FAILED


_FIELDS = {f.name: f for f in fields(CellResult)}
_TYPES: dict[str, tuple[type, ...]] = {
    "test": (str,),
    "cell": (str,),
    "spec": (str,),
    "set": (str,),
    "outcome": (str,),
    "passed": (bool, type(None)),
    "duration": (int, float),
    "failure": (str,),
}


def _result(item: object, where: str) -> CellResult:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: expected an object")
    missing = [k for k, f in _FIELDS.items() if k not in item and k != "failure"]
    if missing:
        raise UsageError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(item) - set(_FIELDS))
    if unknown:
        raise UsageError(f"{where}: unknown field {', '.join(unknown)}")
    for key, value in item.items():
        ok = isinstance(value, _TYPES[key]) and not (key == "duration" and isinstance(value, bool))
        if not ok:
            raise UsageError(f"{where}: {key} has the wrong type ({type(value).__name__})")
    if item["outcome"] not in OUTCOMES:
        raise UsageError(
            f"{where}: unknown outcome {item['outcome']!r}; valid: {', '.join(OUTCOMES)}"
        )
    return CellResult(**item)


@dataclass(frozen=True, slots=True)
class MatrixReport:
    """Every result of one matrix run, in a stable order."""

    results: tuple[CellResult, ...] = ()
    order: tuple[str, ...] = field(default=(), compare=False)
    """The cell ids in the order the user selected them (the columns' order)."""

    @classmethod
    def of(cls, results: Iterable[CellResult], order: Sequence[str] = ()) -> MatrixReport:
        """The report of ``results`` (a later result for the same test and cell wins), sorted
        by test, then by the cell's place in ``order`` (the selection, as the user gave it),
        then by cell id."""
        rank = {cell: i for i, cell in enumerate(order)}
        kept = sorted(
            {r.key: r for r in results}.values(),
            key=lambda r: (r.test, rank.get(r.cell, len(rank)), r.cell),
        )
        return cls(tuple(kept), tuple(order))

    def to_json(self) -> str:
        """``{"version": 1, "results": [...]}``, in the report's order."""
        rows = [asdict(r) for r in self.results]
        return (
            json.dumps({"version": VERSION, "results": rows}, indent=2, ensure_ascii=False) + "\n"
        )

    @classmethod
    def from_json(cls, text: str, source: str = "") -> MatrixReport:
        """Read a report written by :meth:`to_json`; a one-line :class:`UsageError` naming
        ``source`` (a path) and what is wrong otherwise."""
        where = source or "fault matrix report"
        try:
            doc: Any = json.loads(text)
        except ValueError as e:
            raise UsageError(f"{where}: not a fault matrix report: invalid JSON ({e})") from None
        if not isinstance(doc, dict) or "results" not in doc:
            raise UsageError(f'{where}: not a fault matrix report (no "results")')
        if doc.get("version") != VERSION:
            raise UsageError(
                f"{where}: fault matrix report version {doc.get('version')!r}; "
                f"this replayproxy reads version {VERSION}"
            )
        if not isinstance(doc["results"], list):
            raise UsageError(f'{where}: "results" must be a list')
        read = (_result(r, f"{where}: result {i}") for i, r in enumerate(doc["results"]))
        # In the file's order (written sorted): the selection it was sorted by is not stored.
        return cls(tuple({r.key: r for r in read}.values()))

    def tests(self) -> list[str]:
        """The tests, in report order."""
        return list(dict.fromkeys(r.test for r in self.results))

    def cells(self) -> list[CellResult]:
        """One result per cell (the first test's): the columns, in the selection's order, then
        in report order."""
        seen: dict[str, CellResult] = {}
        for r in self.results:
            seen.setdefault(r.cell, r)
        rank = {cell: i for i, cell in enumerate(self.order)}
        return sorted(seen.values(), key=lambda r: rank.get(r.cell, len(rank)))

    def failures(self) -> list[str]:
        """``test [cell]: first failure line`` for every failed cell."""
        return [
            f"{r.test} [{r.cell}]: {r.failure}" if r.failure else f"{r.test} [{r.cell}]"
            for r in self.results
            if r.passed is False
        ]

    def to_markdown(self) -> str:
        """A table of cells by tests (passed, failed, skipped) and the failing cells."""
        return render.markdown(self)

    def table(self, width: int = 100) -> list[str]:
        """The terminal table: a column per cell, or per outcome class when the cells do not
        fit in ``width`` (then ``k/n`` passed), and a legend (:mod:`.render`)."""
        return render.table(self, width)


@dataclass(frozen=True, slots=True)
class Comparison:
    """What changed from a baseline run to this one."""

    regressions: tuple[CellResult, ...]
    """Passed in the baseline, failed now (the current results)."""
    fixes: tuple[CellResult, ...]
    """Failed in the baseline, passed now (the current results)."""

    def lines(self) -> list[str]:
        """One line per regression, then per fix; one line saying so when there are none."""
        out = [
            f"regression: {r.test} [{r.cell}]" + (f": {r.failure}" if r.failure else "")
            for r in self.regressions
        ]
        out += [f"fixed: {r.test} [{r.cell}]" for r in self.fixes]
        return out or ["no regressions and no fixes against the baseline"]


def compare(baseline: MatrixReport, current: MatrixReport) -> Comparison:
    """Cells (same test and cell id) that passed in ``baseline`` and fail in ``current``, and
    the other way round; skipped cells and cells in only one report are neither."""
    before = {r.key: r.passed for r in baseline.results}
    now = current.results
    return Comparison(
        tuple(r for r in now if before.get(r.key) is True and r.passed is False),
        tuple(r for r in now if before.get(r.key) is False and r.passed is True),
    )
