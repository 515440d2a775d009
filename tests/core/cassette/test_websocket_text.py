"""WebSocket sessions in the cassette text form: export then import is exact, mistakes are
one-line errors naming the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.cassette.textform import dumps
from replayproxy._core.cassette.textload import loads
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.cassette.websocket_text import session_lines
from replayproxy._errors import CassetteFormatError
from replayproxy.testing import MS, realtime_turns, ws_interaction
from replayproxy.testing.strategies import ws_sessions
from tests.cassette.samples import sse_interaction


@given(ws_sessions())
def test_any_session_round_trips_byte_identically(session: WebSocketSession) -> None:
    """loads(dumps(c)) == c for cassettes with any WebSocket session, so export + import
    gives back a byte-identical cassette file."""
    it = replace(ws_interaction(realtime_turns()), websocket=session, faults=("drop:event=1",))
    cassette = Cassette((sse_interaction(), it))
    assert loads(dumps(cassette)) == cassette
    assert codec.encode(loads(dumps(cassette))) == codec.encode(cassette)


def test_export_reads_like_the_conversation() -> None:
    """Each message is one line with its direction sigil, offset, kind and payload."""
    text = dumps(Cassette((ws_interaction(realtime_turns(deltas=1)),)))
    assert "  ws< +6ms" in text and 'text \'{"type": "session.created"' in text
    assert "  ws> +200ms" in text and "response.create" in text
    assert "  ws-end close +" in text and ' 1000 client ""' in text


GOOD = """replayproxy-cassette-text 1
interaction 0
  request GET wss://x/v1/realtime HTTP/1.1
  response 101 'Switching Protocols' HTTP/1.1 +5ms
  end complete +99ms
  ws< +6ms text '{"type":"hello"}' frames 3,13
  ws> +9ms binary base64:AAE=
  ws-end dropped +20ms 1006 server ''
