"""Differences between two cassettes, at the interaction, frame and event level.

:func:`diff` aligns the interactions of A and B (by method, URL and request body, so a removed
or inserted interaction does not make every later one differ), then reports for each pair what
changed in the request, the response head (one difference per header that differs), the ending
and the stored faults; how the frames changed (bytes, splits, times); and, for event streams,
which events were added, removed or changed. Each difference is a :class:`Difference` whose
``a`` and ``b`` are safe one-line renderings (see
:func:`~replayproxy._core.cassette.texttokens.escape`); an empty side means "absent".

Two recordings of one stream differ in timing on every frame. :class:`Timing` says how to
compare times: within ``tolerance_ns`` they are equal, and ``ignore`` leaves times out
altogether and reports a different byte split of the same bytes as one difference
(``frame splits``) instead of one per frame, followed by the first places where the splits
part (the frame on each side and the body offset at which it ends) and a count of the rest.

``cassette diff --events`` compares by meaning instead: :mod:`.event_diff`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from replayproxy._core.cassette.model import Cassette, Frame, Header, Interaction, Response
from replayproxy._core.cassette.texttokens import escape, format_time, quote
from replayproxy._core.wire.events import NotAStreamError, event_spans

__all__ = ["SPLIT_AT", "Difference", "Timing", "diff", "opcodes", "pair_interactions"]


@dataclass(frozen=True, slots=True)
class Timing:
    """How :func:`diff` compares times: equal within ``tolerance_ns``; ``ignore`` skips them
    (time to first byte, frame times, end time) and summarizes re-split frames."""

    tolerance_ns: int = 0
    ignore: bool = False

    def same(self, a: int, b: int) -> bool:
        return self.ignore or abs(a - b) <= self.tolerance_ns


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference. ``a_index``/``b_index`` locate the interaction on each side."""

    level: str
    """``cassette``, ``interaction``, ``frame`` or ``event``."""
    a_index: int | None
    b_index: int | None
    label: str
    """The interaction as ``METHOD /path`` (from A when it exists there)."""
    what: str
    a: str
    b: str


def _label(x: Interaction) -> str:
    return f"{x.request.method} {x.request.path}"


def _short(data: bytes, limit: int = 120) -> str:
    text = quote(data)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _frame(f: Frame) -> str:
    return f"{format_time(f.offset_ns)} {_short(f.data)}"


class _Collector:
    def __init__(self, ai: int | None, bi: int | None, label: str) -> None:
        self.ai, self.bi, self.label = ai, bi, label
        self.out: list[Difference] = []

    def add(self, level: str, what: str, a: str, b: str) -> None:
        self.out.append(Difference(level, self.ai, self.bi, self.label, what, a, b))

    def field(self, what: str, a: object, b: object, render: object = str) -> None:
        if a != b:
            assert callable(render)
            self.add("interaction", what, render(a), render(b))


def _by_name(headers: Sequence[Header]) -> dict[bytes, list[bytes]]:
    out: dict[bytes, list[bytes]] = {}
    for k, v in headers:
        out.setdefault(k.lower(), []).append(v)
    return out


def _header_fields(c: _Collector, side: str, a: Sequence[Header], b: Sequence[Header]) -> None:
    """One difference per header name whose values differ (a repeated header's values joined
    by ``, ``; an absent header is an empty side); only the order changed: one ``order`` line."""
    if tuple(a) == tuple(b):
        return
    na, nb = _by_name(a), _by_name(b)
    for name in dict.fromkeys([*na, *nb]):
        va, vb = na.get(name, []), nb.get(name, [])
        if va != vb:
            c.add("interaction", f"{side} header {escape(name)}",
                  ", ".join(escape(v) for v in va), ", ".join(escape(v) for v in vb))  # fmt: skip
    if na == nb:  # the same values under the same names: only the order or a name's case
        c.add("interaction", f"{side} header order or name case",
              ", ".join(escape(k) for k, _ in a), ", ".join(escape(k) for k, _ in b))  # fmt: skip


Opcode = tuple[str, int, int, int, int]


