"""What ``cassette show`` and ``events`` say about a WebSocket session: each message's name,
delay and rendering, and the one-line description of how the session ended."""

from __future__ import annotations

from dataclasses import replace

import pytest

from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.tools.inspect import interaction_row
from replayproxy._core.websocket.inspect import WsRow, end_text, message_rows, name_of
from replayproxy.testing import MS, ws_interaction


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b'{"type":"session.created","event_id":"e1"}', "session.created"),
        (b'{"setupComplete":{},"other":1}', "setupComplete"),  # Gemini Live: the first key
        (b'{"type":5,"serverContent":{}}', "type"),  # a non-string type: the first key
        (b'{"event_id":"e1","type":"x"}', "x"),  # the type wins wherever it is
        (b"{}", ""),
        (b'["type"]', ""),
        (b'"type"', ""),
        (b"not json", ""),
        (b"\xff\xfe{", ""),  # not UTF-8
        (b"", ""),
    ],
)
def test_name_of_a_message(data: bytes, name: str) -> None:
    """The JSON ``type`` if it is a string, else the first key of an object, else nothing."""
    assert name_of(WsMessage(0, False, True, data)) == name


@pytest.mark.parametrize(
    ("close", "text"),
    [
        (WsClose(9, WsCloseKind.OPEN, 1000, "x", True), "ws open"),
        (WsClose(9, WsCloseKind.CLOSE, 1000, "", True), "ws close 1000 by client"),
        (
            WsClose(9, WsCloseKind.CLOSE, 4001, "bye now", False),
            "ws close 4001 by server (bye now)",
        ),
        (WsClose(9, WsCloseKind.CLOSE, None, "", None), "ws close"),
        (WsClose(9, WsCloseKind.CLOSE, 1001, "", None), "ws close 1001"),
        # A dropped connection has no close frame: a code is not shown even if one is stored.
        (WsClose(9, WsCloseKind.DROPPED, 1006, "", False), "ws dropped by server"),
        (WsClose(9, WsCloseKind.DROPPED, None, "gone", None), "ws dropped (gone)"),
    ],
)
def test_end_text(close: WsClose, text: str) -> None:
    """Kind, the code of a close frame, who closed and the reason, each only when known."""
    assert end_text(WebSocketSession((), close)) == text


def msg(
    ms: int, from_client: bool, data: bytes, *, text: bool = True, frags: tuple[int, ...] = ()
) -> WsMessage:
    return WsMessage(ms * MS, from_client, text, data, frags)


def test_message_rows_give_the_delay_replay_reproduces() -> None:
    """A server message's delay counts from the client message it answers (or the 101 head),
    a client message's from the message before it; every field of every row is exact."""
    messages = [
        msg(6, False, b'{"type":"session.created"}'),
        msg(50, True, b'{"type":"session.update"}'),
        msg(60, False, b'{"type":"session.updated"}'),
        msg(75, False, b"\x00\x01\n", text=False, frags=(1, 2)),
        msg(200, True, b'{"setup":1}'),
        msg(210, True, b"again"),
        msg(300, False, b'{"type":"done"}'),
    ]
    rows = message_rows(ws_interaction(messages, head_ms=5))
    assert rows == [
        WsRow(0, "server", 6 * MS, 1 * MS, "text", 26, (), "session.created",
              '{"type":"session.created"}'),
        WsRow(1, "client", 50 * MS, 44 * MS, "text", 25, (), "session.update",
              '{"type":"session.update"}'),
        WsRow(2, "server", 60 * MS, 10 * MS, "text", 26, (), "session.updated",
              '{"type":"session.updated"}'),
        WsRow(3, "server", 75 * MS, 25 * MS, "binary", 3, (1, 2), "", "\\x00\\x01\\n"),
        WsRow(4, "client", 200 * MS, 125 * MS, "text", 11, (), "setup", '{"setup":1}'),
        WsRow(5, "client", 210 * MS, 10 * MS, "text", 5, (), "", "again"),
        WsRow(6, "server", 300 * MS, 90 * MS, "text", 15, (), "done", '{"type":"done"}'),
    ]  # fmt: skip


def test_message_rows_without_a_response_count_from_zero() -> None:
    """With no response head stored, the first server message's delay is its offset."""
    x = ws_interaction([msg(7, False, b"a"), msg(9, True, b"b")], head_ms=5)
    rows = message_rows(replace(x, response=None))
    assert [(r.after_ns, r.sender) for r in rows] == [(7 * MS, "server"), (2 * MS, "client")]


def test_message_rows_of_a_plain_interaction_are_empty() -> None:
    """An interaction without a WebSocket session has no message rows."""
    assert message_rows(replace(ws_interaction([msg(7, False, b"a")]), websocket=None)) == []


def test_show_row_of_a_websocket_session() -> None:
    """``cassette show`` counts messages as frames, their bytes, the latest time and the
    session's end."""
    x = ws_interaction(
        [msg(6, False, b"abc"), msg(40, True, b"hello")],
        WsClose(90 * MS, WsCloseKind.CLOSE, 1000, "done", True),
        head_ms=5,
    )
    row = interaction_row(3, replace(x, end=replace(x.end, message="kept?")))
    assert (row.index, row.status, row.frames, row.bytes) == (3, 101, 2, 8)
    assert (row.ttfb_ns, row.duration_ns) == (5 * MS, 90 * MS)
    assert (row.end, row.end_message) == ("ws close 1000 by client (done)", "")
    assert x.websocket is not None
    open_ = WebSocketSession(x.websocket.messages, WsClose(1, WsCloseKind.OPEN))
    late = replace(x, end=replace(x.end, offset_ns=1), websocket=open_)
    assert interaction_row(0, late).duration_ns == 40 * MS  # the last message


def test_a_client_message_first_counts_from_the_head() -> None:
    """A session the client opens: its first message's delay counts from the 101 head."""
    rows = message_rows(ws_interaction([msg(8, True, b"hi"), msg(9, False, b"yo")], head_ms=5))
    assert [(r.sender, r.after_ns) for r in rows] == [("client", 3 * MS), ("server", 1 * MS)]
