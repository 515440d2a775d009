"""Fault injection: fault specs (``NAME:PARAM=VALUE,...``) and the functions that apply them.

A fault is a pure function from :class:`~replayproxy.core.replay.schedule.Schedule` to schedule.
:func:`plan` is the one entry point the replay shells call: it builds the schedule of a
recorded interaction, applies the faults stored in the interaction and those given at replay
time, and scales it by ``speed``.

Faults are applied in phases, whatever order they are given in (within a phase, in order:
the interaction's stored faults first, then the replay-time ones):

1. ``status`` replaces the response;
2. event edits: ``drop``, ``duplicate``, ``reorder``, ``corrupt``;
3. endings: ``error``, ``truncate``, ``reset``, ``close``, ``hang``, ``linger`` (and ``stall``
   positions are resolved here): positions refer to the recorded stream and timeline;
4. ``--speed`` scaling;
5. timing and bytes, in real seconds: ``ttfb``, ``stall``, ``keepalive``, ``jitter``,
   ``throttle``, ``split``, ``coalesce``.

Selectors: ``interaction=I`` and ``path=GLOB`` restrict a fault to matching interactions;
``p=P`` applies it with probability P, drawn from ``seed``, the interaction index and how many
times it was served before (``replay_count``): the same run always makes the same draws.
"""

from __future__ import annotations

import contextlib
import fnmatch
import random
from collections.abc import Sequence

from replayproxy.core.cassette.model import Interaction
from replayproxy.core.faults import bytes as bytes_faults
from replayproxy.core.faults import events as event_faults
from replayproxy.core.faults import provider as providers
from replayproxy.core.faults import timing, transport
from replayproxy.core.faults.position import Context, Cut, events_of, resolve
from replayproxy.core.faults.spec import CATALOGUE, MAX_WRITES, FaultSpec, parse
from replayproxy.core.replay.schedule import FinishKind, Schedule, from_interaction, scale
from replayproxy.core.wire.events import NotAStreamError, event_spans, stream_format
from replayproxy.errors import FaultSpecError

__all__ = ["CATALOGUE", "FaultSpec", "applies", "apply_all", "parse", "plan"]

_EDITS = ("drop", "duplicate", "reorder", "corrupt")
_ENDINGS = ("error", "truncate", "reset", "close", "hang", "linger", "stall")
_LATE = ("ttfb", "stall", "keepalive", "jitter", "throttle", "split", "coalesce")
_FINISH = {"reset": FinishKind.RESET, "close": FinishKind.CLOSE, "hang": FinishKind.HANG}


def _rng(spec: FaultSpec, purpose: str, index: int, replay_count: int) -> random.Random:
    # str seeds are hashed with SHA-512 by random.Random: stable across runs and platforms.
    return random.Random(f"{purpose}:{spec.integer('seed')}:{index}:{replay_count}")


def applies(spec: FaultSpec, interaction: Interaction, index: int, replay_count: int = 0) -> bool:
    """Whether ``spec`` acts on this serving of the interaction (selectors and ``p=``)."""
    wanted = spec.value("interaction")
    if wanted is not None and wanted != index:
        return False
    glob = spec.string("path")
    if glob is not None and not fnmatch.fnmatchcase(interaction.request.path, glob):
        return False
    p = spec.number("p")
    if p >= 1.0:
        return True
    return _rng(spec, f"p:{spec.text}", index, replay_count).random() < p


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


