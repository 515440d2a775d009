"""Stream capture (replayproxy.testing.capture_url / capture_stream / acapture_stream): frames
timed from the request, events parsed by the core parsers, and every end kind told apart, over
real loopback sockets (a ReplayServer with faults) and httpx."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import EndKind
from replayproxy.testing import (
    SSE_EVENTS,
    CapturedFrame,
    StreamCapture,
    acapture_stream,
    capture_stream,
    capture_url,
)
from replayproxy.testing._capture_data import parse_frames
from replayproxy.testing.strategies import splits, sse_streams
from tests.testing.capture_servers import CHAT_JSON, CHAT_PATH, serving

TEXTS = ["Hel", "lo", " wérld"]


def _capture(server: object, **kwargs: object) -> StreamCapture:
    url = server.url + CHAT_PATH  # type: ignore[attr-defined]
    cap = capture_url("POST", url, json=CHAT_JSON, **kwargs)  # type: ignore[arg-type]
    assert cap.status == 200, cap.body  # the recorded answer, not a replay miss
    return cap


@pytest.mark.timing
def test_a_clean_stream_is_captured_frame_by_frame() -> None:
    """Each write is one frame, timed after the request, in order; events JSON-decoded; the
    body ended complete and the server closed after [DONE] (the OpenAI terminal event)."""
    with serving(gap_ms=150) as server:
        cap = _capture(server)
    assert cap.status == 200 and cap.method == "POST" and cap.url.endswith(CHAT_PATH)
    assert cap.headers["Content-Type"] == cap.content_type == "text/event-stream"
    assert [f.data for f in cap.frames] == list(SSE_EVENTS)
    times = [f.at_ms for f in cap.frames]
    assert times == sorted(times) and times[0] > 0
    # Three 150 ms gaps: 450 ms. The bound is half (a late first read shortens the span).
    assert times[-1] - times[0] >= 225
    assert [e.data["text"] for e in cap.events[:3]] == TEXTS
    assert cap.events[3].data == cap.events[3].text == "[DONE]"
    assert cap.events[0].event is None and cap.events[0].id is None
    assert [e.at_ms for e in cap.events] == times
    assert cap.body == b"".join(SSE_EVENTS) and cap.trailing == b""
    assert cap.end == "complete" and cap.closed_after_terminal is True


def test_split_reads_give_more_frames_and_the_same_events() -> None:
    """split:bytes=7 cuts every write into 7-byte reads: more frames, events unchanged, each
    event timed by the frame that completed it."""
    with serving(faults=["split:bytes=7,gap=0.005"]) as server:
        cap = _capture(server)
    assert len(cap.frames) > len(SSE_EVENTS)
    assert cap.body == b"".join(SSE_EVENTS)
    assert [e.data["text"] for e in cap.events[:3]] == TEXTS
    assert cap.end == "complete"


def test_a_close_before_the_terminator_is_incomplete() -> None:
    """close (FIN without the chunked terminator) ends 'incomplete'; no terminal arrived, so
    closed_after_terminal is None."""
    with serving(faults=["close:events=2"]) as server:
        cap = _capture(server)
    assert cap.end == "incomplete"
    assert len(cap.events) == 2 and cap.closed_after_terminal is None


def test_a_connection_reset_is_reset() -> None:
    """reset (a real TCP RST from the origin) ends 'reset'."""
    with serving(faults=["reset:events=2"]) as server:
        cap = _capture(server)
    assert cap.end == "reset" and len(cap.events) == 2


def test_a_hang_ends_at_the_read_timeout() -> None:
    """hang after event 1: no byte for the timeout, so the capture ends 'timeout'."""
    with serving(faults=["hang:events=1"]) as server:
        cap = _capture(server, timeout=0.5)
    assert cap.end == "timeout" and len(cap.events) == 1
    assert cap.closed_after_terminal is None


def test_a_socket_left_open_after_the_terminal_is_seen() -> None:
    """linger: [DONE] arrives, then the response never ends: closed_after_terminal False."""
    with serving(faults=["linger"]) as server:
        cap = _capture(server, timeout=0.5)
    assert cap.end == "timeout" and cap.events[-1].text == "[DONE]"
    assert cap.closed_after_terminal is False


def test_terminal_names_a_custom_terminal_event() -> None:
    """terminal= names the event types that end the stream, for an endpoint of one's own."""
    chunks = [b"event: delta\ndata: {}\n\n", b"event: committed\ndata: {}\n\n"]
    with serving(chunks) as server:
        cap = _capture(server, terminal=["committed", "rejected"])
    with serving(chunks) as server:
        plain = _capture(server, terminal="nothing-like-it")
    assert [e.event for e in cap.events] == ["delta", "committed"]
    assert cap.closed_after_terminal is True and plain.closed_after_terminal is None


