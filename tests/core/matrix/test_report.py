"""The fault matrix report (core/matrix/report.py, render.py): JSON round trip and its errors,
the stable order, Markdown and terminal tables, failures and the comparison of two runs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.matrix import (
    OUTCOMES,
    SETS,
    Cell,
    CellResult,
    MatrixReport,
    cells,
    compare,
)
from replayproxy._errors import UsageError

CELLS = SETS["all"]
SAME, CUT, ERROR, LATE_CUT = cells(
    ["split:bytes=1", "reset:events=1", "status:code=500", "truncate:events=1"]
)
"""Cells picked by what they are (a same-events one, two incomplete ones, a provider error)."""


def result(test: str, c: Cell, passed: bool | None, failure: str = "") -> CellResult:
    return CellResult(test, c.id, c.spec, c.set, c.outcome, passed, 0.25, failure)


_text = st.text(st.characters(codec="utf-8"), max_size=30)
results = st.builds(
    CellResult,
    test=_text,
    cell=st.one_of(st.sampled_from([c.id for c in CELLS]), _text),
    spec=_text,
    set=_text,
    outcome=st.sampled_from(OUTCOMES),
    passed=st.sampled_from([True, False, None]),
    duration=st.floats(min_value=0, max_value=1e6, allow_nan=False),
    failure=_text,
)


@given(st.lists(results, max_size=20))
def test_json_round_trips(rs: list[CellResult]) -> None:
    """Any report reads back equal from its JSON, and writing it again gives the same text."""
    report = MatrixReport.of(rs)
    text = report.to_json()
    back = MatrixReport.from_json(text, "r.json")
    assert back == report
    assert back.to_json() == text
    assert json.loads(text)["version"] == 1


def test_the_order_is_stable_whatever_order_results_came_in() -> None:
    """Results are sorted by test, then by the cell's place in the selection as the user gave
    it (not the sets' order), then by id: two runs whose cells finished in other orders
    (xdist) write the same file."""
    order = [ERROR.id, SAME.id]
    rs = [
        result("t::b", CUT, True),
        result("t::a", SAME, False, "boom"),
        result("t::a", ERROR, True),
    ]
    one, two = MatrixReport.of(rs, order), MatrixReport.of(reversed(rs), order)
    assert one.to_json() == two.to_json()
    assert [(r.test, r.cell) for r in one.results] == [
        ("t::a", ERROR.id), ("t::a", SAME.id), ("t::b", CUT.id),
    ]  # fmt: skip
    assert [c.cell for c in one.cells()] == [ERROR.id, SAME.id, CUT.id]


def test_a_report_read_back_keeps_the_order_it_was_written_in() -> None:
    """from_json keeps the file's order: a report sorted by a selection reads back the same."""
    rs = [result("t::a", SAME, True), result("t::a", ERROR, True), result("t::b", SAME, None)]
    report = MatrixReport.of(rs, [ERROR.id, SAME.id])
    back = MatrixReport.from_json(report.to_json())
    assert back.results == report.results
    assert [c.cell for c in back.cells()] == [ERROR.id, SAME.id]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", ["r.json: not a fault matrix report: invalid JSON"]),
        ("[]", ['r.json: not a fault matrix report (no "results")']),
        ('{"version": 2, "results": []}', ["version 2", "reads version 1"]),
        ('{"version": 1, "results": {}}', ['"results" must be a list']),
        ('{"version": 1, "results": [1]}', ["result 0: expected an object"]),
        ('{"version": 1, "results": [{"test": "t"}]}', ["result 0: missing cell, spec"]),
    ],
)
def test_a_bad_report_is_one_line_naming_the_file(text: str, words: list[str]) -> None:
    """Invalid JSON, another version, a wrong shape: one line naming the file and the fault."""
    with pytest.raises(UsageError) as info:
        MatrixReport.from_json(text, "r.json")
    assert "\n" not in str(info.value)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"passed": "yes"}, ["passed has the wrong type (str)"]),
        ({"duration": True}, ["duration has the wrong type (bool)"]),
        ({"outcome": "boom"}, ["unknown outcome 'boom'", "same, incomplete"]),
        ({"extra": 1}, ["unknown field extra"]),
    ],
)
def test_a_bad_result_names_its_field(change: dict[str, object], words: list[str]) -> None:
    """A result with a wrong field type, outcome or an unknown field is refused, saying which."""
    doc = json.loads(MatrixReport.of([result("t", SAME, True)]).to_json())
    doc["results"][0].update(change)
    with pytest.raises(UsageError) as info:
        MatrixReport.from_json(json.dumps(doc), "r.json")
    for word in words:
        assert word in str(info.value)