def _default_cut(schedule: Schedule, ctx: Context, spec: FaultSpec) -> Cut:
    """Where a positioned fault acts when no position is given (see docs/faults.md)."""
    if schedule.head is None:
        raise ctx.error(spec, "the interaction has no response to cut")
    body = schedule.body
    streamy = True
    try:
        spans = event_spans(body, ctx.content_type)
    except NotAStreamError:
        streamy, spans = False, []
    if spec.name in ("truncate", "error"):
        if not streamy:
            raise ctx.error(spec, "the body is not an event stream; give bytes=N or frames=N")
        last = providers.terminal_index(body, spans)
        if last is None:
            raise ctx.error(spec, "the stream has no terminal event to stop before; give events=N")
        return resolve(schedule, ctx, spec, ("events", float(last)))
    if streamy and spans:
        return resolve(schedule, ctx, spec, ("events", float(len(spans) // 2)))
    return resolve(schedule, ctx, spec, ("bytes", float(len(body) // 2)))


def _cut(schedule: Schedule, ctx: Context, spec: FaultSpec) -> Cut:
    position = spec.position()
    if position is None:
        return _default_cut(schedule, ctx, spec)
    return resolve(schedule, ctx, spec, position)


def _edit(schedule: Schedule, ctx: Context, spec: FaultSpec) -> Schedule:
    spans = events_of(schedule, ctx, spec)
    n = spec.integer("event")
    last = len(spans) - (2 if spec.name == "reorder" else 1)
    if n > last:
        what = (
            "has no next event to swap with"
            if spec.name == "reorder" and n < len(spans)
            else "does not exist"
        )
        raise ctx.error(
            spec, f"event {n} {what} (the stream has {len(spans)} events, 0-{len(spans) - 1})"
        )
    span = spans[n]
    if spec.name == "drop":
        return event_faults.drop(schedule, span)
    if spec.name == "duplicate":
        return event_faults.duplicate(schedule, span)
    if spec.name == "reorder":
        return event_faults.reorder(schedule, span, spans[n + 1])
    sse = stream_format(schedule.body, ctx.content_type) == "sse"
    out = event_faults.corrupt(schedule, span, sse)
    if out is None:
        raise ctx.error(spec, f"event {n} has no JSON payload to cut")
    return out


def _ending(schedule: Schedule, ctx: Context, spec: FaultSpec) -> Schedule:
    if spec.name == "linger":
        return transport.linger(schedule)
    cut = _cut(schedule, ctx, spec)
    if spec.name == "truncate":
        return transport.end_at(schedule, cut, FinishKind.COMPLETE)
    if spec.name == "error":
        provider = providers.detect(ctx.interaction)
        if provider is None or provider == "bedrock":
            raise ctx.error(
                spec,
                "no in-band error format for this API (anthropic, openai chat/responses, gemini)",
            )
        spans = events_of(schedule, ctx, spec)
        upto = sum(1 for s in spans if s.end <= cut.offset)
        data = providers.error_event(
            provider, schedule.body, spans, upto, spec.string("type"), spec.string("message")
        )
        return transport.end_at(schedule, cut, FinishKind.COMPLETE, data)
    return transport.end_at(schedule, cut, _FINISH[spec.name])


def _late(
    schedule: Schedule, ctx: Context, spec: FaultSpec, stall_at: int, rng: random.Random
) -> Schedule:
    name = spec.name
    if name == "ttfb":
        return timing.ttfb(schedule, spec.number("delay"))
    if name == "stall":
        return timing.stall(schedule, stall_at, spec.number("for"))
    if name == "keepalive":
        spans = events_of(schedule, ctx, spec)
        if stream_format(schedule.body, ctx.content_type) != "sse":
            raise ctx.error(spec, "keepalives exist for SSE streams only, not AWS event-stream")
        boundaries = [0, *(s.end for s in spans)]
        every, until = spec.number("every"), spec.number("until")
        _bounded(schedule, ctx, spec, timing.keepalive_count(schedule, boundaries, every, until))
        data = providers.keepalive_bytes(
            providers.detect(ctx.interaction), spec.string("kind") or "auto",
            spec.string("text") or "keepalive", schedule.body,
        )  # fmt: skip
        return timing.keepalive(schedule, boundaries, every, until, data)
    if name == "jitter":
        return timing.jitter(schedule, spec.number("ms"), spec.string("dist") or "uniform", rng)
    if name == "throttle":
        _bounded(schedule, ctx, spec, timing.throttle_count(schedule, spec.integer("bps")))
        return timing.throttle(schedule, spec.integer("bps"))
    if name == "split":
        size = spec.value("bytes")
        at, avg = spec.string("at"), spec.integer("avg")
        body = schedule.body
        size = size if isinstance(size, int) else None
        _bounded(schedule, ctx, spec, bytes_faults.split_count(body, at, size, avg))
        points = bytes_faults.split_points(body, at, size, avg, rng)
        return bytes_faults.split(schedule, points, spec.number("gap"))
    window = spec.value("window")
    return timing.coalesce(schedule, float(window) if isinstance(window, float | int) else None)


def _bounded(schedule: Schedule, ctx: Context, spec: FaultSpec, added: int) -> None:
    """Refuse, before building anything, a fault that would make more than MAX_WRITES writes
    (e.g. ``keepalive:every=0.01`` over a recorded gap of days)."""
    if len(schedule.writes) + added > MAX_WRITES:
        raise ctx.error(
            spec,
            f"would build {len(schedule.writes) + added} writes for one response "
            f"(at most {MAX_WRITES}); use a longer interval, a bigger piece or a shorter wait",
        )


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
    resp = ctx.interaction.response
    for spec in specs:
        if spec.name == "status":
            schedule = transport.replace_response(
                schedule, resp.headers if resp else (), providers.detect(ctx.interaction),
                spec.integer("code"), _optional(spec, "retry-after"), spec.string("message"),
            )  # fmt: skip
    for spec in specs:
        if spec.name in _EDITS:
            schedule = _edit(schedule, ctx, spec)
    stall_offsets: dict[int, int] = {}
    for i, spec in enumerate(specs):
        if spec.name == "stall":
            stall_offsets[i] = _cut(schedule, ctx, spec).offset
        elif spec.name in _ENDINGS:
            schedule = _ending(schedule, ctx, spec)
    schedule = scale(schedule, speed)
    for i, spec in enumerate(specs):
        if spec.name in _LATE:
            rng = _rng(spec, spec.name, ctx.index, replay_count)
            schedule = _late(schedule, ctx, spec, stall_offsets.get(i, 0), rng)
    return schedule


def _optional(spec: FaultSpec, name: str) -> float | None:
    value = spec.value(name)
    return None if value is None else float(value)  # type: ignore[arg-type]


# Replay asks for the same schedule request after request. Schedules are immutable and a plan
# is a pure function of (interaction, index, speed, chosen faults), except for the seeded draws
# that also depend on replay_count (_SEEDED): build each such plan once. Keyed by the
# interaction's identity; the entry keeps the interaction alive, so its id cannot be reused
# while cached. Bounded, oldest out first. Faults that cannot apply raise, and are not cached.
_SEEDED = frozenset({"jitter", "split"})
_PLANS: dict[tuple[int, int, float, tuple[FaultSpec, ...]], tuple[Interaction, Schedule]] = {}
_PLANS_MAX = 4096


def _planned(
    interaction: Interaction, index: int, speed: float, chosen: list[FaultSpec], replay_count: int
) -> Schedule:
    def build() -> Schedule:
        return apply_all(
            from_interaction(interaction),
            chosen,
            Context(interaction, index),
            speed=speed,
            replay_count=replay_count,
        )

    if any(s.name in _SEEDED for s in chosen):
        return build()
    key = (id(interaction), index, speed, tuple(chosen))
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is interaction:
        return hit[1]
    schedule = build()
    if len(_PLANS) >= _PLANS_MAX:
        with contextlib.suppress(KeyError, StopIteration, RuntimeError):  # another thread won
            del _PLANS[next(iter(_PLANS))]
    _PLANS[key] = (interaction, schedule)
    return schedule


def plan(
    interaction: Interaction,
    index: int,
    *,
    speed: float = 1.0,
    faults: Sequence[FaultSpec] = (),
    replay_count: int = 0,
) -> Schedule:
    """The schedule to serve for ``interaction`` (its ``index`` in the cassette).

    ``faults`` are the replay-time faults; the interaction's own stored faults are applied too
    (first). ``replay_count`` is how many times this interaction was served before (for ``p=``
    and seeded draws that must differ between repeats yet stay reproducible). Raises
    :class:`FaultSpecError` naming the interaction when a fault cannot apply to it.
    """
    specs = [*_stored(interaction, index), *faults]
    chosen = [s for s in specs if applies(s, interaction, index, replay_count)]
    return _planned(interaction, index, speed, chosen, replay_count)
