"""mitmproxy WebSocket data -> the cassette's WebSocket model (used by the recorder addon).

mitmproxy reassembles fragmented messages and does not expose the frame sizes, so recorded
messages have no ``fragments``. A session that ended without a close frame is reported by
mitmproxy (through wsproto) as close code 1006, which no peer may send: that is recorded as
:attr:`~replayproxy._core.cassette.websocket.WsCloseKind.DROPPED`.
"""

from __future__ import annotations

from typing import Any

from replayproxy._core.cassette.websocket import (
    ABNORMAL_CLOSURE,
    WebSocketSession,
    WsClose,
    WsCloseKind,
    WsMessage,
)

__all__ = ["close_of", "message_of", "session_of"]


def message_of(message: Any, offset_ns: int) -> WsMessage | None:
    """A mitmproxy ``WebSocketMessage`` as recorded; ``None`` for one mitmproxy dropped (it
    never reached the other side)."""
    if message.dropped:
        return None
    return WsMessage(
        offset_ns, bool(message.from_client), bool(message.is_text), bytes(message.content)
    )


def close_of(data: Any, offset_ns: int) -> WsClose:
    """How a session ended, from mitmproxy's ``WebSocketData`` at ``websocket_end``."""
    code = data.close_code
    if code is None:
        return WsClose(offset_ns, WsCloseKind.OPEN)
    by_client = data.closed_by_client
    if code == ABNORMAL_CLOSURE:
        return WsClose(offset_ns, WsCloseKind.DROPPED, code, "", by_client)
    return WsClose(offset_ns, WsCloseKind.CLOSE, int(code), data.close_reason or "", by_client)


def session_of(messages: list[WsMessage], close: WsClose) -> WebSocketSession:
    return WebSocketSession(tuple(messages), close)