"""


def test_hand_written_session_is_read() -> None:
    """A hand-written session (fragments, binary, a dropped end) is read as written."""
    (it,) = loads(GOOD).interactions
    assert it.websocket is not None
    first, second = it.websocket.messages
    assert (first.from_client, first.fragments, second.data) == (False, (3, 13), b"\x00\x01")
    assert it.websocket.close.kind.value == "dropped" and it.websocket.close.code == 1006


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("frames 3,13", "frames 3,3"), "do not add up"),
        (("text '{", "texty '{"), "text or binary"),
        (("  ws-end dropped +20ms 1006 server ''\n", ""), "need a `ws-end` line"),
        (("1006 server", "1006 nobody"), "client, server or unknown"),
        (("ws-end dropped", "ws-end gone"), "is not one of"),
    ],
)
def test_mistakes_are_one_line_errors(change: tuple[str, str], message: str) -> None:
    """Each mistake names its line and what is wrong, in one line."""
    with pytest.raises(CassetteFormatError, match=message) as err:
        loads(GOOD.replace(*change))
    assert "line " in str(err.value) and "\n" not in str(err.value)


def test_ws_lines_after_a_fault_are_refused() -> None:
    """ws lines belong before the fault lines."""
    text = GOOD.replace("  end complete +99ms\n", "  end complete +99ms\n  fault hang\n")
    with pytest.raises(CassetteFormatError, match="before faults"):
        loads(text)


def test_session_lines_exact() -> None:
    """Each message: sigil, offset padded to 11, kind, quoted bytes, fragment sizes if any;
    then the end: kind, offset, code (or -), closer (or unknown), quoted reason."""
    session = WebSocketSession(
        (
            WsMessage(6 * MS, False, True, b'{"type":"hello"}', (3, 13)),
            WsMessage(9 * MS, True, False, bytes(range(16))),
            WsMessage(12_500_000, True, True, b"it's"),
        ),
        WsClose(20 * MS, WsCloseKind.DROPPED, None, "gone 'now'", None),
    )
    assert session_lines(session) == [
        '  ws< +6ms        text \'{"type":"hello"}\' frames 3,13',
        "  ws> +9ms        binary base64:AAECAwQFBgcICQoLDA0ODw==",
        '  ws> +12.5ms     text "it\'s"',
        "  ws-end dropped +20ms - unknown \"gone 'now'\"",
    ]
    closed = WebSocketSession((), WsClose(-MS, WsCloseKind.CLOSE, 1000, "", False))
    assert session_lines(closed) == ['  ws-end close -1ms 1000 server ""']


CLOSE = WsCloseKind.CLOSE


@pytest.mark.parametrize(
    ("line", "close"),
    [
        ("ws-end close +20ms - unknown 'bye'", WsClose(20 * MS, CLOSE, None, "bye", None)),
        ("ws-end close +1.5ms 4000 client ''", WsClose(1_500_000, CLOSE, 4000, "", True)),
        ("ws-end open +0ms 0 server base64:w6k=", WsClose(0, WsCloseKind.OPEN, 0, "é", False)),
    ],
)
def test_ws_end_lines_are_read_exactly(line: str, close: WsClose) -> None:
    """Kind, offset, code (- for none), closer (unknown for None) and reason as written."""
    (it,) = loads(GOOD.replace("ws-end dropped +20ms 1006 server ''", line)).interactions
    assert it.websocket is not None and it.websocket.close == close


def test_message_lines_are_read_exactly() -> None:
    """Direction from the sigil, kind, bytes and fragment sizes as written."""
    text = GOOD.replace("frames 3,13", "frames 0,16").replace("binary base64:AAE=", "text ''")
    (it,) = loads(text).interactions
    assert it.websocket is not None
    assert it.websocket.messages == (
        WsMessage(6 * MS, False, True, b'{"type":"hello"}', (0, 16)),
        WsMessage(9 * MS, True, True, b""),
    )


END = "ws-end dropped +20ms 1006 server ''"
SERVER = 'ws< +6ms text \'{"type":"hello"}\' frames 3,13'
END_USAGE = "expected `ws-end KIND +OFFSET CODE|- client|server|unknown 'REASON'`"


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        (END, "ws-end dropped +20ms 1006 server", f"line 8: {END_USAGE}"),
        (END, END + " more", f"line 8: {END_USAGE}"),
        (END, "ws-end gone +20ms 1006 server ''",
         "line 8: ws-end kind 'gone' is not one of: close, dropped, open"),
        (END, "ws-end 'close' +20ms 1006 server ''",
         "line 8: ws-end kind b'close' is not one of: close, dropped, open"),
        (END, "ws-end dropped +20 1006 server ''",
         "line 8: bad time '+20' (expected e.g. +12.5ms, +2s, -300us)"),
        (END, "ws-end dropped +20ms x1 server ''",
         "line 8: ws-end code must be a number or -, got 'x1'"),
        (END, "ws-end dropped +20ms '1006' server ''",
         "line 8: ws-end code must be a number or -, got b'1006'"),
        (END, "ws-end dropped +20ms \u0661\u0660 server ''",
         "line 8: ws-end code must be a number or -, got '\u0661\u0660'"),
        (END, "ws-end dropped +20ms 1006 nobody ''",
         "line 8: ws-end closer must be client, server or unknown, got 'nobody'"),
        (END, "ws-end dropped +20ms 1006 'server' ''",
         "line 8: ws-end closer must be client, server or unknown, got b'server'"),
        (END, "ws-end dropped +20ms 1006 server bye", "line 8: ws-end reason must be quoted"),
        (END, "ws-end dropped +20ms 1006 server '\\xff'",
         "line 8: ws-end reason is not valid UTF-8"),
        (SERVER, "ws< +6ms text",
         "line 6: expected `ws< +OFFSET text|binary 'BYTES' [frames N,N,...]`"),
        (SERVER, SERVER + " 1",
         "line 6: expected `ws< +OFFSET text|binary 'BYTES' [frames N,N,...]`"),
        ("ws> +9ms binary base64:AAE=", "ws> +9ms binary",
         "line 7: expected `ws> +OFFSET text|binary 'BYTES' [frames N,N,...]`"),
        (SERVER, SERVER.replace("text", "texty"),
         "line 6: message kind must be text or binary, got 'texty'"),
        (SERVER, SERVER.replace("text", "'text'"),
         "line 6: message kind must be text or binary, got b'text'"),
        (SERVER, "ws< +6ms text hello", "line 6: message bytes must be quoted or base64:"),
        (SERVER, SERVER.replace("frames", "frame"),
         "line 6: expected `frames N,N,...` after the message bytes"),
        (SERVER, SERVER.replace("3,13", "'3,13'"),
         "line 6: expected `frames N,N,...` after the message bytes"),
        (SERVER, SERVER.replace("3,13", "3,x"), "line 6: frames must be sizes like 3,4, got '3,x'"),
        (SERVER, SERVER.replace("3,13", "3,12"),
         "line 6: frames 3,12 do not add up to the 16 message bytes"),
        (SERVER, SERVER.replace("3,13", "17,-1"),
         "line 6: frames 17,-1 do not add up to the 16 message bytes"),
        (SERVER, SERVER.replace("+6ms", "6ms"),
         "line 6: bad time '6ms' (expected e.g. +12.5ms, +2s, -300us)"),
    ],
)  # fmt: skip
def test_each_malformed_ws_line_is_an_exact_error(old: str, new: str, error: str) -> None:
    """Each way a ws line can be wrong: the line number and what was expected, exactly."""
    assert old in GOOD
    with pytest.raises(CassetteFormatError) as err:
        loads(GOOD.replace(old, new))
    assert err.value.reason == error


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (GOOD.replace("  end complete +99ms\n", "") + "  end complete +99ms\n", 5),  # before end
        (GOOD + "  ws> +30ms text 'late'\n", 9),  # after ws-end
        (GOOD.replace("  ws-end", "  fault hang\n  ws-end"), 9),  # after a fault
    ],
)
def test_ws_lines_out_of_place_are_refused(text: str, line: int) -> None:
    """ws lines come after the end line, before faults, and ws-end is the last of them."""
    with pytest.raises(CassetteFormatError) as err:
        loads(text)
    key = text.splitlines()[line - 1].split()[0]
    assert err.value.reason == (
        f"line {line}: {key} lines come after the end line, before faults, ws-end last"
    )
