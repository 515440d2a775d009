"""The fault matrix in pytest: one test item per cell, each run on the test's cassette.

``@pytest.mark.replayproxy(matrix="cuts")`` (or a list of sets and specs), the ini key
``replayproxy_matrix`` or ``--replayproxy-matrix SET[,SET]`` (strongest) parametrize a test
with the cells of :func:`replayproxy._core.matrix.cells`: ``test_reader[cuts:reset:events=1]``,
after the test's own parameters (``test_reader[openai-cuts:reset:events=1]``). Every item of a
test shares the test's cassette (the name without the cell). When the record mode would record
it (a missing cassette in ``once``; ``new_episodes``, ``all``), an item ``[record]`` runs the
test first, as it is, and the cells then only replay (record mode ``none``: a fault is a
replay of the recording, and what a faulted client sends next must never be recorded).

In a cell's item, the faults are the test's plus the cell's, resolved on the cassette
(:func:`~replayproxy._core.matrix.resolve`); a cell that cannot apply to it is skipped with the
reason. Each item's :class:`~replayproxy._core.matrix.CellResult` rides on its teardown report
(``user_properties``), so a pytest-xdist controller gets every worker's results the same way
a plain run does (:mod:`.report` merges them).

docs/guides/matrix.md documents it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from replayproxy._core.matrix import Cell, CellResult, cells, resolve
from replayproxy._core.replay.option_def import Kind, OptionDef
from replayproxy._core.replay.options import OPTIONS
from replayproxy._core.replay.record_mode import parse_record_mode, policy_for
from replayproxy._errors import ReplayProxyError
from replayproxy._harness.cassettes import existing_cassette
from replayproxy.pytest_plugin._naming import cassette_path

__all__ = [
    "MATRIX_OPTIONS",
    "PROPERTY",
    "RECORD",
    "cell_of",
    "checked_option",
    "checked_selection",
    "parametrize",
    "prepare",
    "record_phase",
    "speed_given",
]

MATRIX_OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "matrix",
        Kind.TEXT,
        "",
        "Run every replayproxy test once per cell of these fault-matrix sets (splits, cuts, "
        "stalls, errors, events, all) or fault specs, comma-separated; see docs/guides/matrix.md.",
        metavar="SET[,SET]",
    ),
    OptionDef(
        "matrix_report",
        Kind.TEXT,
        "",
        "Write the fault matrix's results to PATH as JSON, and as Markdown beside it "
        "(PATH with .md).",
        metavar="PATH",
    ),
    OptionDef(
        "matrix_baseline",
        Kind.TEXT,
        "",
        "Compare the fault matrix with a stored --replayproxy-matrix-report JSON file: list the "
        "cells that went from pass to fail (regressions) and from fail to pass.",
        metavar="PATH",
    ),
)

PARAM = "_replayproxy_matrix_cell"
"""The parameter that carries an item's cell (never an argument of the test function)."""

RECORD = "record"
"""The parameter (and id) of the item that records a missing cassette before the cells."""

PROPERTY = "replayproxy_matrix"
"""The ``user_properties`` name of a cell item's result on its teardown report."""

_MARKER_WORDS = "@pytest.mark.replayproxy keyword 'matrix'"
_PHASES: pytest.StashKey[list[pytest.TestReport]] = pytest.StashKey()


def checked_selection(value: Any, where: str) -> tuple[Cell, ...]:
    """The cells ``value`` names (:func:`~replayproxy._core.matrix.cells`: in order, each once);
    a bad selection is a one-line ``pytest.UsageError`` naming ``where`` it was set."""
    if value is None or value == "" or value == []:
        return ()
    if not isinstance(value, (str, Sequence)):
        raise pytest.UsageError(
            f"{where}: a set name, a fault spec or a list of them, got {value!r}"
        )
    try:
        return cells(value)
    except ReplayProxyError as e:
        raise pytest.UsageError(f"{where}: {e}") from None


def parametrize(
    metafunc: pytest.Metafunc,
    selection: tuple[Any, bool],
    levels: list[dict[str, Any]],
    settings: Callable[[], dict[str, Any]],
    cassette_dir: Path,
) -> None:
    """Give the test one item per cell, ``[record]`` first when its cassette will record.

    ``selection``: the plugin option's value and whether the command line set it (it then
    wins over the markers; the ini key loses to them); ``levels``: the markers' keywords, the
    farthest first; ``settings``: the test's merged options (record mode, cassette);
    ``cassette_dir``: the default cassette folder (the ``replayproxy_cassette_dir`` fixture's
    default: an override of that fixture is not seen at collection).
    """
    value, from_command_line = selection
    where = _option_words(from_command_line)
    if not from_command_line:
        marked = [level["matrix"] for level in levels if "matrix" in level]
        if marked:
            value, where = marked[-1], _MARKER_WORDS
    try:
        chosen = checked_selection(value, where)
    except pytest.UsageError as e:
        pytest.fail(f"replayproxy: {e}", pytrace=False)
    if not chosen:
        return
    try:
        values = settings()
        mode = parse_record_mode(values.get("record_mode", "none"))
    except ReplayProxyError as e:
        pytest.fail(f"replayproxy: {e}", pytrace=False)
    params: list[Cell | str] = list(chosen)
    ids = [cell.id for cell in chosen]
    # The test's own parametrization ran first (this hook is trylast): one cassette per callspec.
    own_ids = [c.id for c in getattr(metafunc, "_calls", [])] or [""]
    name = metafunc.definition.originalname
    paths = [
        cassette_path(
            Path(str(metafunc.definition.path)),
            metafunc.cls.__name__ if metafunc.cls is not None else None,
            _base_name(name, own),
            values.get("cassette"),
            cassette_dir,
        )
        for own in own_ids
    ]
    if any(policy_for(mode, path.exists()).records for path in paths):
        params.insert(0, RECORD)
        ids.insert(0, RECORD)
    metafunc.fixturenames.append(PARAM)  # so that pytest takes it as a parameter name
    metafunc.parametrize(PARAM, params, ids=ids)


