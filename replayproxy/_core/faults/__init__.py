"""Fault injection: fault specs (``NAME:PARAM=VALUE,...``) and the planner that applies them.

A fault is a pure function from :class:`~replayproxy._core.schedule.model.Schedule` to schedule.
:func:`plan` is the one entry point the replay shells call: it builds the schedule of a
recorded interaction, applies the faults stored in the interaction and those given at replay
time, and scales it by ``speed``.

Every fault is defined once, in :mod:`replayproxy._core.faults.registry`: its parameters, its
:class:`~replayproxy._core.faults.registry.Phase`, its appliers and its outcome. The planner
applies faults phase by phase, whatever order they are given in (within a phase, in order:
the interaction's stored faults first, then the replay-time ones):

1. ``RESPONSE``: the response is replaced (``status``);
2. ``EDIT``: event edits (``drop``, ``duplicate``, ...);
3. ``ENDING``: endings (``truncate``, ``reset``, ...), and the positions of positioned
   ``TIMING`` faults (``stall``) are resolved here: positions refer to the recorded stream
   and timeline;
4. ``--speed`` scaling;
5. ``TIMING``: timing and bytes, in real seconds (``ttfb``, ``stall``, ``split``, ...).

Selectors: ``interaction=I`` and ``path=GLOB`` restrict a fault to matching interactions;
``attempt=N`` to the N-th serving of one in the session (``replay_count == N - 1``), and
:func:`servings` says how often a session may then serve it without ``allow_repeats`` (the
retry after the failing attempt has to match); ``p=P`` applies it with probability P, drawn
from ``seed``, the interaction index and how many times it was served before
(``replay_count``): the same run always makes the same draws.
"""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Sequence

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.faults.http_appliers import cut
from replayproxy._core.faults.position import Context, Step, draws
from replayproxy._core.faults.registry import (
    FAULTS,
    FaultDef,
    Outcome,
    Phase,
    definitions,
    outcome_of,
)
from replayproxy._core.faults.spec import CATALOGUE, FaultSpec, parse
from replayproxy._core.schedule.model import Schedule, from_interaction, scale
from replayproxy._errors import FaultSpecError

__all__ = [
    "CATALOGUE",
    "FAULTS",
    "FaultDef",
    "FaultSpec",
    "Outcome",
    "Phase",
    "PlanCache",
    "applies",
    "apply_all",
    "definitions",
    "outcome_of",
    "parse",
    "plan",
    "select",
    "servings",
]


def _selects(spec: FaultSpec, interaction: Interaction, index: int) -> bool:
    """Whether the selectors that do not depend on the serving (``interaction=``, ``path=``)
    pick this interaction."""
    wanted = spec.value("interaction")
    if wanted is not None and wanted != index:
        return False
    glob = spec.string("path")
    return glob is None or fnmatch.fnmatchcase(interaction.request.path, glob)


def applies(spec: FaultSpec, interaction: Interaction, index: int, replay_count: int = 0) -> bool:
    """Whether ``spec`` acts on this serving of the interaction (selectors and ``p=``);
    ``replay_count`` is how many times it was served before (``attempt=N`` is serving N)."""
    if not _selects(spec, interaction, index):
        return False
    attempt = spec.value("attempt")
    if attempt is not None and attempt != replay_count + 1:
        return False
    p = spec.number("p")
    if p >= 1.0:
        return True
    return draws(f"p:{spec.text}", spec.integer("seed"), index, replay_count).random() < p


def select(
    interaction: Interaction, index: int, faults: Sequence[FaultSpec] = (), replay_count: int = 0
) -> list[FaultSpec]:
    """The faults that act on this serving: the interaction's stored ones first, then
    ``faults``, each kept if :func:`applies` says so. Raises FaultSpecError for a bad stored
    fault, naming the interaction."""
    specs = [*_stored(interaction, index), *faults]
    return [s for s in specs if applies(s, interaction, index, replay_count)]


def servings(interaction: Interaction, index: int, faults: Sequence[FaultSpec] = ()) -> int:
    """How many times a session may serve this interaction without ``allow_repeats``: once,
    or, when a fault that selects it (stored, or in ``faults``) names ``attempt=N``, one more
    than the largest N, so the retry after the failing attempt is answered too. A stored
    fault that does not parse counts for nothing here (planning reports it)."""
    stored = []
    for text in interaction.faults:
        with contextlib.suppress(FaultSpecError):
            stored.append(parse(text))
    attempts = [
        spec.integer("attempt")
        for spec in (*stored, *faults)
        if spec.given("attempt") and _selects(spec, interaction, index)
    ]
    return max(attempts, default=0) + 1


