"""How each fault acts on an HTTP response: one function per fault, schedule to schedule.

Every applier has the signature ``(schedule, step) -> schedule`` (:data:`HttpApplier`) and is
named in the fault's definition (:mod:`replayproxy._core.faults.registry`); the planner
(:func:`replayproxy._core.faults.apply_all`) calls them phase by phase. Appliers check that
their fault can act on the interaction and raise a one-line :class:`FaultSpecError` naming it
when it cannot (``step.error``). The byte and timing work itself is in :mod:`.events`,
:mod:`.transport`, :mod:`.timing` and :mod:`.bytes`.
"""

from __future__ import annotations

from collections.abc import Callable

from replayproxy._core.faults import bytes as bytes_faults
from replayproxy._core.faults import events as event_faults
from replayproxy._core.faults import provider as providers
from replayproxy._core.faults import timing, transport
from replayproxy._core.faults.params import MAX_WRITES
from replayproxy._core.faults.position import Cut, Step, events_of, resolve
from replayproxy._core.schedule.model import FinishKind, Schedule
from replayproxy._core.wire.events import EventSpan, NotAStreamError, event_spans, stream_format

__all__ = [
    "HttpApplier",
    "close",
    "coalesce",
    "corrupt",
    "cut",
    "drop",
    "duplicate",
    "error",
    "hang",
    "jitter",
    "keepalive",
    "linger",
    "reorder",
    "reset",
    "split",
    "stall",
    "status",
    "throttle",
    "truncate",
    "ttfb",
]

HttpApplier = Callable[[Schedule, Step], Schedule]


