"""Where a fault acts: stream positions (``events=``/``frames=``/``bytes=``/``time=``) as cuts.

A fault is applied as a :class:`Step`: its spec, the interaction it acts on and the serving.
A position resolves to a :class:`Cut`: a byte offset in the response body and the time (ns,
on the schedule's timeline) at which the bytes before it have all been written. Positions
refer to the stream as recorded (``time=`` is recorded seconds, before ``--speed``), after
the event edits listed before the fault. This module also holds the byte-level helpers that
every fault uses to cut, splice and re-time a schedule's writes without ever reordering bytes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.schedule.model import Schedule, Write
from replayproxy._core.wire.events import EventSpan, NotAStreamError, event_spans
from replayproxy._errors import FaultSpecError

if TYPE_CHECKING:
    from replayproxy._core.faults.spec import FaultSpec

__all__ = [
    "Context",
    "Cut",
    "Step",
    "cut_writes",
    "draws",
    "events_of",
    "resolve",
    "splice",
    "split_writes",
]

_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Context:
    """The interaction a fault is applied to, for event parsing and for error messages."""

    interaction: Interaction
    index: int

    @property
    def content_type(self) -> str | None:
        resp = self.interaction.response
        return None if resp is None else resp.header("content-type")

    def error(self, spec: object, message: str) -> FaultSpecError:
        req = self.interaction.request
        return FaultSpecError(
            f"interaction {self.index} ({req.method} {req.path}): fault {str(spec)!r}: {message}"
        )


def draws(purpose: str, seed: int, index: int, replay_count: int) -> random.Random:
    """The generator of one fault's random draws for one serving of one interaction."""
    # str seeds are hashed with SHA-512 by random.Random: stable across runs and platforms.
    return random.Random(f"{purpose}:{seed}:{index}:{replay_count}")


@dataclass(frozen=True, slots=True)
class Step:
    """One fault being applied: its spec, the interaction, how many times that interaction was
    served before (``replay_count``), and ``cut``: for a positioned fault applied after
    ``--speed`` scaling (``stall``), where its position was resolved on the recorded stream
    (HTTP: a body offset; WebSocket: how many messages come before it)."""

    spec: FaultSpec
    ctx: Context
    replay_count: int = 0
    cut: int = 0

    def error(self, message: str) -> FaultSpecError:
        return self.ctx.error(self.spec, message)

    def rng(self) -> random.Random:
        """This fault's draws for this serving: the same run always makes the same ones."""
        return draws(self.spec.name, self.spec.integer("seed"), self.ctx.index, self.replay_count)


@dataclass(frozen=True, slots=True)
class Cut:
    """``offset`` body bytes have been written by ``at_ns``."""

    offset: int
    at_ns: int


def events_of(schedule: Schedule, ctx: Context, spec: object) -> list[EventSpan]:
    """The events of the schedule's body; an error naming the interaction if it has none."""
    if schedule.head is None:
        raise ctx.error(spec, "the interaction has no response, so no events")
    try:
        return event_spans(schedule.body, ctx.content_type)
    except NotAStreamError as e:
        raise ctx.error(spec, f"needs an event stream, but {e}") from None


def _time_of_offset(schedule: Schedule, offset: int, head_at: int) -> int:
    """When byte ``offset - 1`` is written (``head_at`` for offset 0)."""
    if offset > 0:
        pos = 0
        for w in schedule.writes:
            pos += len(w.data)
            if offset <= pos:
                return w.at_ns
    return head_at  # offset 0 (resolve never asks for one past the body's end)


def resolve(schedule: Schedule, ctx: Context, spec: object, position: tuple[str, float]) -> Cut:
    """The cut for ``position`` (from :meth:`FaultSpec.position`) on ``schedule``."""
    kind, value = position
    body_len = len(schedule.body)
    if schedule.head is None:
        raise ctx.error(spec, "the interaction has no response to cut")
    if kind == "time":
        at = round(value * _NS)
        offset = sum(len(w.data) for w in schedule.writes if w.at_ns <= at)
        return Cut(offset, max(at, schedule.head.at_ns))
    n = int(value)
    if kind == "bytes":
        if n > body_len:
            raise ctx.error(spec, f"bytes={n} is past the end of the body ({body_len} bytes)")
        offset = n
    elif kind == "frames":
        if n > len(schedule.writes):
            raise ctx.error(spec, f"frames={n} is past the last frame ({len(schedule.writes)})")
        offset = sum(len(w.data) for w in schedule.writes[:n])
    else:
        spans = events_of(schedule, ctx, spec)
        if n > len(spans):
            raise ctx.error(spec, f"events={n} is past the last event ({len(spans)} events)")
        offset = spans[n - 1].end if n else (spans[0].start if spans else 0)
    return Cut(offset, _time_of_offset(schedule, offset, schedule.head.at_ns))


def split_writes(writes: Sequence[Write], offsets: Sequence[int]) -> list[Write]:
    """The same bytes at the same times, with a write boundary at every body offset given."""
    points = sorted(set(offsets))
    out: list[Write] = []
    pos = 0
    i = 0
    for w in writes:
        start, end = pos, pos + len(w.data)
        while i < len(points) and points[i] <= start:
            i += 1
        cur = start
        while i < len(points) and points[i] < end:
            out.append(Write(w.at_ns, w.data[cur - start : points[i] - start]))
            cur = points[i]
            i += 1
        out.append(Write(w.at_ns, w.data[cur - start :]))
        pos = end
    return [w for w in out if w.data]


def cut_writes(writes: Sequence[Write], offset: int) -> tuple[list[Write], list[Write]]:
    """The writes before and after body ``offset`` (a write across it is split in two)."""
    before: list[Write] = []
    after: list[Write] = []
    pos = 0
    for w in split_writes(writes, [offset]):
        (before if pos < offset else after).append(w)
        pos += len(w.data)
    return before, after


def splice(schedule: Schedule, start: int, end: int, data: bytes) -> Schedule:
    """Replace body bytes ``[start, end)`` with ``data``, keeping every other write and time.

    The new bytes are written when the first replaced byte was (or, for a pure insertion, with
    the byte before them), so the timeline stays ordered.
    """
    before, rest = cut_writes(schedule.writes, start)
    removed, after = cut_writes(rest, end - start)
    if removed:
        at = removed[0].at_ns
    elif before:
        at = before[-1].at_ns
    else:
        at = schedule.head.at_ns if schedule.head else 0
    middle = [Write(at, data)] if data else []
    return replace(schedule, writes=(*before, *middle, *after))
