"""The cells of the fault matrix: named sets of fault specs, each with the outcome a client meets.

A :class:`Cell` is one fault spec (or several joined by ``+``, applied together) from a set,
with its outcome class: one of :data:`OUTCOMES`, mapped from the fault registry's
:class:`~replayproxy._core.faults.Outcome` (a definition may give its cells another:
``FaultDef.matrix_outcome``, e.g. a ``stall`` far shorter than any client timeout is "same").
Specs may hold symbolic values that :func:`replayproxy._core.matrix.resolve` replaces per
interaction (:data:`SYMBOLS`):
``events=middle``, ``events=before-terminal``, ``event=content`` and ``code=overloaded``.

Every set is built from the registry: a fault's cells (``FaultDef.cells``: its own, sized for
``--speed 0``, or the default ones of its kind) join the set of its outcome (:func:`set_of`), in
registry order (grouped by outcome class), so a new fault joins its set with no edit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from replayproxy._core.faults import FaultDef, Outcome, definitions, outcome_of, parse
from replayproxy._errors import FaultSpecError, UsageError

__all__ = [
    "OUTCOMES",
    "SETS",
    "SET_NAMES",
    "SPEC_SET",
    "SYMBOLS",
    "Cell",
    "cells",
    "checkable",
    "outcome_class",
    "parts",
    "set_of",
]

OUTCOMES: Final = ("same", "incomplete", "provider-error", "altered", "hang")
"""The outcome classes, in the order reports list them."""

_CLASS: Final[Mapping[Outcome, str]] = MappingProxyType(
    {
        Outcome.SAME_EVENTS: "same",
        Outcome.INCOMPLETE: "incomplete",
        Outcome.PROVIDER_ERROR: "provider-error",
        Outcome.ALTERED_EVENTS: "altered",
        Outcome.HANG: "hang",
    }
)

SYMBOLS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "events": ("middle", "before-terminal"),
        "event": ("content",),
        "code": ("overloaded",),
    }
)
"""Symbolic parameter values, resolved per interaction: ``events=middle`` (after half the
events), ``events=before-terminal`` (just before the terminal event), ``event=content`` (an
event that is neither the first nor the terminal one), ``code=overloaded`` (the provider's
overloaded status: 529 for an Anthropic-shaped API, 503 otherwise)."""

_PLACEHOLDER: Final = {"events": "0", "event": "0", "code": "503"}
"""A concrete value standing in for a symbol while a spec is checked by the fault parser."""

SPEC_SET: Final = "spec"
"""The set name of a cell given as a fault spec rather than by set."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the matrix: a fault spec from a set and the outcome class it produces."""

    set: str
    spec: str
    outcome: str

    @property
    def name(self) -> str:
        """The fault's name (``reset``); ``stall+keepalive`` for faults applied together."""
        return "+".join(p.partition(":")[0].strip() for p in parts(self.spec))

    @property
    def id(self) -> str:
        """``set:spec`` (``cuts:reset:events=1``): unique in a run, usable as a pytest id."""
        return f"{self.set}:{self.spec}"


def parts(spec: str) -> tuple[str, ...]:
    """The fault specs of a cell's spec (``+`` joins faults applied together)."""
    return tuple(p.strip() for p in spec.split("+"))


def outcome_class(outcome: Outcome) -> str:
    """The matrix's name (one of :data:`OUTCOMES`) of a registry outcome."""
    return _CLASS[outcome]


def checkable(part: str) -> str:
    """One fault spec with each symbol replaced by a concrete placeholder, for the parser."""
    name, colon, rest = part.partition(":")
    items = []
    for item in rest.split(",") if rest.strip() else ():
        key, eq, value = item.partition("=")
        if eq and value.strip() in SYMBOLS.get(key.strip(), ()):
            item = f"{key.strip()}={_PLACEHOLDER[key.strip()]}"
        items.append(item)
    return f"{name}{colon}{','.join(items)}"


def _check(spec: str) -> None:
    """Parse ``spec`` as the fault parser would, with each symbol replaced by a placeholder."""
    for part in parts(spec):
        try:
            parse(checkable(part))
        except FaultSpecError as e:
            symbols = ", ".join(f"{k}={v}" for k, vs in SYMBOLS.items() for v in vs)
            raise FaultSpecError(f"{e} (symbolic values: {symbols})") from None


