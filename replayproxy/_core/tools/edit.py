"""Cassette edits: the operations behind ``replayproxy cassette edit``, as one pure function.

:func:`apply` takes a cassette and an :class:`Edits` (every option of one ``edit`` call) and
returns the edited cassette. Body and timing edits go through the *same functions as faults*
(``schedule.from_interaction`` -> :mod:`replayproxy._core.faults` functions ->
``schedule.to_interaction``), so an edit made here and a fault injected at replay time cut,
splice and re-time bytes identically. Interactions not selected are returned untouched, and so
is everything an edit does not name (request, headers, recorded_at, other frames' bytes/times).

The operations run in this fixed order (documented in docs/guides/editing.md), whatever the order of
the options on the command line:

1. ``delete`` the selected interactions (alone: it cannot be combined with other edits);
2. redact headers and JSON fields of the request body;
3. bake faults into the recording (``bake``: fault specs applied for good, at speed 1);
4. event edits: JSON fields set inside events (:mod:`.event_field`), then insert, drop,
   duplicate (event numbers refer to the stream before this step);
5. ``truncate`` at a position;
6. frames: split at positions, merge frame ranges, rechunk;
7. timing: uniform gap, time to first byte, speed;
8. the ending (kind and/or time);
9. the stored fault list: remove, then attach (each attached spec validated by faults.parse).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Header, Interaction, Request
from replayproxy._core.faults import apply_all, parse
from replayproxy._core.faults import events as event_faults
from replayproxy._core.faults.position import Context, events_of, resolve, splice, split_writes
from replayproxy._core.faults.spec import POSITIONS
from replayproxy._core.faults.timing import coalesce
from replayproxy._core.faults.transport import end_at
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._core.redaction.body_fields import redact_json
from replayproxy._core.redaction.secrets import redact_headers
from replayproxy._core.schedule.model import (
    Finish,
    Schedule,
    Write,
    from_interaction,
    scale,
    to_interaction,
)
from replayproxy._core.tools.event_field import FieldEdit, set_event_field
from replayproxy._core.wire.events import stream_format
from replayproxy._errors import FaultSpecError, UsageError

__all__ = ["Edits", "apply", "parse_position"]

_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Edits:
    """Every edit of one call. Empty / ``None`` fields do nothing."""

    select: tuple[int, ...] = ()
    """Interaction indices to edit; empty means all."""
    delete: bool = False
    redact_headers: tuple[str, ...] = ()
    redact_json: tuple[str, ...] = ()
    bake: tuple[str, ...] = ()
    insert_events: tuple[tuple[int, bytes], ...] = ()
    drop_events: tuple[int, ...] = ()
    duplicate_events: tuple[int, ...] = ()
    set_event_fields: tuple[FieldEdit, ...] = ()
    truncate: str | None = None
    split: tuple[str, ...] = ()
    merge: tuple[tuple[int, int], ...] = ()
    rechunk: str | None = None
    """``events`` (one frame per event), ``one`` (a single frame) or ``bytes=N``."""
    gap: float | None = None
    ttfb: float | None = None
    speed: float | None = None
    end: EndKind | None = None
    end_at: float | None = None
    remove_faults: tuple[str, ...] = ()
    """Fault specs to remove (exact text), or ``"all"``."""
    add_faults: tuple[str, ...] = ()

    def touches_body(self) -> bool:
        return bool(
            self.bake or self.insert_events or self.drop_events or self.duplicate_events
            or self.set_event_fields
            or self.truncate or self.split or self.merge or self.rechunk
            or self.gap is not None or self.ttfb is not None or self.speed is not None
        )  # fmt: skip

    def is_empty(self) -> bool:
        return not (
            self.delete or self.redact_headers or self.redact_json or self.touches_body()
            or self.end is not None or self.end_at is not None
            or self.remove_faults or self.add_faults
        )  # fmt: skip


def parse_position(text: str) -> tuple[str, float]:
    """``events=N`` / ``frames=N`` / ``bytes=N`` / ``time=SECONDS``, as in fault specs."""
    key, eq, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not eq or key not in POSITIONS:
        raise UsageError(
            f"bad position {text!r}: expected events=N, frames=N, bytes=N or time=SECONDS"
        )
    try:
        converted = POSITIONS[key].convert(value)
    except ValueError as e:
        detail = str(e) if "must" in str(e) else "not a valid number"
        raise UsageError(f"bad position {text!r}: {detail}") from None
    assert isinstance(converted, int | float)
    return key, float(converted)


@dataclass(frozen=True, slots=True)
class _Ctx(Context):
    """The faults' context, with errors worded for edits rather than faults."""

    def error(self, spec: object, message: str) -> FaultSpecError:
        req = self.interaction.request
        return FaultSpecError(
            f"interaction {self.index} ({req.method} {req.path}): {spec}: {message}"
        )


# -- body and timing edits, on the schedule -----------------------------------------------------


