"""Hand-built WebSocket interactions and hypothesis strategies for the pure-core tests."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

from replayproxy.core.cassette.model import Ending, EndKind, Interaction, Request, Response
from replayproxy.core.websocket.model import WebSocketSession, WsClose, WsCloseKind, WsMessage

MS = 1_000_000
UPGRADE_HEADERS = (
    (b"upgrade", b"websocket"),
    (b"connection", b"Upgrade"),
    (b"sec-websocket-accept", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
)


def text(offset_ms: float, from_client: bool, event: dict[str, Any]) -> WsMessage:
    return WsMessage(round(offset_ms * MS), from_client, True, json.dumps(event).encode())


def ws_interaction(
    messages: list[WsMessage],
    close: WsClose | None = None,
    *,
    head_ms: float = 5,
    faults: tuple[str, ...] = (),
) -> Interaction:
    """A recorded upgrade to ``/v1/realtime`` carrying ``messages``; closed by the client."""
    last = messages[-1].offset_ns if messages else round(head_ms * MS)
    end = close or WsClose(last + MS, WsCloseKind.CLOSE, 1000, "", True)
    request = Request(
        "GET",
        "wss://api.openai.com/v1/realtime?model=gpt-realtime",
        headers=((b"upgrade", b"websocket"), (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ==")),
    )
    response = Response(101, "Switching Protocols", headers=UPGRADE_HEADERS,
                        head_offset_ns=round(head_ms * MS))  # fmt: skip
    return Interaction(
        request,
        response,
        Ending(EndKind.COMPLETE, end.offset_ns),
        faults,
        websocket=WebSocketSession(tuple(messages), end),
    )


def realtime_turns(*, ttfb_ms: float = 100, gap_ms: float = 20, deltas: int = 4) -> list[WsMessage]:
    """session.created; session.update -> session.updated; response.create -> a response."""
    out = [
        text(6, False, {"type": "session.created", "event_id": "e1"}),
        text(50, True, {"type": "session.update", "event_id": "c1", "session": {"x": 1}}),
        text(60, False, {"type": "session.updated", "event_id": "e2"}),
        text(200, True, {"type": "response.create", "event_id": "c2"}),
    ]
    t = 200 + ttfb_ms
    out.append(text(t, False, {"type": "response.created", "event_id": "e3",
                               "response": {"id": "r1"}}))  # fmt: skip
    for i in range(deltas):
        t += gap_ms
        delta = {"type": "response.output_text.delta", "event_id": f"d{i}", "response_id": "r1"}
        out.append(text(t, False, {**delta, "item_id": "i1", "delta": f"w{i} "}))
    t += gap_ms
    out.append(text(t, False, {"type": "response.done", "event_id": "e4",
                               "response": {"id": "r1", "status": "completed"}}))  # fmt: skip
    return out


offsets = st.integers(-(2**63), 2**63 - 1)
messages = st.builds(
    WsMessage,
    offsets,
    st.booleans(),
    st.booleans(),
    st.binary(max_size=40),
)
closes = st.builds(
    WsClose,
    offsets,
    st.sampled_from(list(WsCloseKind)),
    st.one_of(st.none(), st.integers(0, 4999)),
    st.text(max_size=20),
    st.one_of(st.none(), st.booleans()),
)


@st.composite
def fragmented(draw: st.DrawFn, message: st.SearchStrategy[WsMessage] = messages) -> WsMessage:
    m = draw(message)
    cuts = sorted(draw(st.lists(st.integers(0, len(m.data)), max_size=4)))
    bounds = [0, *cuts, len(m.data)]
    sizes = tuple(b - a for a, b in itertools.pairwise(bounds))
    return WsMessage(m.offset_ns, m.from_client, m.text, m.data, sizes if cuts else ())


sessions = st.builds(
    WebSocketSession, st.lists(st.one_of(messages, fragmented()), max_size=8).map(tuple), closes
)