def _base_name(name: str, own_id: str) -> str:
    return f"{name}[{own_id}]" if own_id else name


def cell_of(item: pytest.Item, replayproxy_config: dict[str, Any]) -> tuple[Cell | str | None, str]:
    """``(the item's cell, RECORD or None; the test's name without it)``: the name its
    default cassette is named after, shared by every item of the matrix."""
    if "matrix" in replayproxy_config:
        raise pytest.UsageError(
            "replayproxy_config key 'matrix': the matrix parametrizes tests at collection, "
            "before fixtures run; use the marker keyword matrix= or --replayproxy-matrix"
        )
    callspec = getattr(item, "callspec", None)
    if callspec is None or PARAM not in callspec.params:
        return None, item.name
    value = callspec.params[PARAM]
    assert isinstance(value, (Cell, str))
    mine = value if isinstance(value, str) else value.id
    full = callspec.id
    if full == mine:
        own = ""
    elif full.endswith("-" + mine):
        own = full[: -len(mine) - 1]
    else:  # pytest changed the id (it should not: our ids are unique); keep the whole name
        return value, item.name
    return value, _base_name(getattr(item, "originalname", item.name), own)


def speed_given(setting: tuple[Any, bool], levels: list[dict[str, Any]]) -> bool:
    """Whether the test sets a replay speed: on the command line (``setting``: the option's
    value and whether the command line set it), in a marker or ``replayproxy_config``
    (``levels``), or in the ini file (an ini value other than the default)."""
    value, from_command_line = setting
    default = next(o for o in OPTIONS if o.name == "speed").default
    return (
        from_command_line or any("speed" in level for level in levels) or (float(value) != default)
    )


def prepare(
    cell: Cell | str | None, path: Path, values: dict[str, Any], *, speed_given: bool
) -> dict[str, Any]:
    """The options of a cell's item: the test's faults plus the cell's, resolved on the
    cassette at ``path``, replay only, at speed 0 unless the test gives a speed (the cells are
    sized for it, as ``replayproxy matrix``'s default). Skips the test when the cell cannot
    apply, or when its cassette is still to be recorded by the ``[record]`` item (which ran
    elsewhere or not yet: another xdist worker, a shuffled order, ``-k``); in record mode
    ``none`` a missing cassette leaves the faults as they are, so every request fails as
    usual (a miss)."""
    if not isinstance(cell, Cell):
        return values
    mode = parse_record_mode(values.get("record_mode", "none"))
    values = {**values, "record_mode": "none"}
    if not speed_given:
        values["speed"] = 0
    cassette = existing_cassette(path)
    if cassette is None:
        if policy_for(mode, False).records:
            pytest.skip(
                f"replayproxy: cell {cell.id}: {path.name} is not recorded yet; its [record] "
                "item records it (run it before the cells: without -n or a shuffled order)"
            )
        return values
    resolved = resolve(cell, cassette)
    if resolved.skipped is not None:
        pytest.skip(
            f"replayproxy: cell {cell.id} does not apply to {path.name}: {resolved.skipped}"
        )
    faults = values.get("faults") or []
    values["faults"] = [*([faults] if isinstance(faults, str) else faults), *resolved.faults]
    return values


def record_phase(item: pytest.Item, report: pytest.TestReport) -> None:
    """Keep each phase's report of a cell's item; on teardown, put the item's
    :class:`CellResult` on the report (``user_properties``, under :data:`PROPERTY`)."""
    callspec = getattr(item, "callspec", None)
    cell = callspec.params.get(PARAM) if callspec is not None else None
    if not isinstance(cell, Cell):
        return
    phases = item.stash.setdefault(_PHASES, [])
    phases.append(report)
    if report.when != "teardown":
        return
    passed, failure = _verdict(phases)
    _, name = cell_of(item, {})
    result = CellResult(
        test=item.nodeid[: len(item.nodeid) - len(item.name)] + name,
        cell=cell.id,
        spec=cell.spec,
        set=cell.set,
        outcome=cell.outcome,
        passed=passed,
        duration=sum(r.duration for r in phases),
        failure=failure,
    )
    report.user_properties = [*report.user_properties, (PROPERTY, asdict(result))]


def _verdict(phases: list[pytest.TestReport]) -> tuple[bool | None, str]:
    """``(passed, its first line)``: failed if a phase failed (an expected failure, xfail,
    too: the code did not survive the cell), skipped (``None``) if one was skipped."""
    for report in phases:
        if report.failed or (report.skipped and hasattr(report, "wasxfail")):
            return False, _first_line(report)
    for report in phases:
        if report.skipped:
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr or "")
            return None, reason.removeprefix("Skipped: ")
    return True, ""


def _first_line(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}".rstrip(": ")
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.removeprefix("Failed: ")  # pytest.fail(...)'s own prefix says nothing here


def checked_option(selection: tuple[Any, bool]) -> tuple[Cell, ...]:
    """The cells of ``--replayproxy-matrix`` (or ini ``replayproxy_matrix``); a bad one stops
    the session at once, before collection (a marker's is a collection error of its module)."""
    value, from_command_line = selection
    return checked_selection(value, _option_words(from_command_line))


def _option_words(from_command_line: bool) -> str:
    return "option --replayproxy-matrix" if from_command_line else "ini key replayproxy_matrix"