def opcodes(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    whole_a: Sequence[object] | None = None,
    whole_b: Sequence[object] | None = None,
) -> list[Opcode]:
    """:mod:`difflib` opcodes turning ``a`` into ``b`` (lists of keys), the common head and tail
    taken off first; with ``whole_a``/``whole_b`` (the items the keys were made from) only
    items equal as a whole count as common there.

    SequenceMatcher anchors on the longest common block, the earliest one in ``a``. In a run of
    identical items (a cassette of equal requests, a stream of keep-alive frames) one item
    inserted in the middle then came out as a whole stretch inserted and another deleted (121
    and 120 for one interaction inserted at 120 of 250). Items equal from either end are
    paired one to one before the matcher sees the rest. Where only the keys are equal (two
    recordings of one request), the whole items decide which of them is the one removed.
    """
    wa = a if whole_a is None else whole_a
    wb = b if whole_b is None else whole_b
    n = min(len(a), len(b))
    head = 0
    while head < n and wa[head] == wb[head]:
        head += 1
    tail = 0
    while tail < n - head and wa[len(a) - 1 - tail] == wb[len(b) - 1 - tail]:
        tail += 1
    ops: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    middle = difflib.SequenceMatcher(
        None, a[head : len(a) - tail], b[head : len(b) - tail], False
    ).get_opcodes()
    ops.extend((op, a1 + head, a2 + head, b1 + head, b2 + head) for op, a1, a2, b1, b2 in middle)
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops


def _frames(c: _Collector, a: Sequence[Frame], b: Sequence[Frame], timing: Timing) -> None:
    if a == b:
        return
    da, db = [f.data for f in a], [f.data for f in b]
    if timing.ignore and b"".join(da) == b"".join(db):
        if da != db:  # the same bytes, split differently
            c.add("frame", "frame splits (same bytes)", f"{len(a)} frames", f"{len(b)} frames")
            _splits(c, da, db)
        return
    if len(a) != len(b):
        c.add("frame", "frame count", str(len(a)), str(len(b)))
    for op, a1, a2, b1, b2 in opcodes(da, db):
        if op == "equal":  # a[a1:a2] and b[b1:b2] hold the same bytes: compare their times
            for i in range(a1, a2):
                j = b1 + i - a1
                if not timing.same(a[i].offset_ns, b[j].offset_ns):
                    c.add(
                        "frame", f"frame {i} time", format_time(a[i].offset_ns),
                        format_time(b[j].offset_ns),
                    )  # fmt: skip
            continue
        for k in range(max(a2 - a1, b2 - b1)):
            fa = a[a1 + k] if a1 + k < a2 else None
            fb = b[b1 + k] if b1 + k < b2 else None
            where = f"frame {a1 + k}" if fa is not None else f"frame {b1 + k} (B)"
            show = (lambda f: _short(f.data)) if timing.ignore else _frame
            c.add("frame", where, show(fa) if fa else "", show(fb) if fb else "")


SPLIT_AT = "ends at body offset"
"""The end of a re-split place's ``what`` (``frame 12 ends at body offset``; ``a``/``b`` the
offsets): ``cassette diff`` prints these on one line each."""

_SPLITS_SHOWN = 5
"""At most this many re-split places are shown after the ``frame splits`` line; the rest are
counted in one line."""


def _ends(frames: Sequence[bytes]) -> list[int]:
    out, at = [], 0
    for data in frames:
        at += len(data)
        out.append(at)
    return out


def _splits(c: _Collector, da: Sequence[bytes], db: Sequence[bytes]) -> None:
    """Where two splits of the same bytes part: walking both boundary lists, each place the
    next boundaries differ (after the last common one) is named by its frames and the body
    offsets at which each side's frame ends; the first :data:`_SPLITS_SHOWN` are listed."""
    ea, eb = _ends(da), _ends(db)
    places: list[tuple[int, int]] = []
    i = j = 0
    in_step = True
    while i < len(ea) and j < len(eb):
        if ea[i] == eb[j]:
            i, j, in_step = i + 1, j + 1, True
            continue
        if in_step:
            places.append((i, j))
            in_step = False
        if ea[i] < eb[j]:
            i += 1
        else:
            j += 1
    for i, j in places[:_SPLITS_SHOWN]:
        where = f"frame {i}" if i == j else f"frame {i} (B: frame {j})"
        c.add("frame", f"{where} {SPLIT_AT}", str(ea[i]), str(eb[j]))
    if len(places) > _SPLITS_SHOWN:
        rest = len(places) - _SPLITS_SHOWN
        c.add("frame", f"... and {rest} more re-split {'place' if rest == 1 else 'places'}", "", "")


def _event_bytes(resp: Response) -> list[bytes] | None:
    body = resp.body
    try:
        spans = event_spans(body, resp.header("content-type"))
    except NotAStreamError:
        return None
    return [body[s.start : s.end] for s in spans]


