"""Server frames built by engine/websocket.py decode as the same message with a real parser
(wsproto, as clients use), fragmented as asked, whatever the read splits."""

from __future__ import annotations

import itertools

import wsproto.events as wse
from hypothesis import given
from hypothesis import strategies as st
from wsproto.connection import Connection, ConnectionType

from replayproxy._engine.websocket import encode_frames


@given(st.data(), st.booleans(), st.binary(max_size=70_000).filter(lambda b: True))
def test_frames_reassemble_to_the_message(data: st.DataObject, text: bool, payload: bytes) -> None:
    """Any fragment sizes and any split of the wire bytes give the message back, with one
    frame per fragment."""
    if text:
        payload = payload.decode("latin-1").encode("utf-8")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(payload)), max_size=4)))
    bounds = [0, *cuts, len(payload)]
    sizes = tuple(b - a for a, b in itertools.pairwise(bounds)) if cuts else ()
    wire = encode_frames(text, payload, sizes)
    split = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=5)))
    client = Connection(ConnectionType.CLIENT)
    frames: list[wse.Message] = []  # type: ignore[type-arg]
    for a, b in zip([0, *split], [*split, len(wire)], strict=True):
        client.receive_data(wire[a:b])
        frames += [e for e in client.events() if isinstance(e, wse.Message)]
    got = b"".join(f.data.encode() if isinstance(f.data, str) else f.data for f in frames)
    assert got == payload
    assert all(isinstance(f, wse.TextMessage) == text for f in frames)
    assert sum(1 for f in frames if f.frame_finished) == max(1, len(sizes))
    assert frames[-1].message_finished