def _regroup(schedule: Schedule, bounds: list[int]) -> Schedule:
    """One write per ``[bounds[i], bounds[i+1])``, sent when its last byte was recorded
    (``bounds`` are within the body)."""
    body = schedule.body
    cuts = sorted({0, len(body), *bounds})
    # Body byte ``b - 1`` came in the first write whose bytes reach ``b`` (an empty write
    # reaches no further than the one before it, so it is never that first one).
    ends = list(itertools.accumulate(len(w.data) for w in schedule.writes))
    writes = tuple(
        Write(schedule.writes[bisect.bisect_left(ends, b)].at_ns, body[a:b])
        for a, b in itertools.pairwise(cuts)
    )
    return replace(schedule, writes=writes)


def _events(s: Schedule, e: Edits, ctx: _Ctx) -> Schedule:
    for fe in e.set_event_fields:  # one at a time: each may change its event's length
        spans = events_of(s, ctx, fe.spec)
        if not fe.event < len(spans):
            raise ctx.error(fe.spec, f"no event {fe.event} (the stream has {len(spans)} events)")
        sse = stream_format(s.body, ctx.content_type) == "sse"
        try:
            s = set_event_field(s, spans[fe.event], sse, fe)
        except UsageError as err:
            raise ctx.error(fe.spec, str(err)) from None
    ops: list[tuple[int, int, Callable[[Schedule], Schedule]]] = []
    spans = events_of(s, ctx, "event edit") if _has_event_edits(e) else []

    def span(n: int, what: str) -> int:
        if not 0 <= n < len(spans):
            raise ctx.error(what, f"no event {n} (the stream has {len(spans)} events)")
        return n

    for n in e.drop_events:
        drop = functools.partial(event_faults.drop, span=spans[span(n, f"--drop-event {n}")])
        ops.append((n, 1, drop))
    for n in e.duplicate_events:
        sp = spans[span(n, f"--duplicate-event {n}")]
        ops.append((n, 2, functools.partial(event_faults.duplicate, span=sp)))
    for n, data in e.insert_events:
        if not 0 <= n <= len(spans):
            raise ctx.error(f"--insert-event {n}", f"no place {n} (0-{len(spans)} are)")
        at = spans[n].start if n < len(spans) else (spans[-1].end if spans else 0)
        ops.append((n, 0, functools.partial(splice, start=at, end=at, data=data)))
    # Highest event first: an edit at event N moves only bytes at or after N's start, so the
    # spans computed above stay valid for every lower-numbered edit still to come.
    for _, _, op in sorted(ops, key=lambda t: (t[0], t[1]), reverse=True):
        s = op(s)
    return s


def _has_event_edits(e: Edits) -> bool:
    return bool(e.insert_events or e.drop_events or e.duplicate_events)


def _frames(s: Schedule, e: Edits, ctx: _Ctx) -> Schedule:
    if e.split:
        offsets = [resolve(s, ctx, f"--split {p}", parse_position(p)).offset for p in e.split]
        s = replace(s, writes=tuple(split_writes(s.writes, offsets)))
    for first, last in sorted(e.merge, reverse=True):
        if not 0 <= first <= last < len(s.writes):
            raise ctx.error(f"--merge {first}-{last}", f"has {len(s.writes)} frames")
        group = s.writes[first : last + 1]
        merged = Write(group[-1].at_ns, b"".join(w.data for w in group))
        s = replace(s, writes=(*s.writes[:first], merged, *s.writes[last + 1 :]))
    if e.rechunk == "one":
        s = coalesce(s, None)  # the coalesce fault: all bytes in one write, at the last time
    elif e.rechunk == "events":
        s = _regroup(s, [sp.end for sp in events_of(s, ctx, "--rechunk events")])
    elif e.rechunk is not None:
        size = _rechunk_size(e.rechunk)
        s = _regroup(s, list(range(size, len(s.body), size)))
    return s


def _rechunk_size(text: str) -> int:
    value = text.removeprefix("bytes=")
    if value != text and value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    raise UsageError(f"bad --rechunk {text!r}: expected events, one or bytes=N (N > 0)")


def _timing(s: Schedule, e: Edits) -> Schedule:
    if e.speed is not None and e.speed < 0:
        raise UsageError(f"--speed must be >= 0, got {e.speed}")
    head = s.head
    if head is None:  # no head, no frames: only the end's time can change
        return s if e.speed is None else scale(s, e.speed)
    if e.gap is not None:
        step = round(e.gap * _NS)
        last = s.writes[-1].at_ns if s.writes else head.at_ns
        tail = s.finish.at_ns - last  # keep how long after the last frame the end came
        writes = tuple(Write(head.at_ns + (i + 1) * step, w.data) for i, w in enumerate(s.writes))
        new_last = writes[-1].at_ns if writes else head.at_ns
        s = replace(s, writes=writes, finish=replace(s.finish, at_ns=new_last + tail))
    if e.ttfb is not None:
        delta = round(e.ttfb * _NS) - head.at_ns
        s = Schedule(
            replace(head, at_ns=head.at_ns + delta),
            tuple(Write(w.at_ns + delta, w.data) for w in s.writes),
            Finish(s.finish.at_ns + delta, s.finish.kind),
        )
    if e.speed is not None:
        s = scale(s, e.speed)
    return s