def _report() -> MatrixReport:
    return MatrixReport.of(
        [
            result("tests/test_a.py::test_stream", CUT, True),
            result("tests/test_a.py::test_stream", LATE_CUT, False, "AssertionError: no [DONE]"),
            result("tests/test_a.py::test_stream", SAME, None, "no HTTP event stream"),
            result("tests/test_b.py::test_other", CUT, True),
        ],
        [SAME.id, CUT.id, LATE_CUT.id],
    )


def test_failures_name_the_test_cell_and_first_line() -> None:
    """One line per failed cell; skipped and passed cells are not failures."""
    assert _report().failures() == [
        f"tests/test_a.py::test_stream [{LATE_CUT.id}]: AssertionError: no [DONE]"
    ]


def test_markdown_has_the_matrix_the_failures_and_the_skips() -> None:
    """A row per cell with its outcome and a mark per test, the counts, the failing cells
    with their first line and the skipped ones with their reason."""
    md = _report().to_markdown()
    lines = md.splitlines()
    assert (
        "| cell | outcome | `tests/test_a.py::test_stream` | `tests/test_b.py::test_other` |"
        in lines
    )
    assert f"| `{SAME.id}` | same | \u2013 |   |" in lines
    assert f"| `{CUT.id}` | incomplete | \u2713 | \u2713 |" in lines
    assert f"| `{LATE_CUT.id}` | incomplete | \u2717 |   |" in lines
    assert "2 passed, 1 failed, 1 skipped." in lines
    assert f"- tests/test_a.py::test_stream [{LATE_CUT.id}]: AssertionError: no [DONE]" in lines
    assert f"- tests/test_a.py::test_stream [{SAME.id}]: no HTTP event stream" in lines
    assert "| a \\| b |" in MatrixReport.of([result("a | b", SAME, True)]).to_markdown().replace(
        "`", ""
    )


def test_the_table_has_a_column_per_cell_when_they_fit() -> None:
    """Wide enough: a numbered column per cell, a row per test, and a legend of the cells."""
    lines = _report().table(100)
    assert lines[0].split() == ["test", "1", "2", "3"]
    assert lines[1].split() == ["tests/test_a.py::test_stream", "\u2013", "\u2713", "\u2717"]
    assert lines[2].split() == ["tests/test_b.py::test_other", "\u2713"]
    assert lines[3:] == [
        f"  1 {SAME.id} (same)",
        f"  2 {CUT.id} (incomplete)",
        f"  3 {LATE_CUT.id} (incomplete)",
    ]
    assert all(len(line) <= 100 for line in lines)


def test_the_table_falls_back_to_outcome_classes_when_the_cells_do_not_fit() -> None:
    """With every cell of ``all``, 100 columns are too few: one column per outcome class with
    cells passed / cells run (skips not counted)."""
    rs = [result("t::x", c, i % 4 != 1 if i % 5 else None) for i, c in enumerate(CELLS)]
    lines = MatrixReport.of(rs).table(100)
    assert lines[0].split() == ["test", *OUTCOMES]
    row = dict(zip(OUTCOMES, lines[1].split()[1:], strict=True))
    for o in OUTCOMES:
        ran = [r for r in rs if r.outcome == o and r.passed is not None]
        assert row[o] == f"{sum(bool(r.passed) for r in ran)}/{len(ran)}"
    assert all(len(line) <= 100 for line in lines)
    assert MatrixReport().table() == ["no results"]


def test_compare_finds_regressions_and_fixes() -> None:
    """Passed then failed is a regression, failed then passed a fix; skips, unchanged cells
    and cells in one report only are neither."""
    base = _report()
    now = MatrixReport.of(
        [
            replace(base.results[0], passed=True),  # skipped -> passed: neither
            result("tests/test_a.py::test_stream", CUT, False, "ReadError"),  # regression
            result("tests/test_a.py::test_stream", LATE_CUT, True),  # fix
            result("tests/test_c.py::test_new", CUT, False, "new"),  # only now: neither
        ]
    )
    cmp = compare(base, now)
    assert [(r.test, r.cell) for r in cmp.regressions] == [("tests/test_a.py::test_stream", CUT.id)]
    assert [(r.test, r.cell) for r in cmp.fixes] == [("tests/test_a.py::test_stream", LATE_CUT.id)]
    assert cmp.lines() == [
        f"regression: tests/test_a.py::test_stream [{CUT.id}]: ReadError",
        f"fixed: tests/test_a.py::test_stream [{LATE_CUT.id}]",
    ]
    assert compare(base, base).lines() == ["no regressions and no fixes against the baseline"]
