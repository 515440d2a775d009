"""Builders for recorded WebSocket sessions in tests: messages, upgrades, a Realtime conversation.

Like :mod:`replayproxy.testing._builders`: defaults give a valid interaction (a ``101`` upgrade
to OpenAI's Realtime API carrying a :class:`WebSocketSession`), times are given in
milliseconds, and every field can be overridden by keyword.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request, Response
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy.testing._builders import MS, ns

__all__ = [
    "REALTIME_URL",
    "UPGRADE_HEADERS",
    "realtime_turns",
    "ws_interaction",
    "ws_text",
]

REALTIME_URL = "wss://api.openai.com/v1/realtime?model=gpt-realtime"
UPGRADE_HEADERS = (
    (b"upgrade", b"websocket"),
    (b"connection", b"Upgrade"),
    (b"sec-websocket-accept", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),  # RFC 6455 §1.3's example
)


def ws_text(offset_ms: float, from_client: bool, event: dict[str, Any]) -> WsMessage:
    """A text message holding ``event`` as JSON, sent ``offset_ms`` after the request."""
    return WsMessage(ns(offset_ms), from_client, True, json.dumps(event).encode())


def ws_interaction(
    messages: Iterable[WsMessage] = (),
    close: WsClose | None = None,
    *,
    url: str = REALTIME_URL,
    head_ms: float = 5,
    faults: tuple[str, ...] = (),
) -> Interaction:
    """A recorded upgrade to ``url`` carrying ``messages``; by default closed cleanly (1000)
    by the client 1 ms after the last message (or the head)."""
    msgs = tuple(messages)
    last = msgs[-1].offset_ns if msgs else ns(head_ms)
    end = close or WsClose(last + MS, WsCloseKind.CLOSE, 1000, "", True)
    req = Request(
        "GET",
        url,
        headers=((b"upgrade", b"websocket"), (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ==")),
    )
    resp = Response(101, "Switching Protocols", headers=UPGRADE_HEADERS, head_offset_ns=ns(head_ms))
    return Interaction(
        req,
        resp,
        Ending(EndKind.COMPLETE, end.offset_ns),
        faults,
        websocket=WebSocketSession(msgs, end),
    )


def realtime_turns(*, ttfb_ms: float = 100, gap_ms: float = 20, deltas: int = 4) -> list[WsMessage]:
    """A Realtime conversation: session.created; session.update -> session.updated;
    response.create -> response.created, ``deltas`` text deltas ``gap_ms`` apart, response.done.
    """
    out = [
        ws_text(6, False, {"type": "session.created", "event_id": "e1"}),
        ws_text(50, True, {"type": "session.update", "event_id": "c1", "session": {"x": 1}}),
        ws_text(60, False, {"type": "session.updated", "event_id": "e2"}),
        ws_text(200, True, {"type": "response.create", "event_id": "c2"}),
    ]
    t = 200 + ttfb_ms
    created = {"type": "response.created", "event_id": "e3", "response": {"id": "r1"}}
    out.append(ws_text(t, False, created))
    for i in range(deltas):
        t += gap_ms
        delta = {"type": "response.output_text.delta", "event_id": f"d{i}", "response_id": "r1"}
        out.append(ws_text(t, False, {**delta, "item_id": "i1", "delta": f"w{i} "}))
    t += gap_ms
    done = {"type": "response.done", "event_id": "e4"}
    out.append(ws_text(t, False, {**done, "response": {"id": "r1", "status": "completed"}}))
    return out
