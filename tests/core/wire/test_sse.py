"""Tests for the incremental byte-level SSE parser (replayproxy._core.wire.sse)."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.wire.sse import CR, CRLF, LF, SSEEvent, SSEParser, parse_blocks, parse_events
from tests.check.framing import SSE_STREAMS, payload_lines, sse_body


def feed_split(data: bytes, cuts: list[int], *, include_ignored: bool = False) -> list[SSEEvent]:
    """Parse ``data`` fed in pieces cut at the sorted positions ``cuts``."""
    parser = SSEParser(include_ignored=include_ignored)
    out: list[SSEEvent] = []
    prev = 0
    for cut in [*sorted(cuts), len(data)]:
        out += parser.feed(data[prev:cut])
        prev = cut
    return out + parser.close()


def byte_by_byte(data: bytes, *, include_ignored: bool = False) -> list[SSEEvent]:
    return feed_split(data, list(range(len(data))), include_ignored=include_ignored)


MIXED = (
    b": hello\r\n"
    b"event: a\r\ndata: 1\r\n\r\n"
    b"data: x\ndata: y\n\n"
    b"id: 7\rdata: \xc3\xa9\r\r"
    b"\n\n"
    b"retry: 100\ndata\n\n"
    b"data: tail"
)


def test_basic_event_fields_and_span() -> None:
    """An event's fields are parsed and its span runs from its first line to its blank line."""
    body = b"event: ping\ndata: {}\nid: 3\nretry: 5\n\n"
    (ev,) = parse_events(body)
    assert (ev.index, ev.start, ev.end) == (0, 0, len(body))
    assert (ev.event, ev.data, ev.id, ev.retry) == ("ping", "{}", "3", 5)
    assert ev.lines == ("event: ping", "data: {}", "id: 3", "retry: 5")
    assert ev.endings == LF and ev.dispatched


def test_spans_tile_a_stream_of_events() -> None:
    """Consecutive events' spans are adjacent and together cover the whole body."""
    body = sse_body("anthropic-text")
    events = parse_events(body)
    assert events[0].start == 0 and events[-1].end == len(body)
    for a, b in itertools.pairwise(events):
        assert a.end == b.start
    assert [e.index for e in events] == list(range(len(events)))


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_each_line_ending_style(eol: bytes) -> None:
    """LF, CR and CRLF streams give the same events, with spans measured in bytes."""
    body = b"event: e" + eol + b"data: 1" + eol + b"data: 2" + eol + eol + b"data: 3" + eol + eol
    events = parse_events(body)
    assert [(e.event, e.data) for e in events] == [("e", "1\n2"), ("message", "3")]
    assert events[0].end == 4 * len(eol) + 22 and events[1].end == len(body)
    assert events[0].endings == {b"\n": LF, b"\r": CR, b"\r\n": CRLF}[eol]


def test_cr_at_end_of_feed_then_lf_is_one_line_end() -> None:
    """A CR ending one feed and an LF starting the next are one CRLF, not two line ends."""
    parser = SSEParser(include_ignored=True)
    assert parser.feed(b"data: 1\r\n\r") == []
    events = parser.feed(b"\ndata: 2\r\n\r\n") + parser.close()
    assert [(e.kind, e.data, e.start, e.end) for e in events] == [
        ("event", "1", 0, 11),
        ("event", "2", 11, 22),
    ]
    assert events[0].endings == CRLF


def test_cr_at_end_of_stream_dispatches_at_close() -> None:
    """A stream ending in CR CR dispatches its last event when closed."""
    parser = SSEParser()
    assert parser.feed(b"data: 1\r\r") == []
    assert [(e.data, e.end) for e in parser.close()] == [("1", 9)]


def test_mixed_line_endings_are_reported() -> None:
    """A block whose lines use LF and CRLF has both bits set in ``endings``."""
    (ev,) = parse_events(b"data: 1\n\r\n")
    assert ev.endings == LF | CRLF