def test_capture_stream_reads_a_response_opened_by_the_caller() -> None:
    """capture_stream takes a stream=True response from the caller's client and closes it."""
    with serving() as server, httpx.Client() as client:
        request = client.build_request("POST", server.url + CHAT_PATH, json=CHAT_JSON)
        response = client.send(request, stream=True)
        cap = capture_stream(response, timeout=2)
        assert response.is_closed
    assert len(cap.events) == 4 and cap.end == "complete"


def test_capture_stream_timeout_replaces_the_clients_read_timeout() -> None:
    """The capture's timeout bounds the wait even when the client was built with none."""
    with (
        serving(faults=["hang:events=1"]) as server,
        httpx.Client(timeout=None) as client,
        client.stream("POST", server.url + CHAT_PATH, json=CHAT_JSON) as response,
    ):
        cap = capture_stream(response, timeout=0.3)
    assert cap.end == "timeout"


def test_acapture_stream_reads_an_async_response() -> None:
    """acapture_stream does the same for httpx.AsyncClient, ends included."""

    async def run(url: str) -> StreamCapture:
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", url, json=CHAT_JSON) as response,
        ):
            return await acapture_stream(response, timeout=2)

    with serving(gap_ms=10) as server:
        clean = asyncio.run(run(server.url + CHAT_PATH))
    with serving(faults=["close:events=1"]) as server:
        cut = asyncio.run(run(server.url + CHAT_PATH))
    assert [e.data for e in clean.events][-1] == "[DONE]" and clean.end == "complete"
    assert clean.frames[0].at_ms > 0
    assert cut.end == "incomplete" and len(cut.events) == 1


def test_ndjson_lines_are_events() -> None:
    """An NDJSON body: each line an event (JSON-decoded, no event name), blank lines skipped,
    an unterminated last line trailing."""
    chunks = [b'{"type":"delta","text":"a"}\n\n{"type":', b'"done"}\n{"par']
    headers = ((b"content-type", b"application/x-ndjson"),)
    with serving(chunks, headers=headers, end=EndKind.COMPLETE) as server:
        cap = _capture(server, terminal="done")
    assert [e.data for e in cap.events] == [{"type": "delta", "text": "a"}, {"type": "done"}]
    assert cap.events[1].event is None and cap.events[1].at_ms == cap.frames[1].at_ms
    assert cap.trailing == b'{"par'


def test_sse_ids_and_event_names_are_kept() -> None:
    """The SSE event: and id: fields of each event; data that is not JSON stays text."""
    frames = [CapturedFrame(1.0, b"event: delta\nid: 7\ndata: plain text\n\n")]
    events, trailing = parse_frames(frames, "text/event-stream")
    assert (events[0].event, events[0].id, events[0].data) == ("delta", "7", "plain text")
    assert trailing == b""


def test_a_trailing_comment_block_is_not_trailing_bytes() -> None:
    """Bytes after the last event that form a complete comment are not 'trailing'."""
    frames = [CapturedFrame(1.0, b"data: 1\n\n: keepalive\n\n")]
    assert parse_frames(frames, "text/event-stream")[1] == b""
    frames = [CapturedFrame(1.0, b"data: 1\n\ndata: 2")]
    assert parse_frames(frames, "text/event-stream")[1] == b"data: 2"


@given(st.data(), sse_streams(max_events=6))
def test_any_split_gives_the_same_events(data: st.DataObject, events: list[bytes]) -> None:
    """Property: any split of the same body into frames gives the same events and trailing
    bytes (SSE), as the core parser guarantees."""
    body = b"".join(events) + b"data: unterminated"
    whole = parse_frames([CapturedFrame(0.0, body)], "text/event-stream")
    pieces = data.draw(splits(body))
    split = parse_frames([CapturedFrame(float(i), p) for i, p in enumerate(pieces)], "")
    assert [(e.event, e.text, e.id) for e in split[0]] == [
        (e.event, e.text, e.id) for e in whole[0]
    ]
    assert split[1] == whole[1] == b"data: unterminated"


@given(st.data(), st.lists(st.sampled_from([b'{"a":1}', b"[1,2]", b"", b"x\xc3\xa9"]), max_size=6))
def test_any_split_gives_the_same_ndjson_lines(data: st.DataObject, lines: list[bytes]) -> None:
    """Property: NDJSON lines do not depend on how the bytes were split."""
    body = b"\n".join(lines) + b"\n"
    whole = parse_frames([CapturedFrame(0.0, body)], "application/x-ndjson")
    pieces = data.draw(splits(body))
    split = parse_frames([CapturedFrame(0.0, p) for p in pieces], "application/x-ndjson")
    assert [e.text for e in split[0]] == [e.text for e in whole[0]]
