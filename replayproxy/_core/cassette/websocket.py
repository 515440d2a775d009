"""WebSocket sessions in a cassette: the data model and its record codec (pure).

A recorded WebSocket session is an ordinary interaction whose response head is the ``101
Switching Protocols`` upgrade, plus a :class:`WebSocketSession`: every message in the order it
crossed the proxy (direction, text or binary, payload bytes, arrival offset) and how the
session ended. Offsets are nanoseconds on the interaction's own timeline (``t = 0`` is the
moment the upgrade request was sent upstream), like response frames.

On disk the session is the optional ``websocket`` key of the interaction record (see
docs/reference/cassette-format.md, "WebSocket sessions"); :func:`encode_session` and
:func:`decode_session` map it to and from plain msgpack values.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ABNORMAL_CLOSURE",
    "MAX_CLOSE_CODE",
    "MIN_CLOSE_CODE",
    "WebSocketSession",
    "WsClose",
    "WsCloseKind",
    "WsFormatError",
    "WsMessage",
    "decode_session",
    "encode_session",
]

ABNORMAL_CLOSURE = 1006
"""RFC 6455 §7.4.1: reported when the connection ended without a close frame; never sent."""

MIN_CLOSE_CODE = 0
MAX_CLOSE_CODE = 2**16 - 1
"""The close codes a cassette may hold: what the 2 bytes of a close frame can carry (RFC 6455
§5.5.1); a larger one could not be replayed. Offsets are bounded like frame offsets
(``core/cassette/validate.py``: 0 to 2^53 ns)."""


class WsCloseKind(enum.StrEnum):
    """How a WebSocket session ended. The values are the on-disk strings."""

    CLOSE = "close"
    """A close frame was sent (``code``/``reason``, by the client or the server)."""
    DROPPED = "dropped"
    """The TCP connection ended without a close frame (clients report 1006)."""
    OPEN = "open"
    """Still open when the recording stopped: nothing is known about its end."""


@dataclass(frozen=True, slots=True)
class WsMessage:
    """One message as it crossed the proxy (fragments reassembled).

    ``fragments`` are the payload sizes of the frames it was sent in, when known (mitmproxy
    does not expose them: recordings have ``()``, meaning "one frame"); faults set them.
    """

    offset_ns: int
    from_client: bool
    text: bool
    data: bytes
    fragments: tuple[int, ...] = ()

    @property
    def sender(self) -> str:
        return "client" if self.from_client else "server"


@dataclass(frozen=True, slots=True)
class WsClose:
    """How and when the session ended; ``by_client`` is who closed (``None``: unknown)."""

    offset_ns: int
    kind: WsCloseKind
    code: int | None = None
    reason: str = ""
    by_client: bool | None = None


@dataclass(frozen=True, slots=True)
class WebSocketSession:
    """The messages of a WebSocket session in recorded order, and its end."""

    messages: tuple[WsMessage, ...] = ()
    close: WsClose = WsClose(0, WsCloseKind.OPEN)

    @property
    def client_messages(self) -> tuple[WsMessage, ...]:
        return tuple(m for m in self.messages if m.from_client)

    @property
    def server_messages(self) -> tuple[WsMessage, ...]:
        return tuple(m for m in self.messages if not m.from_client)


class WsFormatError(ValueError):
    """The ``websocket`` value of an interaction record is malformed (the codec adds where)."""


def encode_session(session: WebSocketSession) -> dict[str, Any]:
    """The msgpack value stored under an interaction record's ``websocket`` key."""
    messages = []
    for m in session.messages:
        item: list[Any] = [m.offset_ns, m.from_client, m.text, m.data]
        if m.fragments:
            item.append(list(m.fragments))
        messages.append(item)
    c = session.close
    return {
        "messages": messages,
        "close": {
            "kind": c.kind.value,
            "offset_ns": c.offset_ns,
            "code": c.code,
            "reason": c.reason,
            "by_client": c.by_client,
        },
    }


def _message(item: Any) -> WsMessage:
    if (
        not isinstance(item, list)
        or len(item) not in (4, 5)
        or not isinstance(item[0], int)
        or isinstance(item[0], bool)
        or not isinstance(item[1], bool)
        or not isinstance(item[2], bool)
        or not isinstance(item[3], bytes)
    ):
        raise WsFormatError(
            "websocket.messages holds an entry that is not [offset_ns, from_client, text, bytes]"
        )
    fragments: tuple[int, ...] = ()
    if len(item) == 5:
        sizes = item[4]
        if (
            not isinstance(sizes, list)
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes)
            or sum(sizes) != len(item[3])
        ):
            raise WsFormatError("websocket message fragments do not add up to its payload")
        fragments = tuple(sizes)
    return WsMessage(item[0], item[1], item[2], item[3], fragments)


def decode_session(value: Any) -> WebSocketSession:
    """The :class:`WebSocketSession` of a ``websocket`` value; raises :class:`WsFormatError`."""
    if not isinstance(value, Mapping):
        raise WsFormatError("interaction.websocket is not a map")
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise WsFormatError("websocket.messages is not a list")
    close = value.get("close")
    if not isinstance(close, Mapping):
        raise WsFormatError("websocket.close is not a map")
    try:
        kind = WsCloseKind(str(close.get("kind")))
    except ValueError:
        valid = ", ".join(k.value for k in WsCloseKind)
        raise WsFormatError(f"websocket.close.kind is not one of: {valid}") from None
    offset, code = close.get("offset_ns"), close.get("code")
    reason, by_client = close.get("reason", ""), close.get("by_client")
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise WsFormatError("websocket.close.offset_ns is not an integer")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        raise WsFormatError("websocket.close.code is neither an integer nor nil")
    if not isinstance(reason, str):
        raise WsFormatError("websocket.close.reason is not a string")
    if by_client is not None and not isinstance(by_client, bool):
        raise WsFormatError("websocket.close.by_client is neither a boolean nor nil")
    return WebSocketSession(
        tuple(_message(m) for m in messages), WsClose(offset, kind, code, reason, by_client)
    )