def _stored(interaction: Interaction, index: int) -> list[FaultSpec]:
    out = []
    for text in interaction.faults:
        try:
            out.append(parse(text))
        except FaultSpecError as e:
            req = interaction.request
            raise FaultSpecError(
                f"interaction {index} ({req.method} {req.path}): stored fault: {e}"
            ) from None
    return out


def apply_all(
    schedule: Schedule,
    specs: Sequence[FaultSpec],
    ctx: Context,
    *,
    speed: float = 1.0,
    replay_count: int = 0,
) -> Schedule:
    """Apply ``specs`` (already selected) to ``schedule`` in the documented phases."""
    if speed < 0:
        raise FaultSpecError(f"speed must be >= 0, got {speed}")
    cuts: dict[int, int] = {}  # spec index -> body offset, for positioned TIMING faults
    for phase in Phase:
        if phase is Phase.TIMING:
            schedule = scale(schedule, speed)
        for i, spec in enumerate(specs):
            definition = spec.definition
            if definition.phase is phase:
                step = Step(spec, ctx, replay_count, cuts.get(i, 0))
                schedule = definition.http(schedule, step)
            elif phase is Phase.ENDING and definition.cut_before_speed:
                cuts[i] = cut(schedule, Step(spec, ctx)).offset
    return schedule


PLANS_MAX = 4096
"""How many plans a :class:`PlanCache` keeps by default."""


class PlanCache:
    """Plans already built, owned by whoever serves one cassette (a replay session).

    Replay asks for the same schedule request after request. Schedules are immutable and a
    plan is a pure function of (interaction, index, speed, chosen faults), except for the
    seeded draws that also depend on ``replay_count`` (``FaultDef.seeded``): build each such
    plan once. Keyed by the values, with the interaction kept in the entry and compared by
    identity on a hit, so an entry can never answer for another interaction. Bounded (oldest
    out first). Faults that cannot apply raise, and are not cached.
    """

    def __init__(self, maxsize: int = PLANS_MAX) -> None:
        self.maxsize = maxsize
        self._plans: dict[tuple[int, float, tuple[FaultSpec, ...]], tuple[Interaction, Schedule]]
        self._plans = {}

    def __len__(self) -> int:
        return len(self._plans)

    def get(
        self, interaction: Interaction, index: int, speed: float, chosen: Sequence[FaultSpec]
    ) -> Schedule | None:
        hit = self._plans.get((index, speed, tuple(chosen)))
        return hit[1] if hit is not None and hit[0] is interaction else None

    def put(
        self,
        interaction: Interaction,
        index: int,
        speed: float,
        chosen: Sequence[FaultSpec],
        schedule: Schedule,
    ) -> None:
        plans = self._plans
        if len(plans) >= self.maxsize:
            with contextlib.suppress(KeyError, StopIteration, RuntimeError):  # another thread won
                del plans[next(iter(plans))]
        plans[(index, speed, tuple(chosen))] = (interaction, schedule)


def plan(
    interaction: Interaction,
    index: int,
    *,
    speed: float = 1.0,
    faults: Sequence[FaultSpec] = (),
    replay_count: int = 0,
    cache: PlanCache | None = None,
) -> Schedule:
    """The schedule to serve for ``interaction`` (its ``index`` in the cassette).

    ``faults`` are the replay-time faults; the interaction's own stored faults are applied too
    (first). ``replay_count`` is how many times this interaction was served before (for ``p=``
    and seeded draws that must differ between repeats yet stay reproducible). With a
    ``cache``, a plan that does not depend on ``replay_count`` is built once. Raises
    :class:`FaultSpecError` naming the interaction when a fault cannot apply to it.
    """
    chosen = select(interaction, index, faults, replay_count)
    if cache is not None and any(s.definition.seeded for s in chosen):
        cache = None  # drawn afresh on every serving
    if cache is not None:
        hit = cache.get(interaction, index, speed, chosen)
        if hit is not None:
            return hit
    schedule = apply_all(
        from_interaction(interaction),
        chosen,
        Context(interaction, index),
        speed=speed,
        replay_count=replay_count,
    )
    if cache is not None:
        cache.put(interaction, index, speed, chosen, schedule)
    return schedule