def _body(x: Interaction, index: int, e: Edits) -> Interaction:
    ctx = _Ctx(x, index)
    s = from_interaction(x)
    if e.bake:
        s = apply_all(s, [parse(spec) for spec in e.bake], ctx)
    s = _events(s, e, ctx)
    if e.truncate is not None:
        cut = resolve(s, ctx, f"--truncate {e.truncate}", parse_position(e.truncate))
        s = end_at(s, cut, s.finish.kind)  # the truncate fault's cut; the ending kind stays
    s = _frames(s, e, ctx)
    s = _timing(s, e)
    return to_interaction(s, x)


# -- head, ending and fault-list edits, on the interaction --------------------------------------


def _redact(x: Interaction, e: Edits) -> tuple[Interaction, set[str]]:
    """Redact headers and JSON fields; also return the JSON fields that were found."""
    names = frozenset(n.lower() for n in e.redact_headers)
    req = replace(x.request, headers=redact_headers(x.request.headers, names))
    resp = x.response
    if resp is not None:
        resp = replace(resp, headers=redact_headers(resp.headers, names))
    found: set[str] = set()
    if e.redact_json:
        req, found = _redact_json_body(req, e.redact_json)
    return replace(x, request=req, response=resp), found


def _redact_json_body(req: Request, fields: Sequence[str]) -> tuple[Request, set[str]]:
    """Redact the JSON-pointer ``fields`` of a JSON request body (``*`` = every key / item);
    non-JSON bodies are left alone.

    The body is re-serialized (compact or spaced like the original, non-ASCII kept as it was
    written), and a ``content-length`` header is updated to match.
    """
    try:
        obj = json.loads(req.body)
    except (ValueError, UnicodeDecodeError):
        return req, set()
    found: set[str] = set()
    for f in fields:
        obj, hit = redact_json(obj, parse_pointer(f))
        if hit:
            found.add(f)
    if not found:
        return req, found
    spaced = b'": ' in req.body
    body = json.dumps(
        obj,
        separators=(", ", ": ") if spaced else (",", ":"),
        ensure_ascii=req.body.isascii(),
    ).encode("utf-8")
    headers: tuple[Header, ...] = tuple(
        (k, str(len(body)).encode()) if k.lower() == b"content-length" else (k, v)
        for k, v in req.headers
    )
    return replace(req, body=body, headers=headers), found


def _ending(x: Interaction, e: Edits) -> Interaction:
    kind = x.end.kind if e.end is None else e.end
    at = x.end.offset_ns if e.end_at is None else round(e.end_at * _NS)
    message = x.end.message if kind == x.end.kind else ""
    response = None if kind == EndKind.NO_RESPONSE else x.response
    return replace(x, response=response, end=Ending(kind, at, message))


def _fault_list(x: Interaction, e: Edits) -> Interaction:
    faults = list(x.faults)
    for spec in e.remove_faults:
        faults = [] if spec == "all" else [f for f in faults if f.strip() != spec.strip()]
    for spec in e.add_faults:
        parse(spec)  # validates; raises a one-line FaultSpecError
        faults.append(spec.strip())
    return replace(x, faults=tuple(faults))


def _check(cassette: Cassette, e: Edits) -> None:
    count = len(cassette.interactions)
    for i in e.select:
        if not 0 <= i < count:
            raise UsageError(f"no interaction {i} (the cassette has {count}, 0-{count - 1})")
    if e.delete and not replace(e, delete=False).is_empty():  # (is_empty ignores select)
        raise UsageError("--delete cannot be combined with other edits; run edit twice")
    for spec in (*e.bake, *e.add_faults):
        parse(spec)
    for field in e.redact_json:
        try:
            parse_pointer(field)
        except UsageError as err:
            raise UsageError(f"--redact-json {field}: {err} (e.g. /messages/0/content)") from None
    if e.truncate is not None:
        parse_position(e.truncate)
    for p in e.split:
        parse_position(p)
    if e.rechunk not in (None, "one", "events"):
        _rechunk_size(e.rechunk)


def apply(cassette: Cassette, edits: Edits) -> Cassette:
    """The cassette with ``edits`` applied to the selected interactions (see module doc)."""
    _check(cassette, edits)
    chosen = set(edits.select) if edits.select else set(range(len(cassette.interactions)))
    out: list[Interaction] = []
    found: set[str] = set()
    for i, x in enumerate(cassette.interactions):
        if i not in chosen:
            out.append(x)
            continue
        if edits.delete:
            continue
        x, hits = _redact(x, edits)
        found |= hits
        if edits.touches_body():
            x = _body(x, i, edits)
        if edits.end is not None or edits.end_at is not None:
            x = _ending(x, edits)
        x = _fault_list(x, edits)
        out.append(x)
    missing = [f for f in edits.redact_json if f not in found]
    if missing:
        raise UsageError(f"--redact-json {missing[0]}: no selected request body has that field")
    return cassette.with_interactions(out)