def _events(c: _Collector, a: Response, b: Response) -> None:
    if a.body == b.body:
        return
    ea, eb = _event_bytes(a), _event_bytes(b)
    if ea is None or eb is None:
        at = next(
            (i for i, (x, y) in enumerate(zip(a.body, b.body, strict=False)) if x != y),
            min(len(a.body), len(b.body)),
        )
        c.add("interaction", f"body (differs from byte {at})", _short(a.body), _short(b.body))
        return
    if len(ea) != len(eb):
        c.add("event", "event count", str(len(ea)), str(len(eb)))
    for op, a1, a2, b1, b2 in opcodes(ea, eb):
        if op == "equal":
            continue
        for k in range(max(a2 - a1, b2 - b1)):
            xa = ea[a1 + k] if a1 + k < a2 else None
            xb = eb[b1 + k] if b1 + k < b2 else None
            where = f"event {a1 + k}" if xa is not None else f"event {b1 + k} (B)"
            c.add("event", where, _short(xa) if xa else "", _short(xb) if xb else "")


def _pair(ai: int, x: Interaction, bi: int, y: Interaction, timing: Timing) -> list[Difference]:
    c = _Collector(ai, bi, _label(x))
    rq, ry = x.request, y.request
    c.field("method", rq.method, ry.method)
    c.field("url", rq.url, ry.url)
    c.field("request http version", rq.http_version, ry.http_version)
    _header_fields(c, "request", rq.headers, ry.headers)
    c.field("request body", rq.body, ry.body, _short)
    a, b = x.response, y.response
    if (a is None) != (b is None):
        c.add("interaction", "response", "none" if a is None else str(a.status),
              "none" if b is None else str(b.status))  # fmt: skip
    if a is not None and b is not None:
        c.field("status", a.status, b.status)
        c.field("reason", a.reason, b.reason)
        c.field("response http version", a.http_version, b.http_version)
        _header_fields(c, "response", a.headers, b.headers)
        if not timing.same(a.head_offset_ns, b.head_offset_ns):
            c.field("time to first byte", a.head_offset_ns, b.head_offset_ns, format_time)
        _frames(c, a.frames, b.frames, timing)
        _events(c, a, b)
    c.field("end", x.end.kind.value, y.end.kind.value)
    if not timing.same(x.end.offset_ns, y.end.offset_ns):
        c.field("end time", x.end.offset_ns, y.end.offset_ns, format_time)
    c.field("end message", x.end.message, y.end.message)
    c.field("faults", x.faults, y.faults, lambda f: " ".join(f) or "(none)")
    return c.out


def _key(x: Interaction) -> tuple[str, str, bytes]:
    return (x.request.method, x.request.url, x.request.body)


def diff(a: Cassette, b: Cassette, timing: Timing = Timing()) -> list[Difference]:
    """Every difference between cassettes ``a`` and ``b`` (empty if they are equal), with
    times compared as ``timing`` says."""
    out: list[Difference] = []
    if a.meta != b.meta:
        ma, mb = (", ".join(f"{k}={v}" for k, v in c.meta) for c in (a, b))
        out.append(Difference("cassette", None, None, "", "meta", ma, mb))
    xs, ys = a.interactions, b.interactions
    keys = [_key(x) for x in xs], [_key(y) for y in ys]
    return out + pair_interactions(
        xs, ys, opcodes(*keys, xs, ys), lambda i, x, j, y: _pair(i, x, j, y, timing)
    )


def pair_interactions(
    xs: Sequence[Interaction],
    ys: Sequence[Interaction],
    ops: Sequence[Opcode],
    pair: Callable[[int, Interaction, int, Interaction], list[Difference]],
) -> list[Difference]:
    """The differences of the interactions ``ops`` pair (``pair(i, x, j, y)`` each), and an
    "only in A" / "only in B" line for each one left over: the walk both diffs share."""
    out: list[Difference] = []
    for _, a1, a2, b1, b2 in ops:
        paired = min(a2 - a1, b2 - b1)  # equal: all of both; replace: as far as it goes; else 0
        for k in range(paired):
            out.extend(pair(a1 + k, xs[a1 + k], b1 + k, ys[b1 + k]))
        for i in range(a1 + paired, a2):
            out.append(Difference("interaction", i, None, _label(xs[i]), "only in A", "", ""))
        for j in range(b1 + paired, b2):
            out.append(Difference("interaction", None, j, _label(ys[j]), "only in B", "", ""))
    return out
