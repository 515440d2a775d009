"""What a command's exit status must be under each outcome class (``replayproxy matrix
--expect CLASS=0|nonzero|N|any``).

By default only ``same`` is constrained (``same=0``: a stream that delivers every event must
not break the command); the other classes are whatever the user says their code should do.
A command the matrix had to kill at its ``--timeout`` meets no expectation but ``any``: being
killed is not handling the fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from replayproxy._core.matrix.cells import OUTCOMES
from replayproxy._errors import UsageError

__all__ = ["DEFAULT_EXPECT", "Expect", "expectations"]


@dataclass(frozen=True, slots=True)
class Expect:
    """``0``, ``nonzero``, an exact status ``N``, or ``any``."""

    text: str

    def met(self, status: int | None) -> bool:
        """Whether exit ``status`` (``None``: killed at the timeout) meets it."""
        if self.text == "any":
            return True
        if status is None:
            return False
        if self.text == "nonzero":
            return status != 0
        return status == int(self.text)


ANY: Final = Expect("any")

DEFAULT_EXPECT: Final[Mapping[str, Expect]] = MappingProxyType({"same": Expect("0")})
"""``same=0``; every other class unconstrained."""


def _expect(item: str, flag: str) -> tuple[str, Expect]:
    name, eq, value = (x.strip() for x in item.partition("="))
    classes = ", ".join(OUTCOMES)
    if not eq or name not in OUTCOMES:
        raise UsageError(
            f"{flag} {item!r}: expected CLASS=0|nonzero|N|any with CLASS one of {classes}"
        )
    if value not in ("any", "nonzero") and not (value.isascii() and value.isdigit()):
        raise UsageError(f"{flag} {item!r}: the status must be 0, nonzero, a number N or any")
    if value.isdigit() and int(value) > 255:
        raise UsageError(f"{flag} {item!r}: an exit status is 0-255")
    return name, Expect(str(int(value)) if value.isdigit() else value)


def expectations(items: Iterable[str], flag: str = "--expect") -> dict[str, Expect]:
    """The expectation of every outcome class: the defaults, then ``items`` (``CLASS=...``;
    a later one for the same class wins); a bad item is a one-line UsageError naming ``flag``."""
    out = {o: DEFAULT_EXPECT.get(o, ANY) for o in OUTCOMES}
    for item in items:
        name, expect = _expect(item, flag)
        out[name] = expect
    return out