def test_bom_stripped_once() -> None:
    """One leading BOM is stripped (reported on the parser); a second one is data."""
    parser = SSEParser()
    events = parser.feed(b"\xef\xbb\xbf\xef\xbb\xbfdata: 1\n\n\xef\xbb\xbfdata: 2\n\n")
    assert parser.bom
    assert [e.event for e in events] == []  # field names "\ufeffdata" are unknown fields
    events = parse_events(b"\xef\xbb\xbfdata: 1\n\n")
    assert [(e.data, e.start, e.end) for e in events] == [("1", 3, 12)]


def test_bom_split_across_feeds() -> None:
    """A BOM split over three feeds is still stripped."""
    events = byte_by_byte(b"\xef\xbb\xbfdata: 1\n\n")
    assert [(e.data, e.start) for e in events] == [("1", 3)]


def test_comments_are_not_events() -> None:
    """A comment-only block is not an event; comments inside an event are kept on it."""
    body = b": keepalive\n\n:x\ndata: 1\n\n"
    events = parse_events(body)
    assert [(e.index, e.data, e.comments, e.start) for e in events] == [(0, "1", ("x",), 13)]


def test_ignored_blocks_are_reported_with_kind_and_next_index() -> None:
    """With include_ignored, keepalives, blank lines and data-less blocks carry their kind and
    the index of the event that follows them."""
    body = b": keepalive\n\ndata: 1\n\n\nid: 9\n\nevent: x\ndata: 2\n\ndata: cut"
    blocks = parse_blocks(body)
    assert [(b.kind, b.index, b.start, b.end) for b in blocks] == [
        ("comment", 0, 0, 13),
        ("event", 0, 13, 22),
        ("blank", 1, 22, 23),
        ("fields", 1, 23, 30),
        ("event", 1, 30, 48),
        ("partial", 2, 48, 57),
    ]
    assert blocks[3].id == "9" and blocks[-1].data == "cut"


def test_multiline_data_and_field_without_colon() -> None:
    """data lines join with LF; a bare ``data`` line adds an empty line; one space is dropped."""
    (ev,) = parse_events(b"data:a\ndata:  b\ndata\ndata: c\n\n")
    assert ev.data == "a\n b\n\nc"


def test_id_with_nul_ignored_and_retry_digits_only() -> None:
    """An id containing NUL is ignored, and retry counts only when it is all ASCII digits."""
    (a, b) = parse_events(b"id: a\x00b\nretry: 1x\ndata: 1\n\nid: ok\nretry: 42\ndata: 2\n\n")
    assert (a.id, a.retry) == (None, None)
    assert (b.id, b.retry) == ("ok", 42)


def test_last_event_id_persists() -> None:
    """The parser's last_event_id persists across events (WHATWG), the event's id does not."""
    parser = SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\ndata: b\n\n")
    assert [e.id for e in events] == ["1", None] and parser.last_event_id == "1"


def test_unterminated_last_event_is_discarded() -> None:
    """An event without its blank line at EOF is not dispatched (WHATWG)."""
    assert [e.data for e in parse_events(b"data: 1\n\ndata: 2\n")] == ["1"]
    assert [e.data for e in parse_events(b"data: 1\n\ndata: 2")] == ["1"]


def test_invalid_utf8_is_replaced_and_flagged() -> None:
    """Invalid UTF-8 decodes with U+FFFD, flags the event, and keeps byte spans."""
    body = b"data: \xff\xfe ok\n\ndata: fine\n\n"
    a, b = parse_events(body)
    assert a.data == "\ufffd\ufffd ok" and not a.utf8_ok and a.end == 13
    assert b.utf8_ok and b.start == 13


def test_multibyte_character_split_across_feeds() -> None:
    """A UTF-8 character split between feeds decodes intact."""
    body = "data: h\u00e9llo \u2603\n\n".encode()
    assert [e.data for e in byte_by_byte(body)] == ["h\u00e9llo \u2603"]
    assert all(e.utf8_ok for e in byte_by_byte(body))


