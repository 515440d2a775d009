"""Faults on recorded WebSocket sessions: the same spec grammar, read in WebSocket terms.

Each fault is a pure function from
:class:`~replayproxy._core.cassette.websocket.WebSocketSession` to session, applied before the
session is cut into turns (so every replayed delay stays relative to the client message it
answers). Positions count **server messages**: ``events=N`` is "after the N-th server message"
(``time=S``: at S recorded seconds); ``event=N`` names server message N (0 = the first).
``frames=`` and ``bytes=`` have no meaning here and are refused.

============  =================================================================================
fault         on a WebSocket session
============  =================================================================================
close         at the position, a close frame with ``code=`` (and ``reason=``); without
              ``code=`` or with ``code=1006``, the TCP connection is dropped with no close
              frame (clients report 1006)
reset         at the position, drop the TCP connection with an RST (clients see 1006)
truncate      at the position, a normal close (1000)
hang          at the position, send nothing more and keep the socket open
linger        send every message, never close
error         at the position, the provider's in-band error event (OpenAI Realtime ``error``),
              then nothing more (the socket stays open: a ``response.done`` that never comes)
drop          remove server message ``event=N``
duplicate     send server message ``event=N`` twice
reorder       swap server messages ``event=N`` and ``N+1``
corrupt       cut the JSON payload of server message ``event=N`` in half
stall         at the position, pause ``for=`` real seconds, then continue
ttfb          delay the 101 upgrade response by ``delay=`` real seconds
split         send every server message (or ``event=N``) in continuation frames of at most
              ``bytes=K`` bytes: the WebSocket analogue of byte splits
status        refuse the upgrade: the provider's HTTP error response instead of the 101
============  =================================================================================

``keepalive``, ``jitter``, ``throttle`` and ``coalesce`` act on HTTP bodies and are refused
for WebSocket sessions with a one-line error. Default positions: ``error`` before the first
``response.done``; the other positioned faults halfway through the server messages.

The selectors select as for HTTP (:func:`replayproxy._core.faults.applies`): ``attempt=N``
acts on the N-th upgrade answered by the interaction in the session, so a client that
reconnects after a failed session gets the recording.

Each fault's WebSocket applier (or the reason it has none) is in its definition
(:mod:`replayproxy._core.faults.registry`); the appliers are in :mod:`.ws_appliers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.cassette.websocket import WebSocketSession
from replayproxy._core.faults import applies
from replayproxy._core.faults.position import Context, Step
from replayproxy._core.faults.registry import FAULTS, Phase
from replayproxy._core.faults.spec import FaultSpec, parse
from replayproxy._core.faults.ws_appliers import WsState, cut
from replayproxy._errors import FaultSpecError

__all__ = ["UNSUPPORTED", "plan", "scale"]

UNSUPPORTED: frozenset[str] = frozenset(n for n, d in FAULTS.items() if d.ws is None)
"""The faults that do not apply to a WebSocket session (derived from the registry)."""


def _refuse(ctx: Context, spec: FaultSpec) -> None:
    """Refuse a fault that has no WebSocket applier, or a parameter that has no meaning here."""
    definition = spec.definition
    if definition.ws is None:
        raise ctx.error(spec, definition.ws_unsupported)
    for key, param in definition.params.items():
        if param.not_on_websocket and spec.given(key):
            raise ctx.error(spec, param.not_on_websocket)


def scale(session: WebSocketSession, head_ns: int, speed: float) -> tuple[WebSocketSession, int]:
    """Every offset (and the head's) divided by ``speed``; 0 means no waiting at all."""

    def at(ns: int) -> int:
        return 0 if speed == 0 else round(ns / speed)

    msgs = tuple(replace(m, offset_ns=at(m.offset_ns)) for m in session.messages)
    close = replace(session.close, offset_ns=at(session.close.offset_ns))
    return WebSocketSession(msgs, close), at(head_ns)


def _stored(interaction: Interaction, index: int) -> list[FaultSpec]:
    out = []
    for text in interaction.faults:
        try:
            out.append(parse(text))
        except FaultSpecError as e:
            raise FaultSpecError(f"interaction {index} (WebSocket): stored fault: {e}") from None
    return out


def plan(
    interaction: Interaction,
    index: int,
    *,
    speed: float = 1.0,
    faults: Sequence[FaultSpec] = (),
    replay_count: int = 0,
) -> tuple[WebSocketSession, int] | None:
    """The session to replay for a recorded WebSocket interaction, faults applied (stored
    ones first) and offsets scaled by ``speed``, with the 101 head's offset; ``None`` when a
    ``RESPONSE`` fault (``status``) refuses the upgrade (the HTTP plan then serves the error
    response). Raises :class:`FaultSpecError` naming the interaction when a fault cannot
    apply. The phases are the HTTP planner's (:func:`replayproxy._core.faults.apply_all`)."""
    assert interaction.websocket is not None
    specs = [*_stored(interaction, index), *faults]
    chosen = [s for s in specs if applies(s, interaction, index, replay_count)]
    head_ns = interaction.response.head_offset_ns if interaction.response else 0
    ctx = Context(interaction, index)
    state = WsState(interaction.websocket, head_ns)
    cuts: dict[int, int] = {}  # spec index -> messages before the cut, for positioned TIMING
    for phase in Phase:
        if phase is Phase.EDIT:
            # The response stays a session (no RESPONSE fault refused it): refuse what cannot
            # apply to one, before anything is applied.
            for spec in chosen:
                _refuse(ctx, spec)
        if phase is Phase.TIMING:
            state = WsState(*scale(state.session, state.head_ns, speed))
        for i, spec in enumerate(chosen):
            definition = spec.definition
            if definition.phase is phase:
                if definition.ws is None:  # only a RESPONSE fault gets here unrefused
                    raise ctx.error(spec, definition.ws_unsupported)
                applied = definition.ws(state, Step(spec, ctx, replay_count, cuts.get(i, 0)))
                if applied is None:
                    return None  # the upgrade is refused
                state = applied
            elif phase is Phase.ENDING and definition.cut_before_speed:
                cuts[i] = cut(state, Step(spec, ctx))[0]
    return state.session, state.head_ns
