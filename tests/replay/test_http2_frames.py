"""What the h2c origin puts in HTTP/2 frames (replayproxy._engine.http2.frames), checked against a
real ``h2`` client connection in memory: any recorded write sizes arrive as DATA frames that
carry exactly the recorded bytes in order, one write never shares a frame with another, and a
write is split only where the peer's flow-control window or maximum frame size forces it."""

from __future__ import annotations

import math
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._engine.http2.frames import request_of, response_headers, send_some

MAX_FRAME_MIN = 16384  # RFC 9113 §6.5.2: the smallest SETTINGS_MAX_FRAME_SIZE a peer may set


def _pair(window: int, max_frame: int) -> tuple[Any, Any, int]:
    """A server and a client ``h2`` connection with one request stream open, the client having
    announced ``window`` and ``max_frame``; the response head sent. Returns the stream id."""
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.local_settings = h2.settings.Settings(
        client=True,
        initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window,
            h2.settings.SettingCodes.MAX_FRAME_SIZE: max_frame,
        },
    )
    client.max_inbound_frame_size = max_frame  # h2 reads it from the settings it started with
    client.initiate_connection()
    server.initiate_connection()
    stream_id = client.get_next_available_stream_id()
    client.send_headers(
        stream_id,
        [(":method", "GET"), (":path", "/"), (":scheme", "http"), (":authority", "x")],
        end_stream=True,
    )
    server.receive_data(client.data_to_send())
    client.receive_data(server.data_to_send())
    server.receive_data(client.data_to_send())  # the client's SETTINGS ack and its settings
    server.send_headers(stream_id, [(":status", "200")])
    client.receive_data(server.data_to_send())
    return server, client, stream_id


def _frames(client: Any, data: bytes) -> list[bytes]:
    return [e.data for e in client.receive_data(data) if isinstance(e, h2.events.DataReceived)]


def _deliver(server: Any, client: Any, writes: list[bytes], increments: list[int], limit: int,
             stream_id: int) -> tuple[list[list[bytes]], list[tuple[int, int, int]]]:  # fmt: skip
    """Send each write as the origin does (send_some until done, opening the window by the next
    increment whenever it is closed); the DATA frames the client read for each write, and for
    every call that stopped short: (bytes sent, limit, window left)."""
    per_write: list[list[bytes]] = []
    short: list[tuple[int, int, int]] = []
    more = iter(increments)
    for write in writes:
        got: list[bytes] = []
        view = memoryview(write)
        while view:
            sent = send_some(server, stream_id, view, limit)
            view = view[sent:]
            got += _frames(client, server.data_to_send())
            if view and sent < limit:
                short.append((sent, limit, server.local_flow_control_window(stream_id)))
            if view and not server.local_flow_control_window(stream_id):
                step = next(more, 65536)
                client.increment_flow_control_window(step, stream_id=stream_id)
                client.increment_flow_control_window(step)
                server.receive_data(client.data_to_send())
        per_write.append(got)
    return per_write, short


writes_st = st.lists(
    st.one_of(st.binary(min_size=1, max_size=64), st.integers(1, 40000).map(lambda n: b"x" * n)),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    writes=writes_st,
    window=st.integers(1, 70000),
    max_frame=st.sampled_from([MAX_FRAME_MIN, 20000, 1 << 20]),
    increments=st.lists(st.integers(1, 70000), max_size=20),
    limit=st.integers(1, 1 << 20),
)
def test_data_frames_carry_exactly_the_recorded_writes(
    writes: list[bytes], window: int, max_frame: int, increments: list[int], limit: int
) -> None:
    """Whatever the write sizes, window, window updates, frame size and per-call limit: each
    write's frames join to exactly that write, in order; no frame exceeds the peer's maximum;
    and a call stops short of the write only when the window is closed."""
    server, client, stream_id = _pair(window, max_frame)
    per_write, short = _deliver(server, client, writes, increments, limit, stream_id)
    assert [b"".join(frames) for frames in per_write] == writes
    assert all(0 < len(f) <= max_frame for frames in per_write for f in frames)
    assert all(left == 0 for _, _, left in short)


@settings(max_examples=100, deadline=None)
@given(writes=writes_st, limit=st.integers(1, 1 << 20))
def test_an_open_window_gives_one_frame_per_write_up_to_the_frame_size(
    writes: list[bytes], limit: int
) -> None:
    """With the window never in the way, a write of n bytes is ceil(n / max frame size) frames:
    one frame per recorded write up to 16 KiB, whatever the per-call limit."""
    server, client, stream_id = _pair((1 << 31) - 1, MAX_FRAME_MIN)
    client.increment_flow_control_window((1 << 31) - 1 - 65535)
    server.receive_data(client.data_to_send())
    per_write, _ = _deliver(server, client, writes, [], limit, stream_id)
    assert [len(frames) for frames in per_write] == [
        math.ceil(len(w) / MAX_FRAME_MIN) for w in writes
    ]


def test_a_closed_window_sends_nothing() -> None:
    """With no window left, send_some queues no frame and says so (0 bytes)."""
    server, client, stream_id = _pair(3, MAX_FRAME_MIN)
    assert send_some(server, stream_id, memoryview(b"abc"), 1 << 20) == 3
    assert send_some(server, stream_id, memoryview(b"def"), 1 << 20) == 0
    assert _frames(client, server.data_to_send()) == [b"abc"]


# -- request and response fields -----------------------------------------------------------------


def test_a_request_stream_becomes_the_request_mitmproxy_would_record() -> None:
    """Pseudo-headers give method and URL; the rest are the headers; version HTTP/2.0."""
    request = request_of(
        [
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":authority", b"127.0.0.1:8080"),
            (b":path", b"/v1/chat?x=1"),
            (b"content-type", b"application/json"),
        ],
        b"{}",
    )
    assert (request.method, request.url, request.http_version) == (
        "POST",
        "http://127.0.0.1:8080/v1/chat?x=1",
        "HTTP/2.0",
    )
    assert request.headers == ((b"content-type", b"application/json"),)
    assert request.body == b"{}"


def test_without_authority_the_host_header_names_the_host() -> None:
    """A request with ``host`` instead of ``:authority`` (RFC 9113 §8.3.1 allows it)."""
    request = request_of([(b":method", b"GET"), (b":path", b"/"), (b"host", b"h:1")], b"")
    assert request.url == "http://h:1/"


def test_response_fields_are_what_http2_allows() -> None:
    """``:status`` first, names lower-cased, connection-specific fields and (for a scheduled
    body) content-length dropped; content-encoding and the rest kept as recorded."""
    recorded = [
        (b"Content-Type", b"text/event-stream"),
        (b"Connection", b"keep-alive"),
        (b"Keep-Alive", b"timeout=5"),
        (b"Transfer-Encoding", b"chunked"),
        (b"Content-Length", b"12"),
        (b"Content-Encoding", b"gzip"),
        (b"Upgrade", b"h2c"),
        (b"x-request-id", b" abc "),
    ]
    assert response_headers(200, recorded) == [
        (b":status", b"200"),
        (b"content-type", b"text/event-stream"),
        (b"content-encoding", b"gzip"),
        (b"x-request-id", b"abc"),
    ]
    assert (b"content-length", b"12") in response_headers(500, recorded, keep_length=True)
