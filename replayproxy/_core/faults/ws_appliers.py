"""How each fault acts on a recorded WebSocket session: one function per fault.

Every applier has the signature ``(state, step) -> state`` (:data:`WsApplier`), where
:class:`WsState` is the session and the 101 head's offset, and is named in the fault's
definition (:mod:`replayproxy._core.faults.registry`); the planner
(:func:`replayproxy._core.faults.websocket.plan`) calls them phase by phase. An applier that
returns ``None`` refuses the upgrade (``status``): the HTTP plan then serves the response.
Positions count **server messages** (see :mod:`replayproxy._core.faults.websocket`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from replayproxy._core.cassette.websocket import (
    ABNORMAL_CLOSURE,
    WebSocketSession,
    WsClose,
    WsCloseKind,
    WsMessage,
)
from replayproxy._core.faults.position import Step

__all__ = [
    "WsApplier",
    "WsState",
    "close",
    "corrupt",
    "cut",
    "drop",
    "duplicate",
    "error",
    "hang",
    "linger",
    "refuse_upgrade",
    "reorder",
    "reset",
    "split",
    "stall",
    "truncate",
    "ttfb",
]

_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class WsState:
    """A WebSocket session being planned and the offset of its 101 head."""

    session: WebSocketSession
    head_ns: int


WsApplier = Callable[[WsState, Step], WsState | None]


def _server_indexes(session: WebSocketSession) -> list[int]:
    return [i for i, m in enumerate(session.messages) if not m.from_client]


def cut(state: WsState, step: Step, default: int | None = None) -> tuple[int, int]:
    """``(k, at_ns)``: keep ``messages[:k]``; the cut happens at ``at_ns``. Without a position:
    after server message ``default``, or halfway through the server messages."""
    msgs = state.session.messages
    idx = _server_indexes(state.session)
    position = step.spec.position()
    if position is None:
        n = len(idx) // 2 if default is None else default
        position = ("events", float(n))
    kind, value = position
    if kind == "time":
        at = round(value * _NS)
        k = sum(1 for m in msgs if m.offset_ns <= at)
        return k, max(at, state.head_ns)
    if kind != "events":
        raise step.error(f"{kind}= does not apply to a WebSocket session; give events=N")
    n = int(value)
    if n > len(idx):
        raise step.error(f"events={n} is past the last server message ({len(idx)})")
    if n == 0:
        k = idx[0] if idx else len(msgs)
        return k, state.head_ns
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


def _error_event(step: Step) -> bytes:
    """OpenAI Realtime's in-band ``error`` server event."""
    spec = step.spec
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


# -- the response ----------------------------------------------------------------------------


def refuse_upgrade(state: WsState, step: Step) -> None:
    """No session at all: the upgrade is answered by the HTTP plan (the provider's error)."""
    return None


# -- edits: server message event=N -------------------------------------------------------------


def _message(state: WsState, step: Step, *, pair: bool = False) -> tuple[list[int], int]:
    idx = _server_indexes(state.session)
    n = step.spec.integer("event")
    if n > len(idx) - (2 if pair else 1):
        raise step.error(
            f"server message {n} does not exist (the session has {len(idx)}, 0-{len(idx) - 1})"
        )
    return idx, n


def _with_messages(state: WsState, msgs: list[WsMessage]) -> WsState:
    return replace(state, session=replace(state.session, messages=tuple(msgs)))


def drop(state: WsState, step: Step) -> WsState:
    idx, n = _message(state, step)
    msgs = list(state.session.messages)
    del msgs[idx[n]]
    return _with_messages(state, msgs)


def duplicate(state: WsState, step: Step) -> WsState:
    idx, n = _message(state, step)
    msgs = list(state.session.messages)
    msgs.insert(idx[n] + 1, msgs[idx[n]])
    return _with_messages(state, msgs)


