"""What a person sees of a cassette: the exact rows behind ``cassette show``, ``cassette frames``
and ``cassette events``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.tools.inspect import (
    EventRow,
    FrameRow,
    InteractionRow,
    event_rows,
    format_ns,
    frame_rows,
    interaction_row,
    interaction_rows,
)
from replayproxy._core.wire.events import NotAStreamError
from replayproxy.testing import MS, interaction
from tests.cassette.samples import sample_cassette, sse_interaction


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0.000ms"),
        (999, "0.000ms"),
        (1_000, "0.001ms"),
        (12_345_678, "12.345ms"),
        (1_000_001_000, "1000.001ms"),
        (-1_500_000, "-1.500ms"),
        (-999, "-0.000ms"),
    ],
)
def test_format_ns(ns: int, text: str) -> None:
    """Milliseconds with three decimals, truncated to the microsecond, sign kept."""
    assert format_ns(ns) == text


def test_show_rows_of_the_sample() -> None:
    """One exact row per interaction: counts, bytes, time to first byte, duration, end."""
    c = sample_cassette()
    first = c.interactions[0]
    rows = interaction_rows(c)
    assert rows[0] == InteractionRow(
        index=0,
        method="POST",
        url="https://api.example.test/v1/chat/completions",
        status=200,
        http_version="HTTP/1.1",
        frames=4,
        bytes=len(first.frames[0].data) + 25 + 34 + 14,
        ttfb_ns=50 * MS,
        duration_ns=131 * MS,
        end="complete",
        end_message="",
        faults=(),
    )
    assert rows[1].index == 1 and rows[1].frames == 3
    assert rows[2] == InteractionRow(
        2, "GET", "https://api.example.test/v1/models", None, "HTTP/1.1", 0, 0, None, 3 * MS,
        "no_response", "connection refused", (),
    )  # fmt: skip


def test_show_says_the_recorded_http_version() -> None:
    """A response recorded over HTTP/2 says HTTP/2.0; without a response, the request's."""
    item = interaction()
    assert item.response is not None
    h2 = replace(item, response=replace(item.response, http_version="HTTP/2.0"))
    assert interaction_row(0, h2).http_version == "HTTP/2.0"
    refused = replace(item, request=replace(item.request, http_version="HTTP/2.0"), response=None)
    assert interaction_row(1, refused).http_version == "HTTP/2.0"


@pytest.mark.parametrize(
    ("head_ms", "frame_ms", "end_ms", "duration_ms"),
    [(5, [7, 9], 8, 9), (5, [7], 20, 20), (30, [], 4, 30)],
)
def test_show_duration_is_the_latest_time(
    head_ms: int, frame_ms: list[int], end_ms: int, duration_ms: int
) -> None:
    """The duration is the latest of the head, the frames and the end."""
    frames = tuple(Frame(t * MS, b"x") for t in frame_ms)
    x = Interaction(
        Request("GET", "/"),
        Response(200, head_offset_ns=head_ms * MS, frames=frames),
        Ending(EndKind.RESET, end_ms * MS, "boom"),
        ("hang",),
    )
    row = interaction_row(4, x)
    assert row.duration_ns == duration_ms * MS
    assert (row.end, row.end_message, row.faults, row.bytes) == (
        "reset",
        "boom",
        ("hang",),
        len(frames),
    )


def test_frame_rows() -> None:
    """Each frame's offset, gap (the first from the response head), body position and bytes."""
    x = sse_interaction([b"ab", b"", b"c\n"], gap_ms=10)
    assert frame_rows(x) == [
        FrameRow(0, 60 * MS, 10 * MS, 0, 2, "ab"),
        FrameRow(1, 70 * MS, 10 * MS, 2, 0, ""),
        FrameRow(2, 80 * MS, 10 * MS, 2, 2, "c\\n"),
    ]
    assert x.response is not None
    frames = (Frame(53 * MS, b"z"), Frame(60 * MS, b"y"))
    y = replace(x, response=replace(x.response, frames=frames))
    assert [(r.gap_ns, r.start) for r in frame_rows(y)] == [(3 * MS, 0), (7 * MS, 1)]
    assert frame_rows(replace(x, response=None)) == []


def _stream(*chunks: tuple[int, bytes]) -> Interaction:
    """An SSE response of these (ms, bytes) frames after a 5 ms head, ending at 99 ms."""
    return interaction(
        [data for _, data in chunks],
        request=Request("POST", "/v1/chat"),
        head_ms=5,
        at_ms=[ms for ms, _ in chunks],
        end=Ending(EndKind.COMPLETE, 99 * MS),
    )


def test_event_rows_tie_each_event_to_its_frames() -> None:
    """Spans, first and last frame (empty frames hold nothing), cuts relative to the event,
    the time the event was complete, its name and its text with │ at each frame boundary."""
    x = _stream(
        (10, b""),
        (20, b"data: a\n\nda"),
        (30, b"ta: b\n"),
        (40, b""),
        (50, b"\n"),
        (60, b"event: done\ndata: c\n\n"),
    )
    assert event_rows(x) == [
        EventRow(0, 0, 9, 1, 1, (), 20 * MS, "message", "data: a\\n\\n"),
        EventRow(1, 9, 18, 1, 4, (2, 8, 8), 50 * MS, "message", "da│ta: b\\n││\\n"),
        EventRow(2, 18, 39, 5, 5, (), 60 * MS, "done", "event: done\\ndata: c\\n\\n"),
    ]


def test_event_rows_an_event_ending_where_a_frame_ends() -> None:
    """An event whose last byte is the last byte of a frame belongs to that frame alone."""
    x = _stream((10, b"data: a\n\n"), (20, b"data: b\n"), (30, b"\n"))
    rows = event_rows(x)
    assert [(r.first_frame, r.last_frame, r.cuts, r.offset_ns) for r in rows] == [
        (0, 0, (), 10 * MS),
        (1, 2, (8,), 30 * MS),
    ]


def test_event_rows_need_a_stream() -> None:
    """No response, or a body that is not an event stream: a one-line NotAStreamError."""
    with pytest.raises(NotAStreamError, match=r"^the interaction has no response, so no events$"):
        event_rows(Interaction(Request("GET", "/"), None, Ending(EndKind.NO_RESPONSE, 0)))
    x = _stream((10, b'{"a":1}'))
    assert x.response is not None
    json_type = ((b"content-type", b"application/json"),)
    plain = replace(x, response=replace(x.response, headers=json_type))
    with pytest.raises(NotAStreamError, match="application/json"):
        event_rows(plain)


def test_a_cassette_without_interactions_has_no_rows() -> None:
    """An empty cassette shows nothing."""
    assert interaction_rows(Cassette(())) == []
