"""Faults on recorded WebSocket sessions: the same spec grammar, read in WebSocket terms.

Each fault is a pure function from :class:`~replayproxy.core.websocket.model.WebSocketSession` to
session, applied before the session is cut into turns (so every replayed delay stays relative
to the client message it answers). Positions count **server messages**: ``events=N`` is "after
the N-th server message" (``time=S``: at S recorded seconds); ``event=N`` names server message
N (0 = the first). ``frames=`` and ``bytes=`` have no meaning here and are refused.

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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from replayproxy.core.cassette.model import Interaction
from replayproxy.core.faults import applies
from replayproxy.core.faults.position import Context
from replayproxy.core.faults.spec import FaultSpec, parse
from replayproxy.core.websocket.model import (
    ABNORMAL_CLOSURE,
    WebSocketSession,
    WsClose,
    WsCloseKind,
    WsMessage,
)
from replayproxy.errors import FaultSpecError

__all__ = ["UNSUPPORTED", "apply_after_speed", "apply_before_speed", "plan", "scale"]

_NS = 1_000_000_000
UNSUPPORTED = frozenset({"keepalive", "jitter", "throttle", "coalesce"})
_EDITS = ("drop", "duplicate", "reorder", "corrupt")
_ENDINGS = ("close", "reset", "truncate", "hang", "linger", "error")


def _server_indexes(session: WebSocketSession) -> list[int]:
    return [i for i, m in enumerate(session.messages) if not m.from_client]


def _cut(session: WebSocketSession, head_ns: int, ctx: Context, spec: FaultSpec) -> tuple[int, int]:
    """``(k, at_ns)``: keep ``messages[:k]``; the cut happens at ``at_ns``."""
    msgs = session.messages
    idx = _server_indexes(session)
    position = spec.position()
    if position is None:
        n = len(idx) // 2
        if spec.name == "error":
            done = [j for j, i in enumerate(idx) if _event_type(msgs[i]) == "response.done"]
            if not done:
                raise ctx.error(spec, "no response.done to stop before; give events=N")
            n = done[0]
        position = ("events", float(n))
    kind, value = position
    if kind == "time":
        at = round(value * _NS)
        k = sum(1 for m in msgs if m.offset_ns <= at)
        return k, max(at, head_ns)
    if kind != "events":
        raise ctx.error(spec, f"{kind}= does not apply to a WebSocket session; give events=N")
    n = int(value)
    if n > len(idx):
        raise ctx.error(spec, f"events={n} is past the last server message ({len(idx)})")
    if n == 0:
        k = idx[0] if idx else len(msgs)
        return k, head_ns
    k = idx[n - 1] + 1
    return k, msgs[k - 1].offset_ns


def _event_type(message: WsMessage) -> str | None:
    if not message.text:
        return None
    try:
        doc = json.loads(message.data)
    except ValueError:
        return None
    kind = doc.get("type") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else None


def _error_event(spec: FaultSpec) -> bytes:
    """OpenAI Realtime's in-band ``error`` server event."""
    event = {
        "type": "error",
        "event_id": "event_replayproxy_error",
        "error": {
            "type": spec.string("type") or "server_error",
            "code": None,
            "message": spec.string("message")
            or "The server had an error while processing your request. (injected by replayproxy)",
            "param": None,
            "event_id": None,
        },
    }
    return json.dumps(event, separators=(",", ":")).encode()


def _ending(
    session: WebSocketSession, head_ns: int, ctx: Context, spec: FaultSpec
) -> WebSocketSession:
    if spec.name == "linger":
        return replace(session, close=WsClose(session.close.offset_ns, WsCloseKind.OPEN))
    k, at = _cut(session, head_ns, ctx, spec)
    kept = session.messages[:k]
    if spec.name == "error":
        kept = (*kept, WsMessage(at, False, True, _error_event(spec)))
        return WebSocketSession(kept, WsClose(at, WsCloseKind.OPEN))
    if spec.name == "hang":
        close = WsClose(at, WsCloseKind.OPEN)
    elif spec.name == "truncate":
        close = WsClose(at, WsCloseKind.CLOSE, 1000, "", False)
    elif spec.name == "reset" or spec.value("code") in (None, ABNORMAL_CLOSURE):
        close = WsClose(at, WsCloseKind.DROPPED, 1006, "", False)
    else:
        code = spec.integer("code")
        close = WsClose(at, WsCloseKind.CLOSE, code, spec.string("reason") or "", False)
    return WebSocketSession(kept, close)