def reorder(state: WsState, step: Step) -> WsState:
    idx, n = _message(state, step, pair=True)
    msgs = list(state.session.messages)
    i, j = idx[n], idx[n + 1]
    a, b = msgs[i], msgs[j]
    msgs[i], msgs[j] = replace(b, offset_ns=a.offset_ns), replace(a, offset_ns=b.offset_ns)
    return _with_messages(state, msgs)


def corrupt(state: WsState, step: Step) -> WsState:
    idx, n = _message(state, step)
    msgs = list(state.session.messages)
    m = msgs[idx[n]]
    if _event_type(m) is None:
        raise step.error(f"server message {n} has no JSON payload to cut")
    msgs[idx[n]] = replace(m, data=m.data[: len(m.data) // 2], fragments=())
    return _with_messages(state, msgs)


# -- endings ---------------------------------------------------------------------------------


def _end(state: WsState, close: WsClose, k: int) -> WsState:
    return replace(state, session=WebSocketSession(state.session.messages[:k], close))


def close(state: WsState, step: Step) -> WsState:
    k, at = cut(state, step)
    if step.spec.value("code") in (None, ABNORMAL_CLOSURE):
        return _end(state, WsClose(at, WsCloseKind.DROPPED, 1006, "", False), k)
    code, reason = step.spec.integer("code"), step.spec.string("reason") or ""
    return _end(state, WsClose(at, WsCloseKind.CLOSE, code, reason, False), k)


def reset(state: WsState, step: Step) -> WsState:
    k, at = cut(state, step)
    return _end(state, WsClose(at, WsCloseKind.DROPPED, 1006, "", False), k)


def truncate(state: WsState, step: Step) -> WsState:
    k, at = cut(state, step)
    return _end(state, WsClose(at, WsCloseKind.CLOSE, 1000, "", False), k)


def hang(state: WsState, step: Step) -> WsState:
    k, at = cut(state, step)
    return _end(state, WsClose(at, WsCloseKind.OPEN), k)


def linger(state: WsState, step: Step) -> WsState:
    close = WsClose(state.session.close.offset_ns, WsCloseKind.OPEN)
    return replace(state, session=replace(state.session, close=close))


def error(state: WsState, step: Step) -> WsState:
    default = None
    if step.spec.position() is None:
        msgs = state.session.messages
        idx = _server_indexes(state.session)
        done = [j for j, i in enumerate(idx) if _event_type(msgs[i]) == "response.done"]
        if not done:
            raise step.error("no response.done to stop before; give events=N")
        default = done[0]
    k, at = cut(state, step, default)
    kept = (*state.session.messages[:k], WsMessage(at, False, True, _error_event(step)))
    return replace(state, session=WebSocketSession(kept, WsClose(at, WsCloseKind.OPEN)))


# -- after --speed, in real seconds ----------------------------------------------------------


def _shift(state: WsState, shift: int, start: int, head: bool) -> WsState:
    """Messages from ``start`` on, the close (and the head) ``shift`` ns later."""
    session = state.session
    msgs = tuple(
        replace(m, offset_ns=m.offset_ns + shift) if i >= start else m
        for i, m in enumerate(session.messages)
    )
    close = replace(session.close, offset_ns=session.close.offset_ns + shift)
    return WsState(WebSocketSession(msgs, close), state.head_ns + shift if head else state.head_ns)


def stall(state: WsState, step: Step) -> WsState:
    # Everything from the cut on moves later together, so only the turn holding the cut
    # waits longer; later turns keep their delays relative to their client message.
    return _shift(state, round(step.spec.number("for") * _NS), step.cut, False)


def ttfb(state: WsState, step: Step) -> WsState:
    # The whole session moves with the head: every delay after it stays as recorded.
    return _shift(state, round(step.spec.number("delay") * _NS), 0, True)


def split(state: WsState, step: Step) -> WsState:
    size = step.spec.integer("bytes")
    only = step.spec.value("event")
    msgs = list(state.session.messages)
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
    return _with_messages(state, msgs)
