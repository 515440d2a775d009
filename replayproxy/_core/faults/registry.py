"""The fault registry: one definition per fault, the only place a fault is listed.

A :class:`FaultDef` says everything about one fault: its parameters (with their help and
validation), the :class:`Phase` it is applied in, its HTTP applier, its WebSocket applier or
the reason it has none, whether its draws are seeded per serving, and the :class:`Outcome`
a client meets, and the cells it adds to the fault matrix (:attr:`FaultDef.cells`; the set
they join follows from the outcome). The spec parser (:mod:`.spec`), both planners
(:func:`replayproxy._core.faults.plan`, :func:`replayproxy._core.faults.websocket.plan`), the
fault matrix and the generated docs tables read it; nothing else names a fault. Adding a fault
is one definition here, its appliers, its tests and its row in ``docs/reference/faults.md``
(the steps: docs/explanations/architecture.md, "Where to add things").
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from replayproxy._core.faults import http_appliers as http
from replayproxy._core.faults import ws_appliers as ws
from replayproxy._core.faults.http_appliers import HttpApplier
from replayproxy._core.faults.params import (
    POSITIONS,
    SELECTORS,
    OneOf,
    Param,
    choice,
    close_code,
    count,
    http_status,
    interval,
    milliseconds,
    nonempty,
    positive_count,
    seconds,
)
from replayproxy._core.faults.ws_appliers import WsApplier
from replayproxy._errors import FaultSpecError

__all__ = ["FAULTS", "FaultDef", "Outcome", "Phase", "definition", "definitions", "outcome_of"]


class Phase(enum.Enum):
    """When a fault is applied, whatever order faults are given in (in order within a phase:
    the interaction's stored faults first, then the replay-time ones). ``--speed`` scales the
    schedule between ENDING and TIMING; the position of a positioned TIMING fault (``stall``)
    is resolved during ENDING, on the recorded stream."""

    RESPONSE = "response"
    """Replaces the response (on a WebSocket session: refuses the upgrade)."""
    EDIT = "edit"
    """Edits events, on the recorded stream."""
    ENDING = "ending"
    """Ends the response at a position of the recorded stream and timeline."""
    TIMING = "timing"
    """Timing and bytes, in real seconds, after ``--speed`` scaling."""


class Outcome(enum.Enum):
    """What a client meets when the fault applies (the fault matrix groups faults by it)."""

    SAME_EVENTS = "same events"
    """The recorded events all arrive, at other times or in other reads."""
    INCOMPLETE = "incomplete"
    """An incomplete stream: it ends (cleanly or not) before its terminal event."""
    PROVIDER_ERROR = "provider error"
    """The provider's error: an in-band error event, or an HTTP error status."""
    ALTERED_EVENTS = "altered events"
    """Events duplicated, missing, reordered or corrupted."""
    HANG = "hang"
    """A stream that stalls, or never ends."""


@dataclass(frozen=True, slots=True)
class FaultDef:
    """One fault: everything the parser, the planners, the docs and the fault matrix need."""

    name: str
    summary: str
    phase: Phase
    outcome: Outcome
    http: HttpApplier
    ws: WsApplier | None
    """The WebSocket applier, or ``None`` with the reason in ``ws_unsupported``."""
    example: str
    """A spec that applies this fault to a recorded stream (docs, tests, the fault matrix)."""
    params: Mapping[str, Param] = field(default_factory=dict)
    positioned: bool = False
    required: tuple[str, ...] = ()
    one_of: OneOf | None = None
    seeded: bool = False
    """Its draws differ per serving (``replay_count``), so its plans are never cached."""
    ws_unsupported: str = ""
    """Why it does not apply to a WebSocket session (the error's text), when ``ws`` is None."""
    matrix: tuple[str, ...] = ()
    """Its fault matrix cells, sized for ``--speed 0``, when not the default ones
    (:attr:`cells`). A cell may join faults with ``+`` and use the matrix's symbolic values
    (``events=middle``...)."""
    matrix_outcome: Outcome | None = None
    """The outcome of its matrix cells when it differs from :attr:`outcome` (a ``stall`` of
    50 ms is far shorter than any client's read timeout: every event still arrives)."""
    resplits: bool = False
    """It changes only where the bytes are cut into reads (the matrix's ``splits`` set rather
    than the set of its outcome)."""
    _allowed: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Computed once: FaultSpec.value() looks parameters up on every request served.
        out = dict(self.params)
        if self.positioned:
            out.update(POSITIONS)
        out.update(SELECTORS)
        object.__setattr__(self, "_allowed", MappingProxyType(out))

    @property
    def cut_before_speed(self) -> bool:
        """A positioned TIMING fault (``stall``): applied after ``--speed``, but its position
        is resolved in the ENDING phase, on the recorded stream."""
        return self.positioned and self.phase is Phase.TIMING

    def allowed(self) -> Mapping[str, Param]:
        """Every parameter it accepts: its own, the positions if positioned, the selectors."""
        return self._allowed

    @property
    def cells(self) -> tuple[str, ...]:
        """Its fault matrix cells: :attr:`matrix` if given; else a fault of one event at a
        content event, a positioned one at the first, second, middle and last-but-terminal
        event, any other its example."""
        if self.matrix:
            return self.matrix
        if "event" in self.required:
            return (f"{self.name}:event=content",)
        if self.positioned:
            where = ("0", "1", "middle", "before-terminal")
            return tuple(f"{self.name}:events={w}" for w in where)
        return (self.example,)

    @property
    def cell_outcome(self) -> Outcome:
        """The outcome of its matrix cells (:attr:`matrix_outcome`, else :attr:`outcome`)."""
        return self.matrix_outcome or self.outcome


_EVENT = {"event": Param(count, None, "index of the event (0 = the first event)")}
_HTTP_BODIES = "acts on HTTP bodies; it does not apply to a WebSocket session"
_GAP = "gap=0.00002"  # split pieces 20 µs apart: separate reads, yet fast at speed 0

_DEFINITIONS = (
    FaultDef(
        "reset", "TCP reset (RST) at the position",
        Phase.ENDING, Outcome.INCOMPLETE, http.reset, ws.reset, "reset:events=2",
        positioned=True,
    ),
    FaultDef(
        "close", "FIN at the position, without the chunked terminator",
        Phase.ENDING, Outcome.INCOMPLETE, http.close, ws.close, "close:events=2",
        {
            "code": Param(
                close_code, None, "WebSocket: close code (default and 1006: no close frame)"
            ),
            "reason": Param(nonempty, None, "WebSocket: close frame reason"),
        },
        positioned=True,
    ),
    FaultDef(
        "truncate", "clean end at the position, before the terminal event",
        Phase.ENDING, Outcome.INCOMPLETE, http.truncate, ws.truncate, "truncate",
        positioned=True,
    ),
    FaultDef(
        "hang", "stop sending at the position, keep the connection open",
        Phase.ENDING, Outcome.HANG, http.hang, ws.hang, "hang:events=2",
        positioned=True, matrix=("hang:events=middle",),
    ),
    FaultDef(
        "linger", "send everything but never end the response",
        Phase.ENDING, Outcome.HANG, http.linger, ws.linger, "linger",
    ),
    FaultDef(
        "stall", "pause at the position, then continue",
        Phase.TIMING, Outcome.HANG, http.stall, ws.stall, "stall:for=1,events=2",
        {"for": Param(seconds, 1.0, "pause length, real seconds")},
        positioned=True, matrix=("stall:for=0.05,events=middle",),
        matrix_outcome=Outcome.SAME_EVENTS,
    ),
    FaultDef(
        "ttfb", "delay the response head",
        Phase.TIMING, Outcome.SAME_EVENTS, http.ttfb, ws.ttfb, "ttfb:delay=1",
        {"delay": Param(seconds, 1.0, "delay, real seconds")},
        matrix=("ttfb:delay=0.05",),
    ),
    FaultDef(
        "keepalive", "send the provider's keepalive during long waits",
        Phase.TIMING, Outcome.SAME_EVENTS, http.keepalive, None, "keepalive:every=0.01",
        {
            "every": Param(interval, 1.0, "keepalive interval, real seconds (>= 0.01)"),
            "kind": Param(choice("auto", "comment", "ping"), "auto", "SSE comment or ping"),
            "text": Param(nonempty, "keepalive", "text of the SSE comment"),
            "until": Param(seconds, 300.0, "longest keepalive run during a hang, seconds"),
        },
        ws_unsupported=_HTTP_BODIES,
        # Keepalives only fill waits, and there are none at speed 0: give them one.
        matrix=("stall:for=0.05,events=middle+keepalive:every=0.01",),
    ),
    FaultDef(
        "jitter", "perturb the gaps between writes, never reordering bytes",
        Phase.TIMING, Outcome.SAME_EVENTS, http.jitter, None, "jitter:ms=20,seed=1",
        {
            "ms": Param(milliseconds, 20.0, "scale of the perturbation, milliseconds"),
            "dist": Param(choice("uniform", "lognormal"), "uniform", "distribution"),
        },
        seeded=True,
        ws_unsupported=_HTTP_BODIES,
        matrix=("jitter:ms=1,seed=1",),
    ),
    FaultDef(
        "throttle", "cap delivery at bps bytes per second",
        Phase.TIMING, Outcome.SAME_EVENTS, http.throttle, None, "throttle:bps=100",
        {"bps": Param(positive_count, None, "bytes per second")},
        required=("bps",),
        ws_unsupported=_HTTP_BODIES,
        matrix=("throttle:bps=200000",),
    ),
    FaultDef(
        "split", "re-split the bytes into more writes",
        Phase.TIMING, Outcome.SAME_EVENTS, http.split, ws.split, "split:bytes=4",
        {
            "bytes": Param(positive_count, None, "pieces of at most K bytes"),
            "at": Param(
                choice("utf8", "midline", "crlf", "random"), None, "where to split",
                not_on_websocket="a WebSocket message is split by bytes=K, not at=",
            ),
            "avg": Param(positive_count, 16, "at=random: mean piece size, bytes"),
            "gap": Param(seconds, 0.002, "pause between the pieces of a write, real seconds"),
            "event": Param(count, None, "WebSocket: only server message N"),
        },
        one_of=OneOf(("bytes", "at"), "bytes=K or at=utf8|midline|crlf|random"),
        seeded=True,
        resplits=True,
        matrix=tuple(
            f"split:{how},{_GAP}"
            for how in ("bytes=1", "bytes=7", "at=utf8", "at=midline", "at=crlf",
                        "at=random,avg=8,seed=1")
        ),
    ),
    FaultDef(
        "coalesce", "deliver the body in one write at the end, or once per window",
        Phase.TIMING, Outcome.SAME_EVENTS, http.coalesce, None, "coalesce",
        {"window": Param(seconds, None, "flush interval, real seconds")},
        ws_unsupported=_HTTP_BODIES,
        resplits=True,
        matrix=("coalesce", "coalesce:window=0.001"),
    ),
    FaultDef(
        "drop", "remove one event",
        Phase.EDIT, Outcome.ALTERED_EVENTS, http.drop, ws.drop, "drop:event=1",
        _EVENT, required=("event",),
    ),
    FaultDef(
        "duplicate", "send one event twice",
        Phase.EDIT, Outcome.ALTERED_EVENTS, http.duplicate, ws.duplicate, "duplicate:event=1",
        _EVENT, required=("event",),
    ),
    FaultDef(
        "reorder", "swap one event with the next",
        Phase.EDIT, Outcome.ALTERED_EVENTS, http.reorder, ws.reorder, "reorder:event=1",
        _EVENT, required=("event",),
    ),
    FaultDef(
        "corrupt", "cut the JSON payload of one event in half",
        Phase.EDIT, Outcome.ALTERED_EVENTS, http.corrupt, ws.corrupt, "corrupt:event=1",
        _EVENT, required=("event",),
    ),
    FaultDef(
        "error", "inject the provider's in-band error event at the position, then end",
        Phase.ENDING, Outcome.PROVIDER_ERROR, http.error, ws.error, "error",
        {
            "type": Param(nonempty, None, "error type (default: the provider's overload error)"),
            "message": Param(nonempty, None, "error message"),
        },
        positioned=True, matrix=("error:events=1",),
    ),
    FaultDef(
        "status", "replace the response with an HTTP error and the provider's error body",
        Phase.RESPONSE, Outcome.PROVIDER_ERROR, http.status, ws.refuse_upgrade,
        "status:code=529",
        {
            "code": Param(http_status, 500, "HTTP status"),
            "retry-after": Param(seconds, None, "retry-after header, seconds"),
            "message": Param(nonempty, None, "error message"),
        },
        matrix=("status:code=429,retry-after=0", "status:code=500", "status:code=overloaded"),
    ),
)  # fmt: skip

FAULTS: Mapping[str, FaultDef] = MappingProxyType({d.name: d for d in _DEFINITIONS})
"""Every fault by name, in the order of the catalogue in docs/reference/faults.md."""


def definitions() -> tuple[FaultDef, ...]:
    """Every fault definition, in the order of the catalogue in docs/reference/faults.md."""
    return _DEFINITIONS


def _valid_list() -> str:
    return ", ".join(sorted(FAULTS))


def definition(name: str) -> FaultDef:
    """The definition of fault ``name``; an unknown name is a one-line FaultSpecError."""
    found = FAULTS.get(name)
    if found is None:
        raise FaultSpecError(f"unknown fault {name!r}; valid faults: {_valid_list()}")
    return found


def outcome_of(name: str) -> Outcome:
    """What a client meets under fault ``name`` (raises FaultSpecError for an unknown name)."""
    return definition(name).outcome
