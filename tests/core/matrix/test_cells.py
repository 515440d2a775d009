"""The fault matrix's cells (core/matrix/cells.py): set contents, outcome classes from the
registry, ids, and how a selection of sets and specs is parsed."""

from __future__ import annotations

import pytest

from replayproxy._core.faults import FAULTS, Outcome, outcome_of, parse
from replayproxy._core.matrix import OUTCOMES, SETS, Cell, cells, outcome_class
from replayproxy._core.matrix.cells import checkable, parts
from replayproxy._errors import FaultSpecError, UsageError

NAMED = [s for s in SETS if s != "all"]


def test_the_sets_and_all() -> None:
    """The five named sets exist, and ``all`` is their cells in order."""
    assert NAMED == ["splits", "stalls", "cuts", "errors", "events"]
    assert SETS["all"] == tuple(c for s in NAMED for c in SETS[s])


def test_every_outcome_class_is_the_registrys_but_for_the_short_stalls() -> None:
    """A cell's outcome is its fault's registry outcome; only the short stalls of ``stalls``
    override it (to ``same``), and every cell of a set is of the set's class."""
    for c in SETS["all"]:
        registry = outcome_class(outcome_of(parts(c.spec)[0].partition(":")[0]))
        if c.name.startswith("stall"):
            assert (registry, c.outcome) == ("hang", "same")
        else:
            assert c.outcome == registry, c
    classes = {s: {c.outcome for c in SETS[s]} for s in NAMED}
    assert classes == {
        "splits": {"same"},
        "stalls": {"same", "hang"},
        "cuts": {"incomplete"},
        "errors": {"provider-error"},
        "events": {"altered"},
    }
    assert {outcome_class(o) for o in Outcome} == set(OUTCOMES)


def test_cuts_are_every_incomplete_fault_at_four_positions() -> None:
    """``cuts``: each positioned fault of outcome incomplete at events=0, 1, middle and just
    before the terminal event (built from the registry, so a new such fault joins it)."""
    incomplete = [n for n, d in FAULTS.items() if d.outcome is Outcome.INCOMPLETE]
    assert len(incomplete) >= 3
    where = ["events=0", "events=1", "events=middle", "events=before-terminal"]
    assert [c.spec for c in SETS["cuts"]] == [f"{n}:{w}" for n in incomplete for w in where]


def test_the_other_sets_cover_their_faults() -> None:
    """splits: byte-by-byte and every ``at=`` mode, coalesce; stalls: every same-events timing
    fault besides split and coalesce, and both hang faults; events: every altered-events
    fault on a content event; errors: the in-band error and three statuses."""
    splits = [c.spec for c in SETS["splits"]]
    assert "split:bytes=1,gap=0.00002" in splits
    for mode in ("utf8", "midline", "crlf", "random"):
        assert any(f"at={mode}" in s for s in splits), mode
    covered = {name for c in SETS["all"] for name in c.name.split("+")}
    assert covered == set(FAULTS)  # every registered fault is in some cell
    assert {c.name for c in SETS["events"]} == {
        n for n, d in FAULTS.items() if d.outcome is Outcome.ALTERED_EVENTS
    }
    assert all(c.spec.endswith(":event=content") for c in SETS["events"])
    assert {c.outcome for c in SETS["stalls"] if c.name in ("hang", "linger")} == {"hang"}
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
