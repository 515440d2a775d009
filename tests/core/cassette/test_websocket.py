"""WebSocket sessions in the cassette format: byte-exact round trips, clear errors, old files."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest
from hypothesis import given

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.cassette.websocket import (
    WebSocketSession,
    WsClose,
    WsCloseKind,
    decode_session,
    encode_session,
)
from replayproxy._errors import CassetteFormatError
from replayproxy.testing import realtime_turns, ws_interaction
from replayproxy.testing.strategies import ws_sessions
from tests.cassette.samples import sse_interaction


@given(ws_sessions())
def test_session_round_trips_exactly(session: WebSocketSession) -> None:
    """Any session survives encode -> msgpack -> decode unchanged (payload bytes exact)."""
    packed = msgpack.packb(encode_session(session), use_bin_type=True)
    assert decode_session(msgpack.unpackb(packed, raw=False)) == session


@given(ws_sessions())
def test_interaction_with_a_session_round_trips_through_the_codec(
    session: WebSocketSession,
) -> None:
    """An interaction carrying a session round-trips through the cassette codec."""
    it = replace(ws_interaction(realtime_turns()), websocket=session)
    cassette = Cassette((it, sse_interaction()))
    assert codec.decode(codec.encode(cassette)).cassette == cassette


def test_plain_interactions_have_no_websocket_key() -> None:
    """HTTP interactions are written exactly as before (no websocket key): old readers and
    old files are unaffected."""
    record = msgpack.unpackb(codec.encode_interaction(sse_interaction()), raw=False)
    assert "websocket" not in record
    assert (
        codec.decode(codec.encode(Cassette((sse_interaction(),))))
        .cassette.interactions[0]
        .websocket
        is None
    )


CLOSE = {"kind": "close", "offset_ns": 0, "code": 1000, "reason": "", "by_client": True}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "interaction.websocket is not a map"),
        ({"messages": {}, "close": {}}, "websocket.messages is not a list"),
        ({"messages": [[0, True, True, "str"]], "close": CLOSE}, r"not \[offset_ns, from_client"),
        ({"messages": [], "close": {"kind": "gone", "offset_ns": 0}}, "close.kind is not one of"),
        ({"messages": [], "close": {"kind": "close", "offset_ns": "0"}}, "offset_ns is not an"),
        ({"messages": [[0, True, True, b"ab", [1]]], "close": CLOSE}, "fragments do not add up"),
    ],
)
def test_malformed_session_is_a_one_line_format_error(value: object, message: str) -> None:
    """A malformed websocket value makes the cassette fail to load with a message saying what
    is wrong and where (the record's byte offset)."""
    # A v1 record (plain msgpack), so the test can rewrite it; v2 wraps the same map.
    record = msgpack.unpackb(
        codec.encode_interaction(ws_interaction(realtime_turns()), version=1), raw=False
    )
    record["websocket"] = value
    data = codec.encode_header(version=1) + msgpack.packb(record, use_bin_type=True)
    with pytest.raises(CassetteFormatError, match=message) as err:
        codec.decode(data)
    assert "\n" not in str(err.value) and "at byte" in str(err.value)


def test_close_defaults_to_open() -> None:
    """A session built without a close is still open (nothing known about its end)."""
    assert WebSocketSession().close == WsClose(0, WsCloseKind.OPEN)
