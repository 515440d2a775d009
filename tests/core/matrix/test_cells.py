"""The fault matrix's cells (core/matrix/cells.py): set contents, outcome classes from the
registry, ids, and how a selection of sets and specs is parsed."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

import pytest

from replayproxy._core.faults import FAULTS, FaultDef, Outcome, definitions, parse
from replayproxy._core.faults import spec as spec_mod
from replayproxy._core.matrix import OUTCOMES, SETS, Cell, cells, outcome_class
from replayproxy._core.matrix.cells import SET_NAMES, checkable, parts, set_of
from replayproxy._errors import FaultSpecError, UsageError

cells_mod = importlib.import_module("replayproxy._core.matrix.cells")  # not the function
NAMED = [s for s in SETS if s != "all"]


def test_the_sets_and_all() -> None:
    """The named sets are SET_NAMES, in order, and ``all`` is their cells in order."""
    assert list(SET_NAMES) == NAMED
    assert SETS["all"] == tuple(c for s in NAMED for c in SETS[s])


def test_each_set_is_the_cells_of_the_faults_of_its_outcome() -> None:
    """A set holds exactly the cells of the definitions whose set (by outcome, or ``splits``
    for a fault that only re-splits reads) it is, with each definition's cell outcome."""
    for name in NAMED:
        expected = {
            (spec, outcome_class(d.cell_outcome))
            for d in definitions()
            if set_of(d) == name
            for spec in d.cells
        }
        assert {(c.spec, c.outcome) for c in SETS[name]} == expected, name
    assert {set_of(d) for d in definitions()} == set(NAMED)  # no set is left empty


def test_within_a_set_the_cells_are_grouped_by_outcome_class() -> None:
    """A set lists its cells class by class, in the order of OUTCOMES (quick same-events cells
    before the hangs)."""
    for name in NAMED:
        ranks = [OUTCOMES.index(c.outcome) for c in SETS[name]]
        assert ranks == sorted(ranks), name
    assert {outcome_class(o) for o in Outcome} == set(OUTCOMES)


def test_every_cell_outcome_is_the_registrys_unless_the_definition_overrides_it() -> None:
    """A cell's outcome is its fault's registry outcome, unless its definition gives its cells
    another (``matrix_outcome``): then every cell of that fault has it."""
    for d in definitions():
        for c in (c for c in SETS["all"] if c.spec in d.cells):
            assert c.outcome == outcome_class(d.matrix_outcome or d.outcome), c


def test_every_fault_is_in_some_cell() -> None:
    """Every registered fault is applied by at least one cell of ``all``."""
    covered = {name for c in SETS["all"] for name in c.name.split("+")}
    assert covered == set(FAULTS)


