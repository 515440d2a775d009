"""Fault injection: fault specs (``NAME:PARAM=VALUE,...``) and the functions that apply them.

A fault is a pure function from :class:`~replayproxy.core.schedule.Schedule` to schedule.
:func:`plan` is the one entry point the replay shells call: it builds the schedule of a
recorded interaction, applies the faults stored in the interaction and those given at replay
time, and scales it by ``speed``.

(Stub: the fault catalogue is being written; ``plan`` already does the fault-free part.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replayproxy.core.model import Interaction
from replayproxy.core.schedule import Schedule, from_interaction, scale
from replayproxy.errors import FaultSpecError

__all__ = ["FaultSpec", "parse", "plan"]


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """A parsed fault spec: its name and its parameters, as given (strings)."""

    name: str
    params: tuple[tuple[str, str], ...] = ()
    text: str = ""


def parse(spec: str) -> FaultSpec:
    """Parse ``NAME[:PARAM=VALUE[,PARAM=VALUE...]]``; raises FaultSpecError (one line)."""
    raise FaultSpecError(f"fault injection is not available yet (got {spec!r})")


def plan(
    interaction: Interaction,
    index: int,
    *,
    speed: float = 1.0,
    faults: Sequence[FaultSpec] = (),
    replay_count: int = 0,
) -> Schedule:
    """The schedule to serve for ``interaction`` (its ``index`` in the cassette).

    ``faults`` are the replay-time faults; the interaction's own stored faults are applied too.
    ``replay_count`` is how many times this interaction was served before (for ``p=`` / ``seed=``
    draws that must differ between repeats yet stay reproducible).
    """
    return scale(from_interaction(interaction), speed)
