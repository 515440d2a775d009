"""How the simulator paces and breaks a response: the timing model and fault knobs (pure).

A :class:`Behavior` says when each write happens and how the response ends. :func:`plan`
turns (events, behavior) into a :class:`Plan`: absolute times (seconds from the moment the
request was read) for the response head and each write, and the finish kind.

Timing model — MODELLED, not measured. Real provider streams show a time to first byte of a
few hundred milliseconds and gaps of roughly 10-60 ms between events, sometimes with several
events coalesced into one read (the shipped cassettes in ``cassettes/`` show it).
:meth:`Behavior.modelled` reproduces that shape from a seeded RNG (``ttfb = 0.3 s * scale``,
gaps uniform in ``[10, 60] ms * scale``, ~10 % of events merged into the previous write);
the default :class:`Behavior` has no delays at all, so tests are fast unless they ask.

Faults (at most one; counts are in *writes*, which equal events unless ``merge`` is used):

* ``reset_after=N`` — after N writes, TCP RST (``SO_LINGER(1, 0)`` + abort). ``0`` = right after
  the response head. Over TLS the RST is real too (curl: "Connection reset by peer"), but
  CPython's ssl module reports it as a ragged EOF, so httpx raises ``RemoteProtocolError``
  there instead of ``ReadError``.
* ``close_after=N`` — after N writes, a clean FIN without the chunked terminator.
* ``hang_after=N`` — after N writes, send nothing more until the client goes away.
* ``status=S`` — answer HTTP ``S`` with the provider's JSON error body instead of the stream
  (``retry-after: 1`` is added for 429, 503 and 529).

Per-request knobs (request headers, or query parameters named without the ``x-`` prefix, e.g.
``?sim-gap-ms=20``); headers win over the query, and both override the simulator's Python-side
behavior field by field. SDKs pass them via ``default_headers``/``extra_headers``:

=======================  =======================================================
``x-sim-stream``         a :data:`~replayproxy.testing._streams.STREAMS` name to answer with
``x-sim-ttfb-ms``        delay before the response head (float ms)
``x-sim-gap-ms``         gap before each write after the first: ``20`` or ``10,50,30`` (cycled)
``x-sim-merge``          event indices written together with the previous one: ``3,4,10``
``x-sim-reset-after``    int N (see above)
``x-sim-close-after``    int N
``x-sim-hang-after``     int N
``x-sim-status``         int HTTP status, provider-shaped error body
``x-sim-model``          ``SCALE`` or ``SCALE,SEED``: :meth:`Behavior.modelled` ttfb/gaps/merge
=======================  =======================================================

A malformed knob gets a 400 JSON error naming it (:func:`from_knobs` raises ``UsageError``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from replayproxy._errors import UsageError

__all__ = ["KNOBS", "Behavior", "Finish", "Plan", "Write", "from_knobs", "plan"]

Finish = Literal["complete", "reset", "close", "hang"]

KNOBS = (
    "x-sim-stream",
    "x-sim-ttfb-ms",
    "x-sim-gap-ms",
    "x-sim-merge",
    "x-sim-reset-after",
    "x-sim-close-after",
    "x-sim-hang-after",
    "x-sim-status",
    "x-sim-model",
)


@dataclass(frozen=True)
class Behavior:
    """Pacing and fault of one response. The default: no delay, complete stream."""

    ttfb_s: float = 0.0
    gap_s: float | tuple[float, ...] = 0.0  # a tuple is cycled: gap before write i = gap[(i-1)%n]
    merge: frozenset[int] = field(default_factory=frozenset)  # event indices joined to previous
    reset_after: int | None = None
    close_after: int | None = None
    hang_after: int | None = None
    status: int | None = None
    stream: str | None = None  # force a STREAMS entry instead of routing by path

    def __post_init__(self) -> None:
        faults = [f for f in (self.reset_after, self.close_after, self.hang_after) if f is not None]
        if len(faults) > 1:
            raise UsageError("at most one of reset_after, close_after, hang_after")
        if any(f < 0 for f in faults):
            raise UsageError("fault counts must be >= 0")
        gaps = self.gap_s if isinstance(self.gap_s, tuple) else (self.gap_s,)
        if self.ttfb_s < 0 or not gaps or any(g < 0 for g in gaps):
            raise UsageError("ttfb and gaps must be >= 0 (and a gap list non-empty)")
        if self.status is not None and not 100 <= self.status <= 599:
            raise UsageError(f"status must be 100..599, got {self.status}")

    @classmethod
    def modelled(cls, scale: float = 1.0, seed: int = 0, **overrides: object) -> Behavior:
        """The modelled provider timing (see module doc), times multiplied by ``scale``."""
        rng = random.Random(seed)
        gaps = tuple(round(rng.uniform(0.010, 0.060) * scale, 6) for _ in range(97))
        merge = frozenset(i for i in range(1, 2000) if rng.random() < 0.1)
        base = cls(ttfb_s=0.3 * scale, gap_s=gaps, merge=merge)
        return replace(base, **overrides)  # type: ignore[arg-type]

    def gap(self, write_index: int) -> float:
        """Gap before write ``write_index`` (>= 1)."""
        if isinstance(self.gap_s, tuple):
            return self.gap_s[(write_index - 1) % len(self.gap_s)]
        return self.gap_s

    @property
    def finish(self) -> Finish:
        if self.reset_after is not None:
            return "reset"
        if self.close_after is not None:
            return "close"
        if self.hang_after is not None:
            return "hang"
        return "complete"

    @property
    def fault_after(self) -> int | None:
        for n in (self.reset_after, self.close_after, self.hang_after):
            if n is not None:
                return n
        return None


@dataclass(frozen=True)
class Write:
    at_s: float  # seconds after the request was read
    data: bytes
    events: int  # how many events this write carries


@dataclass(frozen=True)
class Plan:
    head_at_s: float
    writes: tuple[Write, ...]
    finish: Finish


def plan(events: tuple[bytes, ...], behavior: Behavior) -> Plan:
    """Group ``events`` into writes, give each an absolute time, cut at the fault."""
    groups: list[list[bytes]] = []
    for i, ev in enumerate(events):
        if groups and i in behavior.merge:
            groups[-1].append(ev)
        else:
            groups.append([ev])
    cut = behavior.fault_after
    if cut is not None:
        groups = groups[:cut]
    at = behavior.ttfb_s
    writes = []
    for i, g in enumerate(groups):
        if i:
            at += behavior.gap(i)
        writes.append(Write(at, b"".join(g), len(g)))
    return Plan(behavior.ttfb_s, tuple(writes), behavior.finish)


def _ms(name: str, value: str) -> float:
    try:
        v = float(value) / 1000.0
    except ValueError:
        raise UsageError(f"bad {name}: {value!r} (want milliseconds)") from None
    if not v >= 0:
        raise UsageError(f"bad {name}: {value!r} (want milliseconds >= 0)")
    return v


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"bad {name}: {value!r} (want an integer)") from None


def from_knobs(base: Behavior, knobs: Mapping[str, str]) -> Behavior:
    """Apply per-request knobs (keys lower-case, as in :data:`KNOBS`) on top of ``base``."""
    b = base
    if "x-sim-model" in knobs:
        parts = knobs["x-sim-model"].split(",")
        try:
            scale = float(parts[0])
            seed = int(parts[1]) if len(parts) > 1 else 0
        except (ValueError, IndexError):
            raise UsageError(
                f"bad x-sim-model: {knobs['x-sim-model']!r} (want SCALE[,SEED])"
            ) from None
        m = Behavior.modelled(scale, seed)
        b = replace(b, ttfb_s=m.ttfb_s, gap_s=m.gap_s, merge=m.merge)  # keeps faults/stream
    changes: dict[str, object] = {}
    if "x-sim-stream" in knobs:
        changes["stream"] = knobs["x-sim-stream"]
    if "x-sim-ttfb-ms" in knobs:
        changes["ttfb_s"] = _ms("x-sim-ttfb-ms", knobs["x-sim-ttfb-ms"])
    if "x-sim-gap-ms" in knobs:
        gaps = tuple(_ms("x-sim-gap-ms", g) for g in knobs["x-sim-gap-ms"].split(","))
        changes["gap_s"] = gaps[0] if len(gaps) == 1 else gaps
    if "x-sim-merge" in knobs:
        raw = knobs["x-sim-merge"]
        changes["merge"] = frozenset(_int("x-sim-merge", x) for x in raw.split(",") if x.strip())
    faults = {k: f"{k[6:].replace('-', '_')}" for k in KNOBS if k.endswith("-after")}
    if any(k in knobs for k in faults):
        # A per-request fault replaces the base one rather than conflicting with it.
        for attr in faults.values():
            changes[attr] = None
        for k, attr in faults.items():
            if k in knobs:
                changes[attr] = _int(k, knobs[k])
    if "x-sim-status" in knobs:
        changes["status"] = _int("x-sim-status", knobs["x-sim-status"])
    try:
        return replace(b, **changes)  # type: ignore[arg-type]
    except UsageError as e:
        raise UsageError(f"bad x-sim knobs: {e}") from None