def _new(outcome: Outcome, **kwargs: Any) -> FaultDef:
    return replace(FAULTS["reset"], name="new", outcome=outcome, example="new", **kwargs)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_new_fault_joins_the_set_of_its_outcome(
    outcome: Outcome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A definition added to the registry alone gets its default cells (here: positioned, at
    four positions), in the set of its outcome, at the end of its class."""
    new = _new(outcome, matrix=())
    monkeypatch.setattr(spec_mod, "FAULTS", {**FAULTS, "new": new})
    monkeypatch.setattr(cells_mod, "definitions", lambda: (*definitions(), new))
    built = cells_mod._build()
    joined = [c for c in built[set_of(new)] if c.name == "new"]
    where = ["0", "1", "middle", "before-terminal"]
    assert [c.spec for c in joined] == [f"new:events={w}" for w in where]
    assert {c.outcome for c in joined} == {outcome_class(outcome)}
    same_class = [c for c in built[set_of(new)] if c.outcome == outcome_class(outcome)]
    assert same_class[-len(joined) :] == joined
    assert built["all"] == tuple(c for s in NAMED for c in built[s])


def test_default_cells_follow_the_kind_of_fault() -> None:
    """Without ``matrix``: a one-event fault at a content event, a positioned one at four
    positions, any other its example; with it, exactly its cells."""
    event = replace(FAULTS["drop"], name="new", matrix=())
    assert event.cells == ("new:event=content",)
    positioned = replace(FAULTS["reset"], name="new", matrix=())
    assert positioned.cells[0] == "new:events=0" and len(positioned.cells) == 4
    other = replace(FAULTS["linger"], name="new", example="new", matrix=())
    assert other.cells == ("new",)
    assert replace(other, matrix=("new:x=1",)).cells == ("new:x=1",)


def test_the_declared_cells_cover_their_faults() -> None:
    """splits: byte-by-byte and every ``at=`` mode; errors: the in-band error and three
    statuses; every altered-events fault on a content event; the hang faults are hangs."""
    splits = [c.spec for c in SETS["splits"]]
    assert "split:bytes=1,gap=0.00002" in splits
    for mode in ("utf8", "midline", "crlf", "random"):
        assert any(f"at={mode}" in s for s in splits), mode
    assert {c.name for c in SETS["events"]} == {
        n for n, d in FAULTS.items() if d.outcome is Outcome.ALTERED_EVENTS
    }
    assert all(c.spec.endswith(":event=content") for c in SETS["events"])
    hangs = {n for n, d in FAULTS.items() if d.cell_outcome is Outcome.HANG}
    assert {c.outcome for c in SETS["stalls"] if c.name in hangs} == {"hang"}
    errors = [c.spec for c in SETS["errors"]]
    assert "status:code=overloaded" in errors and "status:code=500" in errors
    assert any(s.startswith("status:code=429,retry-after=") for s in errors)


def test_every_cell_spec_parses_with_its_symbols_replaced() -> None:
    """Each part of each cell is a valid fault spec once symbols have a concrete value."""
    for c in SETS["all"]:
        for part in parts(c.spec):
            assert parse(checkable(part)).name in FAULTS


def test_ids_are_set_and_spec_and_unique() -> None:
    """``Cell.id`` is ``set:spec`` and no two cells of ``all`` share one; ``name`` is the
    fault's (several joined by ``+``)."""
    ids = [c.id for c in SETS["all"]]
    assert len(set(ids)) == len(ids)
    c = Cell("cuts", "reset:events=1", "incomplete")
    assert (c.id, c.name) == ("cuts:reset:events=1", "reset")
    assert Cell("stalls", "stall:for=1+keepalive:every=0.5", "same").name == "stall+keepalive"


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("cuts", [c.id for c in SETS["cuts"]]),
        ("cuts,splits", [c.id for c in SETS["cuts"] + SETS["splits"]]),
        (["cuts", "split:bytes=1"], [c.id for c in SETS["cuts"]] + ["spec:split:bytes=1"]),
        ("all", [c.id for c in SETS["all"]]),
        (["all", "cuts"], [c.id for c in SETS["all"]]),
        (["truncate:events=middle", "linger"], ["spec:truncate:events=middle", "spec:linger"]),
        ("cuts, errors", [c.id for c in SETS["cuts"] + SETS["errors"]]),
        ("coalesce,linger", ["spec:coalesce", "spec:linger"]),
    ],
)
def test_a_selection_is_sets_and_specs_in_order_without_duplicates(
    selection: str | list[str], expected: list[str]
) -> None:
    """Set names (comma-separated or a list) and specs, in order; a spec met twice (here by
    ``all`` then ``cuts``) is kept once, where it first came."""
    assert [c.id for c in cells(selection)] == expected


def test_a_spec_gets_the_registrys_outcome() -> None:
    """A spec given directly has set ``spec`` and its fault's outcome class."""
    assert cells("reset:events=3") == (Cell("spec", "reset:events=3", "incomplete"),)
    assert cells("status:code=overloaded")[0].outcome == "provider-error"
    assert cells("stall:for=0.01")[0].outcome == "hang"


@pytest.mark.parametrize(
    ("selection", "error", "words"),
    [
        ("cutz", UsageError, ["unknown fault matrix set 'cutz'", "cuts", "splits", "all"]),
        ("", UsageError, ["no fault matrix cells", "valid sets"]),
        ([], UsageError, ["no fault matrix cells"]),
        ("reset:events=x", FaultSpecError, ["events='x'", "valid sets: splits"]),
        ("explode:x=1", FaultSpecError, ["unknown fault 'explode'", "valid sets"]),
        ("truncate:events=content", FaultSpecError, ["events=middle", "event=content"]),
        ("cuts,cutz", UsageError, ["unknown fault matrix set 'cutz'"]),
    ],
)
def test_a_bad_selection_is_one_line_naming_the_sets(
    selection: str | list[str], error: type[Exception], words: list[str]
) -> None:
    """An unknown set or a bad spec is one line that says what is valid."""
    with pytest.raises(error) as info:
        cells(selection)
    text = str(info.value)
    assert "\n" not in text
    for word in words:
        assert word in text