def _outcome(spec: str) -> str:
    """The outcome class of a spec: the worst of its faults' (a hang outlasts the rest)."""
    found = {outcome_class(outcome_of(p.partition(":")[0].strip())) for p in parts(spec)}
    return next(o for o in reversed(OUTCOMES) if o in found)


def _cell(set_name: str, spec: str, outcome: str | None = None) -> Cell:
    _check(spec)
    return Cell(set_name, spec, outcome or _outcome(spec))


_SET_OF: Final[Mapping[Outcome, str]] = MappingProxyType(
    {
        Outcome.SAME_EVENTS: "stalls",
        Outcome.HANG: "stalls",
        Outcome.INCOMPLETE: "cuts",
        Outcome.PROVIDER_ERROR: "errors",
        Outcome.ALTERED_EVENTS: "events",
    }
)
"""The set a fault's cells join, by its outcome (a fault that only re-splits reads: ``splits``)."""

SPLITS: Final = "splits"
"""The set of the faults that change only where the bytes are cut (``FaultDef.resplits``)."""

SET_NAMES: Final = (SPLITS, "stalls", "cuts", "errors", "events")
"""The named sets, in the order ``all`` lists their cells."""


def set_of(d: FaultDef) -> str:
    """The set fault ``d``'s cells join: ``splits`` if it only re-splits reads, else its
    outcome's."""
    return SPLITS if d.resplits else _SET_OF[d.outcome]


def _build() -> dict[str, tuple[Cell, ...]]:
    out: dict[str, list[Cell]] = {name: [] for name in SET_NAMES}
    for d in definitions():
        name = set_of(d)
        out[name] += [_cell(name, spec, outcome_class(d.cell_outcome)) for spec in d.cells]
    # Within a set, the cells of one class together, in the order of OUTCOMES (the quick
    # "same" stalls before the hangs, which last until the client gives up).
    sets = {
        name: tuple(sorted(found, key=lambda c: OUTCOMES.index(c.outcome)))
        for name, found in out.items()
    }
    sets["all"] = tuple(c for cs in sets.values() for c in cs)
    return sets


SETS: Final[Mapping[str, tuple[Cell, ...]]] = MappingProxyType(_build())
"""Every set by name, ``all`` last (every other set's cells, in order)."""


def _is_fault(name: str) -> bool:
    try:
        outcome_of(name)
    except FaultSpecError:
        return False
    return True


def _items(selection: str | Sequence[str]) -> list[str]:
    raw = [selection] if isinstance(selection, str) else list(selection)
    out = []
    for item in raw:
        # A comma separates sets ("cuts,splits"), but also a spec's parameters: split on it only
        # where no piece is a parameter.
        pieces = [p.strip() for p in item.split(",")]
        out.extend(pieces if not any(":" in p or "=" in p for p in pieces) else [item.strip()])
    return [i for i in out if i]


def cells(selection: str | Sequence[str]) -> tuple[Cell, ...]:
    """The cells of ``selection``: set names (``"cuts"``, ``"cuts,splits"``, ``"all"``) and
    fault specs (set ``"spec"``, outcome from the registry), in order, duplicates dropped.

    Raises :class:`UsageError` for an empty selection and :class:`FaultSpecError` for an item
    that is neither a set nor a valid spec, each one line naming the valid sets.
    """
    valid = ", ".join(SETS)
    items = _items(selection)
    if not items:
        raise UsageError(f"no fault matrix cells selected; valid sets: {valid}")
    out: dict[str, Cell] = {}
    for item in items:
        if item in SETS:
            found: tuple[Cell, ...] = SETS[item]
        elif ":" not in item and "=" not in item and not _is_fault(item):
            raise UsageError(
                f"unknown fault matrix set {item!r}; valid sets: {valid} (or a fault spec)"
            )
        else:
            try:
                found = (_cell(SPEC_SET, item),)
            except FaultSpecError as e:
                raise FaultSpecError(f"{e}; valid sets: {valid}") from None
        for c in found:
            out.setdefault(c.spec, c)
    return tuple(out.values())