def _default_cut(schedule: Schedule, step: Step, before_terminal: bool) -> Cut:
    """Where a positioned fault acts when no position is given (see docs/guides/faults.md)."""
    ctx, spec = step.ctx, step.spec
    if schedule.head is None:
        raise step.error("the interaction has no response to cut")
    body = schedule.body
    streamy = True
    try:
        spans = event_spans(body, ctx.content_type)
    except NotAStreamError:
        streamy, spans = False, []
    if before_terminal:
        if not streamy:
            raise step.error("the body is not an event stream; give bytes=N or frames=N")
        last = providers.terminal_index(body, spans)
        if last is None:
            raise step.error("the stream has no terminal event to stop before; give events=N")
        return resolve(schedule, ctx, spec, ("events", float(last)))
    if streamy and spans:
        return resolve(schedule, ctx, spec, ("events", float(len(spans) // 2)))
    return resolve(schedule, ctx, spec, ("bytes", float(len(body) // 2)))


def cut(schedule: Schedule, step: Step, *, before_terminal: bool = False) -> Cut:
    """Where ``step``'s fault acts: its position, or by default halfway through the events
    (bytes, for a body that is not an event stream), or just before the terminal event."""
    position = step.spec.position()
    if position is None:
        return _default_cut(schedule, step, before_terminal)
    return resolve(schedule, step.ctx, step.spec, position)


def _bounded(schedule: Schedule, step: Step, added: int) -> None:
    """Refuse, before building anything, a fault that would make more than MAX_WRITES writes
    (e.g. ``keepalive:every=0.01`` over a recorded gap of days)."""
    if len(schedule.writes) + added > MAX_WRITES:
        raise step.error(
            f"would build {len(schedule.writes) + added} writes for one response "
            f"(at most {MAX_WRITES}); use a longer interval, a bigger piece or a shorter wait",
        )


# -- the response ----------------------------------------------------------------------------


def status(schedule: Schedule, step: Step) -> Schedule:
    spec, interaction = step.spec, step.ctx.interaction
    resp = interaction.response
    retry_after = None if spec.value("retry-after") is None else spec.number("retry-after")
    return transport.replace_response(
        schedule, resp.headers if resp else (), providers.detect(interaction),
        spec.integer("code"), retry_after, spec.string("message"),
    )  # fmt: skip


# -- event edits -----------------------------------------------------------------------------


def _event(schedule: Schedule, step: Step, *, pair: bool = False) -> tuple[list[EventSpan], int]:
    """The stream's events and the index ``event=N`` names (with a next one, for a pair)."""
    spans = events_of(schedule, step.ctx, step.spec)
    n = step.spec.integer("event")
    last = len(spans) - (2 if pair else 1)
    if n > last:
        what = "has no next event to swap with" if pair and n < len(spans) else "does not exist"
        raise step.error(
            f"event {n} {what} (the stream has {len(spans)} events, 0-{len(spans) - 1})"
        )
    return spans, n


def drop(schedule: Schedule, step: Step) -> Schedule:
    spans, n = _event(schedule, step)
    return event_faults.drop(schedule, spans[n])


def duplicate(schedule: Schedule, step: Step) -> Schedule:
    spans, n = _event(schedule, step)
    return event_faults.duplicate(schedule, spans[n])


def reorder(schedule: Schedule, step: Step) -> Schedule:
    spans, n = _event(schedule, step, pair=True)
    return event_faults.reorder(schedule, spans[n], spans[n + 1])


def corrupt(schedule: Schedule, step: Step) -> Schedule:
    spans, n = _event(schedule, step)
    sse = stream_format(schedule.body, step.ctx.content_type) == "sse"
    out = event_faults.corrupt(schedule, spans[n], sse)
    if out is None:
        raise step.error(f"event {n} has no JSON payload to cut")
    return out


# -- endings ---------------------------------------------------------------------------------


def truncate(schedule: Schedule, step: Step) -> Schedule:
    at = cut(schedule, step, before_terminal=True)
    return transport.end_at(schedule, at, FinishKind.COMPLETE)


def error(schedule: Schedule, step: Step) -> Schedule:
    at = cut(schedule, step, before_terminal=True)
    provider = providers.detect(step.ctx.interaction)  # None: no in-band error event
    if provider is None:
        raise step.error(
            "no in-band error format for this API (anthropic, openai chat/responses, gemini)"
        )
    spans = events_of(schedule, step.ctx, step.spec)
    upto = sum(1 for s in spans if s.end <= at.offset)
    data = providers.error_event(
        provider, schedule.body, spans, upto, step.spec.string("type"), step.spec.string("message")
    )
    return transport.end_at(schedule, at, FinishKind.COMPLETE, data)


def reset(schedule: Schedule, step: Step) -> Schedule:
    return transport.end_at(schedule, cut(schedule, step), FinishKind.RESET)


def close(schedule: Schedule, step: Step) -> Schedule:
    return transport.end_at(schedule, cut(schedule, step), FinishKind.CLOSE)


def hang(schedule: Schedule, step: Step) -> Schedule:
    return transport.end_at(schedule, cut(schedule, step), FinishKind.HANG)


def linger(schedule: Schedule, step: Step) -> Schedule:
    return transport.linger(schedule)


# -- timing and bytes, in real seconds (after --speed) -----------------------------------------


def ttfb(schedule: Schedule, step: Step) -> Schedule:
    return timing.ttfb(schedule, step.spec.number("delay"))


def stall(schedule: Schedule, step: Step) -> Schedule:
    return timing.stall(schedule, step.cut, step.spec.number("for"))


def keepalive(schedule: Schedule, step: Step) -> Schedule:
    spec, ctx = step.spec, step.ctx
    spans = events_of(schedule, ctx, spec)
    if stream_format(schedule.body, ctx.content_type) != "sse":
        raise step.error("keepalives exist for SSE streams only, not AWS event-stream")
    boundaries = [0, *(s.end for s in spans)]
    every, until = spec.number("every"), spec.number("until")
    _bounded(schedule, step, timing.keepalive_count(schedule, boundaries, every, until))
    data = providers.keepalive_bytes(
        providers.detect(ctx.interaction), spec.string("kind") or "auto",
        spec.string("text") or "keepalive", schedule.body,
    )  # fmt: skip
    return timing.keepalive(schedule, boundaries, every, until, data)


def jitter(schedule: Schedule, step: Step) -> Schedule:
    spec = step.spec
    return timing.jitter(schedule, spec.number("ms"), spec.string("dist") or "uniform", step.rng())


def throttle(schedule: Schedule, step: Step) -> Schedule:
    bps = step.spec.integer("bps")
    _bounded(schedule, step, timing.throttle_count(schedule, bps))
    return timing.throttle(schedule, bps)


def split(schedule: Schedule, step: Step) -> Schedule:
    spec = step.spec
    given = spec.value("bytes")
    size = given if isinstance(given, int) else None
    at, avg = spec.string("at"), spec.integer("avg")
    body = schedule.body
    _bounded(schedule, step, bytes_faults.split_count(body, at, size, avg))
    points = bytes_faults.split_points(body, at, size, avg, step.rng())
    return bytes_faults.split(schedule, points, spec.number("gap"))


def coalesce(schedule: Schedule, step: Step) -> Schedule:
    window = step.spec.value("window")
    return timing.coalesce(schedule, float(window) if isinstance(window, float | int) else None)
