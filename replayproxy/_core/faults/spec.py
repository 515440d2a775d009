"""Fault specs: ``NAME[:PARAM=VALUE[,PARAM=VALUE...]]`` parsed and checked against the registry.

Every fault accepts the selectors ``interaction=I``, ``path=GLOB``, ``p=PROBABILITY`` and
``seed=S``; faults that act *at* a point of the stream accept exactly one position
(``events=N``, ``frames=N``, ``bytes=N``, ``time=SECONDS``). Everything else is declared per
fault in :mod:`replayproxy._core.faults.registry`, with its type and default, so that an
unknown name or parameter is a one-line error listing what is valid.

Only the first ``:`` separates the name, so a ``path=`` glob may contain ``:`` (Gemini's
``/v1beta/models/*:streamGenerateContent``); values cannot contain ``,``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from replayproxy._core.faults.params import (
    MAX_SECONDS,
    MAX_WRITES,
    MIN_KEEPALIVE_S,
    POSITIONS,
    Param,
)
from replayproxy._core.faults.registry import FAULTS, FaultDef
from replayproxy._errors import FaultSpecError

__all__ = [
    "CATALOGUE",
    "MAX_SECONDS",
    "MAX_WRITES",
    "MIN_KEEPALIVE_S",
    "POSITIONS",
    "FaultDef",
    "FaultSpec",
    "Param",
    "parse",
]

CATALOGUE: Mapping[str, FaultDef] = FAULTS
"""The registry's faults by name: another name of
:data:`~replayproxy._core.faults.registry.FAULTS`, kept for callers of the catalogue."""


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """A parsed, validated fault spec: its name and its parameters as given (strings)."""

    name: str
    params: tuple[tuple[str, str], ...] = ()
    text: str = ""

    def __str__(self) -> str:
        return self.text or self.name

    @property
    def definition(self) -> FaultDef:
        return FAULTS[self.name]

    def given(self, name: str) -> bool:
        return any(key == name for key, _ in self.params)

    def value(self, name: str) -> object:
        """The converted value of ``name``, or its default (``None`` when it has none)."""
        param = self.definition.allowed()[name]
        for key, text in self.params:
            if key == name:
                return param.convert(text)
        return param.default

    def number(self, name: str) -> float:
        value = self.value(name)
        assert isinstance(value, int | float), name
        return float(value)

    def integer(self, name: str) -> int:
        value = self.value(name)
        assert isinstance(value, int), name
        return value

    def string(self, name: str) -> str | None:
        value = self.value(name)
        return None if value is None else str(value)

    def position(self) -> tuple[str, float] | None:
        """The position given (``("events", 3.0)``...), or ``None`` for the fault's default."""
        for key, _ in self.params:
            if key in POSITIONS:
                return key, self.number(key)
        return None


def _valid_list(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def parse(spec: str) -> FaultSpec:
    """Parse and validate ``NAME[:PARAM=VALUE,...]``; raises :class:`FaultSpecError` (one line)."""
    text = spec.strip()
    name, _, rest = text.partition(":")
    name = name.strip()
    definition = FAULTS.get(name)
    if definition is None:
        raise FaultSpecError(
            f"unknown fault {name!r} in {spec!r}; valid faults: {_valid_list(FAULTS)}"
        )
    allowed = definition.allowed()
    params: list[tuple[str, str]] = []
    for item in rest.split(",") if rest.strip() else ():
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise FaultSpecError(f"fault {spec!r}: expected PARAM=VALUE, got {item.strip()!r}")
        if key not in allowed:
            raise FaultSpecError(
                f"fault {name!r}: unknown parameter {key!r}; valid: {_valid_list(allowed)}"
            )
        if any(k == key for k, _ in params):
            raise FaultSpecError(f"fault {spec!r}: parameter {key!r} given twice")
        try:
            allowed[key].convert(value)
        except ValueError as e:
            detail = str(e) if "must" in str(e) else "not a valid value"
            raise FaultSpecError(f"fault {name!r}: {key}={value!r}: {detail}") from None
        params.append((key, value))
    given = {k for k, _ in params}
    positions = sorted(given & set(POSITIONS))
    if len(positions) > 1:
        raise FaultSpecError(
            f"fault {spec!r}: give at most one position, got {', '.join(positions)}"
        )
    for key in definition.required:
        if key not in given:
            raise FaultSpecError(f"fault {name!r}: missing required parameter {key}=")
    one_of = definition.one_of
    if one_of is not None and len(given & set(one_of.names)) != 1:
        raise FaultSpecError(f"fault {spec!r}: give exactly one of {one_of.text}")
    return FaultSpec(name, tuple(params), text)
