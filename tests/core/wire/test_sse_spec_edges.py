"""The SSE parser against the WHATWG text/event-stream edge cases, one rule per case, each
checked whole and byte by byte."""

from __future__ import annotations

import pytest

from replayproxy._core.wire.sse import (
    BAD_ID,
    BAD_RETRY,
    CR,
    CRLF,
    HAS_EVENT,
    HAS_ID,
    LF,
    SSEEvent,
    SSEParser,
)


def _parse(data: bytes, *, whole: bool) -> tuple[list[SSEEvent], str]:
    parser = SSEParser(include_ignored=True)
    pieces = [data] if whole else [data[i : i + 1] for i in range(len(data))]
    out = [ev for piece in pieces for ev in parser.feed(piece)]
    return out + parser.close(), parser.last_event_id


def events(data: bytes) -> tuple[list[SSEEvent], str]:
    """Blocks and the final last-event-id, identical whether fed whole or byte by byte."""
    whole = _parse(data, whole=True)
    assert _parse(data, whole=False) == whole
    return whole


# (stream, [(kind, event name, data)] of every block)
CASES = {
    "no space after the colon": (b"data:x\n\n", [("event", "message", "x")]),
    "only one space is dropped": (b"data:  x\n\n", [("event", "message", " x")]),
    "a tab is not a space": (b"data:\tx\n\n", [("event", "message", "\tx")]),
    "field without colon is empty": (b"data\n\n", [("event", "message", "")]),
    "empty data line still dispatches": (b"data:\n\n", [("event", "message", "")]),
    "trailing empty data line": (b"data: a\ndata:\n\n", [("event", "message", "a\n")]),
    "empty event name means message": (b"event:\ndata: x\n\n", [("event", "message", "x")]),
    "event name kept as is": (b"event:  a b \ndata: x\n\n", [("event", " a b ", "x")]),
    "field names are case-sensitive": (b"Data: x\n\n", [("fields", "message", "")]),
    "space before the colon is part of the name": (b"data : x\n\n", [("fields", "message", "")]),
    "unknown fields are ignored": (b"foo: bar\ndata: x\n\n", [("event", "message", "x")]),
    "colon in the value is kept": (b"data: a:b: c\n\n", [("event", "message", "a:b: c")]),
    "a comment between data lines": (b"data: a\n: hi\ndata: b\n\n", [("event", "message", "a\nb")]),
    "a comment alone is no event": (b": keepalive\n\n", [("comment", "message", "")]),
    "no data means no event": (b"event: a\nid: 1\n\n", [("fields", "a", "")]),
    "a lone blank line": (b"\n", [("blank", "message", "")]),
    "CR CR ends a block": (
        b"data: a\r\rdata: b\r\r", [("event", "message", "a"), ("event", "message", "b")]
    ),
    "a BOM only at the very start": (
        b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n",
        [("event", "message", "a"), ("fields", "message", "")],
    ),
    "unterminated last block is partial": (
        b"data: a\n\ndata: b\n", [("event", "message", "a"), ("partial", "message", "b")]
    ),
    "only an event line": (b"event: a\n\n", [("fields", "a", "")]),
    "only an id line": (b"id: 1\n\n", [("fields", "message", "")]),
    "only a retry line": (b"retry: 5\n\n", [("fields", "message", "")]),
    "only an unknown field": (b"x\n\n", [("fields", "message", "")]),
    "a CR at the very end ends the line, not the block": (
        b"data: a\r", [("partial", "message", "a")]
    ),
    "part of a BOM, then the end": (b"\xef\xbb", [("partial", "message", "")]),
    "a CR line inside a CRLF block": (b"data: a\rdata: b\r\n\r\n", [("event", "message", "a\nb")]),
    "only blank lines end blocks (LF)": (
        b"data: XX\nXXXX\nXXdata: y\n\n", [("event", "message", "XX")]
    ),
    "only blank lines end blocks (CRLF)": (
        b"data: XX\r\nXXXX\r\nXX\r\n\r\n", [("event", "message", "XX")]
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_whatwg_field_rules(name: str) -> None:
    """Each WHATWG parsing rule gives the blocks the spec dispatches (or ignores)."""
    stream, expected = CASES[name]
    blocks, _ = events(stream)
    assert [(b.kind, b.event, b.data) for b in blocks] == expected


def test_an_empty_id_resets_the_last_event_id() -> None:
    """`id:` with an empty value (or a bare `id`) sets the last event ID back to empty."""
    for reset in (b"id:\n", b"id\n", b"id: \n"):
        blocks, last = events(b"id: 5\ndata: a\n\n" + reset + b"data: b\n\n")
        assert last == ""
        assert [(b.id, bool(b.flags & HAS_ID)) for b in blocks] == [("5", True), ("", False)]


def test_last_event_id_persists_and_follows_blocks_without_data() -> None:
    """The last event ID persists over events without id, and an id in a block without data
    still sets it (WHATWG sets it before checking the data buffer)."""
    _, last = events(b"id: 1\ndata: a\n\ndata: b\n\n")
    assert last == "1"
    _, last = events(b"id: 1\ndata: a\n\nid: 2\n\n")
    assert last == "2"


def test_an_id_with_nul_is_ignored_and_keeps_the_previous_one() -> None:
    """An id containing NUL is ignored (flagged BAD_ID); the previous last event ID stays."""
    blocks, last = events(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert last == "1"
    assert blocks[1].id is None and blocks[1].flags & BAD_ID


def test_an_unterminated_block_does_not_set_the_last_event_id() -> None:
    """The partial block at the end is discarded whole, its id included."""
    blocks, last = events(b"id: 1\ndata: a\n\nid: 2\ndata: b")
    assert last == "1" and blocks[-1].kind == "partial"


@pytest.mark.parametrize(
    ("line", "retry", "bad"),
    [
        (b"retry: 100", 100, False),
        (b"retry: 0", 0, False),
        (b"retry:100", 100, False),
        (b"retry: -1", None, True),
        (b"retry: 1.5", None, True),
        (b"retry: 10 ", None, True),
        (b"retry: ", None, True),
        ("retry: \u0661\u0662".encode(), None, True),  # Arabic-Indic digits are not ASCII
    ],
)
def test_retry_counts_only_when_all_ascii_digits(line: bytes, retry: int | None, bad: bool) -> None:
    """`retry` is taken only when its value is all ASCII digits; otherwise flagged BAD_RETRY."""
    (block,) = events(line + b"\ndata: x\n\n")[0]
    assert block.retry == retry and bool(block.flags & BAD_RETRY) == bad


def test_event_field_flag_even_when_it_says_message() -> None:
    """HAS_EVENT marks an explicit event line, even one naming the default type."""
    (a, b) = events(b"event: message\ndata: x\n\ndata: y\n\n")[0]
    assert a.flags & HAS_EVENT and not b.flags & HAS_EVENT


def test_flags_accumulate_over_a_block() -> None:
    """Every flag a block's lines raise is kept, whatever the order of the lines."""
    lines = [b"event: e", b"id: a\x00b", b"id: 7", b"retry: x"]
    for order in (lines, lines[::-1]):
        (block,) = events(b"\n".join(order) + b"\ndata: d\n\n")[0]
        assert block.flags == HAS_EVENT | BAD_ID | HAS_ID | BAD_RETRY
        assert block.id == "7"


def test_line_endings_accumulate_over_a_block() -> None:
    """A block's endings bitmask has every line ending its lines (and blank line) used."""
    (block,) = events(b"data: a\r\ndata: b\rdata: c\n\n")[0]
    assert block.endings == CRLF | CR | LF and block.data == "a\nb\nc"


@pytest.mark.parametrize(
    "stream",
    [b"data: \xff\n\n", b"data: ok\ndata: \xc3\n\n", b"data: \xe2\x82\ndata: ok\n\n"],
)
def test_invalid_utf8_anywhere_in_a_block_flags_it(stream: bytes) -> None:
    """A line of invalid UTF-8 anywhere in the block (first, last) clears utf8_ok; the text
    gets U+FFFD."""
    (block,) = events(stream)[0]
    assert not block.utf8_ok and "\ufffd" in block.data


def test_invalid_utf8_in_the_unterminated_tail_flags_the_partial_block() -> None:
    """The partial block at the end is flagged too when one of its lines is not UTF-8."""
    for tail in (b"data: \xff\ndata: ok", b"data: ok\ndata: \xff"):
        (_, partial) = events(b"data: a\n\n" + tail)[0]
        assert partial.kind == "partial" and not partial.utf8_ok


def test_the_partial_block_at_the_end_keeps_its_span_lines_and_endings() -> None:
    """The unterminated block reported at close has its byte span, its lines and only the line
    endings it really used (its last line has none)."""
    stream = b"data: a\n\nid: 9\r\ndata: b"
    (_, partial), last = events(stream)
    assert (partial.kind, partial.start, partial.end) == ("partial", 9, len(stream))
    assert partial.lines == ("id: 9", "data: b") and partial.endings == CRLF
    assert last == ""


def test_a_stream_that_is_only_a_bom() -> None:
    """A BOM and nothing else: it is stripped (bom is set) and there is no block at all."""
    for pieces in ([b"\xef\xbb\xbf"], [b"\xef", b"\xbb", b"\xbf"]):
        parser = SSEParser(include_ignored=True)
        out = [ev for p in pieces for ev in parser.feed(p)] + parser.close()
        assert parser.bom and out == []


def test_spans_after_a_feed_that_ends_inside_a_block() -> None:
    """A feed holding a whole event and the start of the next: the next event's span starts
    where the first ended."""
    parser = SSEParser()
    first = parser.feed(b"data: a\n\ndata: b\n")
    second = parser.feed(b"\ndata: c\n\n")
    assert [(e.start, e.end, e.data) for e in [*first, *second]] == [
        (0, 9, "a"),
        (9, 18, "b"),
        (18, 27, "c"),
    ]


def test_no_bom_is_reported_for_a_stream_without_one() -> None:
    """``bom`` stays False when the stream does not start with a BOM (even one that appears
    later, which is data)."""
    parser = SSEParser()
    parser.feed(b"data: a\n\n\xef\xbb\xbf")
    parser.close()
    assert parser.bom is False


def test_feed_after_close_names_the_mistake() -> None:
    """Feeding a closed parser is a ValueError saying so."""
    parser = SSEParser()
    parser.close()
    with pytest.raises(ValueError) as info:
        parser.feed(b"data: a\n\n")
    assert str(info.value) == "SSEParser.feed() after close()"