def test_feed_after_close_is_an_error() -> None:
    """Feeding a closed parser is a programming error."""
    parser = SSEParser()
    parser.close()
    with pytest.raises(ValueError):
        parser.feed(b"data: 1\n\n")


def test_every_split_point_of_a_mixed_stream() -> None:
    """Splitting a tricky stream at every single point, and byte by byte, changes nothing."""
    whole = feed_split(MIXED, [], include_ignored=True)
    assert [e.kind for e in whole] == ["event", "event", "event", "blank", "event", "partial"]
    for cut in range(len(MIXED) + 1):
        assert feed_split(MIXED, [cut], include_ignored=True) == whole
    assert byte_by_byte(MIXED, include_ignored=True) == whole


@pytest.mark.parametrize("name", SSE_STREAMS)
def test_real_provider_streams(name: str) -> None:
    """Each real payload comes back as one event, byte-identical data, whole or byte by byte."""
    body = sse_body(name)
    events = parse_events(body)
    payloads = [p.decode() for p in payload_lines(name)]
    if name.startswith("openai-chat"):
        payloads.append("[DONE]")
    assert [e.data for e in events] == payloads
    for ev in events:
        if ev.event != "message":
            assert ev.event == json.loads(ev.data)["type"]
    assert byte_by_byte(body) == events


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(SSE_STREAMS),
    cuts=st.lists(st.integers(min_value=0, max_value=200_000), max_size=40),
)
def test_any_split_of_a_real_stream_gives_same_events(name: str, cuts: list[int]) -> None:
    """Property: any split of a real provider stream gives the same events and spans."""
    body = sse_body(name)
    cuts = [c % (len(body) + 1) for c in cuts]
    assert feed_split(body, cuts) == parse_events(body)


_line = st.one_of(
    st.sampled_from([b"data: x", b"data:", b"data", b"event: e", b": c", b"id: 1", b"retry: 9"]),
    st.binary(max_size=8).filter(lambda b: b"\r" not in b and b"\n" not in b),
)
_eol = st.sampled_from([b"\n", b"\r", b"\r\n"])


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.tuples(_line, _eol), max_size=20),
    bom=st.booleans(),
    tail=st.binary(max_size=5),
    data=st.data(),
)
def test_any_split_of_any_stream_gives_same_blocks(
    parts: list[tuple[bytes, bytes]], bom: bool, tail: bytes, data: st.DataObject
) -> None:
    """Property: for arbitrary lines, endings, BOM and garbage, any split gives the same blocks,
    and every block's span lies inside the body in order."""
    body = (b"\xef\xbb\xbf" if bom else b"") + b"".join(a + b for a, b in parts) + tail
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10))
    whole = feed_split(body, [], include_ignored=True)
    assert feed_split(body, cuts, include_ignored=True) == whole
    prev = 0
    for block in whole:
        assert prev <= block.start < block.end <= len(body)
        prev = block.end
    assert [e for e in whole if e.dispatched] == parse_events(body)


@settings(max_examples=100, deadline=None)
@given(
    blocks=st.lists(
        st.lists(st.sampled_from(["data: a", "data: {}", "event: e", ": c", "id: 1", "x"]),
                 max_size=4),
        max_size=12,
    ),
    eol=_eol,
    data=st.data(),
)  # fmt: skip
def test_whole_block_fast_path_matches_line_path(
    blocks: list[list[str]], eol: bytes, data: st.DataObject
) -> None:
    """Property: one-style streams (parsed whole by the block fast path) give the same blocks
    as the same stream fed byte by byte (the line-by-line path)."""
    body = b"".join(eol.join(line.encode() for line in b) + eol + eol for b in blocks)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    whole = feed_split(body, [], include_ignored=True)
    assert byte_by_byte(body, include_ignored=True) == whole
    assert feed_split(body, cuts, include_ignored=True) == whole