def _edit(session: WebSocketSession, ctx: Context, spec: FaultSpec) -> WebSocketSession:
    idx = _server_indexes(session)
    n = spec.integer("event")
    last = len(idx) - (2 if spec.name == "reorder" else 1)
    if n > last:
        raise ctx.error(
            spec,
            f"server message {n} does not exist (the session has {len(idx)}, 0-{len(idx) - 1})",
        )
    msgs = list(session.messages)
    i = idx[n]
    if spec.name == "drop":
        del msgs[i]
    elif spec.name == "duplicate":
        msgs.insert(i + 1, msgs[i])
    elif spec.name == "reorder":
        j = idx[n + 1]
        a, b = msgs[i], msgs[j]
        msgs[i], msgs[j] = replace(b, offset_ns=a.offset_ns), replace(a, offset_ns=b.offset_ns)
    else:
        m = msgs[i]
        if _event_type(m) is None:
            raise ctx.error(spec, f"server message {n} has no JSON payload to cut")
        msgs[i] = replace(m, data=m.data[: len(m.data) // 2], fragments=())
    return replace(session, messages=tuple(msgs))


def _refuse(ctx: Context, spec: FaultSpec) -> None:
    if spec.name in UNSUPPORTED:
        raise ctx.error(spec, "acts on HTTP bodies; it does not apply to a WebSocket session")
    if spec.name == "split" and spec.given("at"):
        raise ctx.error(spec, "a WebSocket message is split by bytes=K, not at=")


def apply_before_speed(
    session: WebSocketSession, head_ns: int, specs: Sequence[FaultSpec], ctx: Context
) -> tuple[WebSocketSession, list[tuple[int, float]]]:
    """Edits, then endings, on the recorded timeline. Returns the session and the stalls to
    apply after speed scaling, as ``(cut offset_ns on the recorded timeline, seconds)``."""
    for spec in specs:
        _refuse(ctx, spec)
    for spec in specs:
        if spec.name in _EDITS:
            session = _edit(session, ctx, spec)
    stalls: list[tuple[int, float]] = []
    for spec in specs:
        if spec.name == "stall":
            k, _ = _cut(session, head_ns, ctx, spec)
            stalls.append((k, spec.number("for")))
        elif spec.name in _ENDINGS:
            session = _ending(session, head_ns, ctx, spec)
    return session, stalls


def scale(session: WebSocketSession, head_ns: int, speed: float) -> tuple[WebSocketSession, int]:
    """Every offset (and the head's) divided by ``speed``; 0 means no waiting at all."""

    def at(ns: int) -> int:
        return 0 if speed == 0 else round(ns / speed)

    msgs = tuple(replace(m, offset_ns=at(m.offset_ns)) for m in session.messages)
    close = replace(session.close, offset_ns=at(session.close.offset_ns))
    return WebSocketSession(msgs, close), at(head_ns)


def apply_after_speed(
    session: WebSocketSession,
    head_ns: int,
    specs: Sequence[FaultSpec],
    stalls: Sequence[tuple[int, float]],
) -> tuple[WebSocketSession, int]:
    """Real-time faults on the scaled session: stalls (from :func:`apply_before_speed`),
    ``ttfb`` and ``split``. Returns the session and the head offset."""
    msgs = list(session.messages)
    close = session.close
    for k, seconds in stalls:
        # Everything from the cut on moves later together, so only the turn holding the cut
        # waits longer; later turns keep their delays relative to their client message.
        shift = round(seconds * _NS)
        msgs = [
            replace(m, offset_ns=m.offset_ns + shift) if i >= k else m for i, m in enumerate(msgs)
        ]
        close = replace(close, offset_ns=close.offset_ns + shift)
    for spec in specs:
        if spec.name == "ttfb":
            # The whole session moves with the head: every delay after it stays as recorded.
            shift = round(spec.number("delay") * _NS)
            head_ns += shift
            msgs = [replace(m, offset_ns=m.offset_ns + shift) for m in msgs]
            close = replace(close, offset_ns=close.offset_ns + shift)
        elif spec.name == "split":
            size = spec.integer("bytes")
            only = spec.value("event")
            server = 0
            for i, m in enumerate(msgs):
                if m.from_client:
                    continue
                if only is None or only == server:
                    sizes = [size] * (len(m.data) // size)
                    if len(m.data) % size or not sizes:
                        sizes.append(len(m.data) % size)
                    msgs[i] = replace(m, fragments=tuple(sizes))
                server += 1
    return WebSocketSession(tuple(msgs), close), head_ns


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
    ``status`` fault refuses the upgrade (the HTTP plan then serves the error response).
    Raises :class:`FaultSpecError` naming the interaction when a fault cannot apply."""
    assert interaction.websocket is not None
    specs = [*_stored(interaction, index), *faults]
    chosen = [s for s in specs if applies(s, interaction, index, replay_count)]
    if any(s.name == "status" for s in chosen):
        return None
    head_ns = interaction.response.head_offset_ns if interaction.response else 0
    ctx = Context(interaction, index)
    session, stalls = apply_before_speed(interaction.websocket, head_ns, chosen, ctx)
    session, head_ns = scale(session, head_ns, speed)
    return apply_after_speed(session, head_ns, chosen, stalls)
