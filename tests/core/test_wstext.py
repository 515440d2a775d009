"""WebSocket sessions in the cassette text form: export then import is exact, mistakes are
one-line errors naming the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given

from replayproxy.core import codec
from replayproxy.core.model import Cassette
from replayproxy.core.textform import dumps
from replayproxy.core.textload import loads
from replayproxy.core.websocket import WebSocketSession
from replayproxy.errors import CassetteFormatError
from tests.cassette.builders import sse_interaction
from tests.websocket.builders import realtime_turns, sessions, ws_interaction


@given(sessions)
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
