"""A cell's faults for one cassette: symbolic positions and statuses resolved per interaction.

:func:`resolve` turns a :class:`~replayproxy._core.matrix.cells.Cell` into the concrete fault
specs a replay runs it with: one per HTTP event stream of the cassette (``interaction=I``
added), each symbol replaced with that stream's value. Every spec it returns has been parsed
and planned on its interaction (the planner is pure), so a cell that cannot act on a stream is
left out for it, and a cell no stream can take is skipped, with the reasons, instead of
failing at replay time.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from replayproxy._core import providers
from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._core.faults import parse, plan
from replayproxy._core.faults.provider import terminal_index
from replayproxy._core.matrix.cells import SYMBOLS, Cell, checkable, parts
from replayproxy._core.wire.events import EventSpan, NotAStreamError, event_spans
from replayproxy._errors import FaultSpecError

__all__ = ["OVERLOADED", "Resolved", "overloaded_status", "resolve"]

OVERLOADED: Mapping[providers.ErrorShape, int] = MappingProxyType(
    {providers.ErrorShape.ANTHROPIC: 529}
)
"""The overloaded status of the APIs whose error shape has its own; the others send 503."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """The concrete fault specs to replay a cell with, or why it cannot apply to the cassette."""

    faults: tuple[str, ...]
    skipped: str | None = None


@dataclass(frozen=True, slots=True)
class _Stream:
    """What the symbols of one interaction resolve to."""

    index: int
    interaction: Interaction
    spans: tuple[EventSpan, ...]
    terminal: int | None

    @property
    def end(self) -> int:
        """Events before the terminal one (all of them when it has none)."""
        return len(self.spans) if self.terminal is None else self.terminal


def _last_cut(s: _Stream) -> int:
    return len(s.spans) - 1 if s.terminal is None else s.terminal


def _last_edit(s: _Stream) -> int:
    return len(s.spans) - 1 if s.terminal is None else s.terminal - 1


_LIMITS = {"events": _last_cut, "event": _last_edit}
"""The last position (``events=``) and event (``event=``) before the terminal event."""


def overloaded_status(interaction: Interaction) -> int:
    """The HTTP status the API of ``interaction`` answers "overloaded" with."""
    found = providers.detect(interaction.request)
    if found is None:
        return 503
    return OVERLOADED.get(providers.definition(found).error_shape, 503)


def _stream(interaction: Interaction, index: int) -> _Stream | str:
    """The interaction as an event stream, or why it is none."""
    resp = interaction.response
    if interaction.websocket is not None:
        return "a WebSocket session"
    if resp is None:
        return "no response"
    try:
        spans = event_spans(resp.body, resp.header("content-type"))
    except NotAStreamError as e:
        return f"not an event stream ({e})"
    if not spans:
        return "an event stream with no events"
    return _Stream(index, interaction, tuple(spans), terminal_index(resp.body, spans))


def _value(key: str, value: str, s: _Stream) -> str:
    """The concrete value of a symbol on ``s`` (raises ValueError with the reason)."""
    if value == "middle":
        return str(len(s.spans) // 2)
    if value == "before-terminal":
        if s.terminal is None:
            raise ValueError("no terminal event")
        return str(s.terminal)
    if value == "content":
        if s.end < 2:
            raise ValueError(f"no content event ({len(s.spans)} events)")
        return str(s.end // 2)  # the middle of 1 .. end-1: not the first, not the terminal
    return str(overloaded_status(s.interaction))


def _concrete(part: str, s: _Stream) -> str:
    """``part`` with its symbols resolved on ``s`` and ``interaction=I`` added."""
    name, _, rest = part.partition(":")
    items = []
    given = False
    for item in rest.split(",") if rest.strip() else ():
        key, eq, value = (x.strip() for x in item.partition("="))
        if eq and value in SYMBOLS.get(key, ()):
            value = _value(key, value, s)
        if key in _LIMITS and int(value) > _LIMITS[key](s):
            # Past the terminal event a cut or an edit acts on the finished stream, not
            # on the answer: the cell would not produce its outcome there.
            raise ValueError(f"{key}={value} is not before the terminal event")
        given = given or key == "interaction"
        items.append(f"{key}={value}")
    if not given:
        items.append(f"interaction={s.index}")
    return f"{name.strip()}:{','.join(items)}"


def _selected(part: str, s: _Stream) -> bool:
    """Whether the selectors the user gave (``interaction=``, ``path=``) pick ``s``."""
    spec = parse(checkable(part))
    wanted = spec.value("interaction")
    glob = spec.string("path")
    if wanted is not None and wanted != s.index:
        return False
    return glob is None or fnmatch.fnmatchcase(s.interaction.request.path, glob)


def _on(cell: Cell, s: _Stream) -> tuple[str, ...] | str:
    """The cell's concrete specs on ``s``, or why it cannot act on it."""
    chosen = [p for p in parts(cell.spec) if _selected(p, s)]
    if not chosen:
        return "not selected by the spec's interaction= or path="
    try:
        specs = tuple(_concrete(p, s) for p in chosen)
    except ValueError as e:
        return str(e)
    try:
        plan(s.interaction, s.index, speed=0, faults=[parse(x) for x in specs])
    except FaultSpecError as e:
        return str(e).partition(": fault ")[2] or str(e)
    return specs


def resolve(cell: Cell, cassette: Cassette) -> Resolved:
    """The concrete faults that run ``cell`` on ``cassette``: for every HTTP event stream the
    cell can act on, its specs with symbols resolved and ``interaction=I``; skipped with the
    reasons when no stream can take it."""
    faults: list[str] = []
    reasons: dict[str, list[int]] = {}
    streams = 0
    for index, interaction in enumerate(cassette.interactions):
        s = _stream(interaction, index)
        if isinstance(s, str):
            continue
        streams += 1
        found = _on(cell, s)
        if isinstance(found, str):
            reasons.setdefault(found, []).append(index)
        else:
            faults.extend(found)
    if faults:
        return Resolved(tuple(faults))
    if not streams:
        return Resolved((), "no HTTP event stream in the cassette")
    why = "; ".join(
        f"interaction{'s' if len(ix) > 1 else ''} {', '.join(map(str, ix))}: {reason}"
        for reason, ix in reasons.items()
    )
    return Resolved((), f"no event stream can take {cell.spec}: {why}")
