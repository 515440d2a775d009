"""What ``cassette show``, ``events`` and ``plot`` say about a WebSocket session (pure).

:func:`message_rows` lists the messages with their direction, offset, and the delay that
replay reproduces: for a server message, the time since the client message it answers (or the
``101`` head); for a client message, the time since the message before it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.cassette.texttokens import escape
from replayproxy._core.cassette.websocket import WebSocketSession, WsCloseKind, WsMessage

__all__ = ["WsRow", "end_text", "message_rows", "name_of"]


@dataclass(frozen=True, slots=True)
class WsRow:
    index: int
    sender: str
    """``client`` or ``server``."""
    offset_ns: int
    after_ns: int
    """Server: since the client message it answers (or the head); client: since the previous."""
    kind: str
    """``text`` or ``binary``."""
    size: int
    fragments: tuple[int, ...]
    name: str
    """The JSON ``type`` (OpenAI Realtime) or first key (Gemini Live); empty otherwise."""
    text: str


def name_of(message: WsMessage) -> str:
    """A short name for the message: its JSON ``type``, else its first JSON key."""
    try:
        doc = json.loads(message.data)
    except (ValueError, UnicodeDecodeError):
        return ""
    if isinstance(doc, dict):
        kind = doc.get("type")
        if isinstance(kind, str):
            return kind
        return next(iter(doc), "")
    return ""


def end_text(session: WebSocketSession) -> str:
    """``close 1000 by client``, ``dropped by server``, ``open``."""
    c = session.close
    if c.kind is WsCloseKind.OPEN:
        return "ws open"
    by = {True: " by client", False: " by server", None: ""}[c.by_client]
    code = f" {c.code}" if c.kind is WsCloseKind.CLOSE and c.code is not None else ""
    reason = f" ({c.reason})" if c.reason else ""
    return f"ws {c.kind.value}{code}{by}{reason}"


def message_rows(interaction: Interaction) -> list[WsRow]:
    """One row per message of the interaction's WebSocket session (``[]`` if it has none)."""
    session = interaction.websocket
    if session is None:
        return []
    anchor = interaction.response.head_offset_ns if interaction.response else 0
    previous = anchor
    rows = []
    for i, m in enumerate(session.messages):
        after = m.offset_ns - (previous if m.from_client else anchor)
        if m.from_client:
            anchor = m.offset_ns
        previous = m.offset_ns
        rows.append(
            WsRow(i, m.sender, m.offset_ns, after, "text" if m.text else "binary",
                  len(m.data), m.fragments, name_of(m), escape(m.data))
        )  # fmt: skip
    return rows
