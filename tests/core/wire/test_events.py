"""Tests for event_spans, the format-independent view of a body's events."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.wire.events import EventSpan, NotAStreamError, event_spans, stream_format
from replayproxy._errors import UsageError
from tests.check.framing import SSE_STREAMS, bedrock_body, bedrock_messages, sse_body


@pytest.mark.parametrize("name", SSE_STREAMS)
def test_sse_spans_cover_each_event(name: str) -> None:
    """SSE spans slice the body into exactly the framed events, named by `event:`."""
    body = sse_body(name)
    spans = event_spans(body, "text/event-stream; charset=utf-8")
    assert b"".join(body[s.start : s.end] for s in spans) == body
    assert [s.index for s in spans] == list(range(len(spans)))
    if name.startswith(("anthropic", "openai-responses")):
        assert all(body[s.start : s.end].startswith(b"event: " + s.name.encode()) for s in spans)
    else:
        assert {s.name for s in spans} == {"message"}


def test_keepalive_comments_are_not_events() -> None:
    """A `: keepalive` comment block is skipped: event N is still the N-th data event."""
    body = b": keepalive\n\nevent: ping\ndata: {}\n\n: x\n\ndata: 2\n\n"
    assert event_spans(body, "text/event-stream") == [
        EventSpan(0, 13, 35, "ping"),
        EventSpan(1, 40, 49, "message"),
    ]


def test_eventstream_spans_are_messages() -> None:
    """Event-stream spans are whole messages named by :event-type."""
    msgs = bedrock_messages()
    spans = event_spans(bedrock_body(), "application/vnd.amazon.eventstream")
    assert [s.end - s.start for s in spans] == [len(m) for m in msgs]
    assert spans[0].name == "messageStart" and spans[-1].name == "metadata"


def test_eventstream_spans_stop_at_fatal_error() -> None:
    """Messages after a framing error are not listed; a partial tail is not an event."""
    a, b, c = bedrock_messages()[:3]
    assert len(event_spans(a + b + c[:5], "application/vnd.amazon.eventstream")) == 2
    broken = a + b"\x00" * 12 + c
    assert len(event_spans(broken, "application/vnd.amazon.eventstream")) == 1


@pytest.mark.parametrize(
    ("body", "ctype", "fmt"),
    [
        (b"data: 1\n\n", None, "sse"),
        (b"\xef\xbb\xbf: hi\n\n", None, "sse"),
        (b"event: x\ndata: 1\n\n", None, "sse"),
        (b"data: 1\n\n", "TEXT/EVENT-STREAM;charset=utf-8", "sse"),
    ],
)
def test_format_sniffing_and_content_type(body: bytes, ctype: str | None, fmt: str) -> None:
    """The format comes from the content type, or is sniffed from the first bytes."""
    assert stream_format(body, ctype) == fmt


def test_eventstream_is_sniffed() -> None:
    """An event-stream body with no content type is recognised by its prelude CRC."""
    assert stream_format(bedrock_body(), None) == "eventstream"


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b'{"id": 1}', "application/json"),
        (b'[{"candidates": []}]', "application/json; charset=UTF-8"),
        (b'{"id": 1}', None),
        (b"", None),
    ],
)
def test_not_a_stream_is_a_usage_error(body: bytes, ctype: str | None) -> None:
    """JSON or unknown bodies raise NotAStreamError (a UsageError) with a one-line message."""
    with pytest.raises(NotAStreamError) as info:
        event_spans(body, ctype)
    assert isinstance(info.value, UsageError) and "\n" not in str(info.value)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(body: bytes) -> None:
    """Property: any bytes either give in-bounds, ordered spans or raise NotAStreamError."""
    for ctype in (None, "text/event-stream", "application/vnd.amazon.eventstream"):
        try:
            spans = event_spans(body, ctype)
        except NotAStreamError:
            continue
        prev = 0
        for s in spans:
            assert prev <= s.start < s.end <= len(body)
            prev = s.end


@pytest.mark.parametrize(
    ("body", "ctype", "message"),
    [
        (
            b'{"id": 1}',
            "Application/JSON ; charset=utf-8",
            "the body is application/json, not an event stream "
            "(text/event-stream or application/vnd.amazon.eventstream): it has no events",
        ),
        (
            b'{"id": 1, "text": "a long body"}',
            None,
            "the body does not look like an event stream (no content type given, and it starts "
            'with b\'{"id": 1, "text"\')',
        ),
        (
            b"",
            None,
            "the body does not look like an event stream (no content type given, and it starts "
            "with b'')",
        ),
    ],
)
def test_not_a_stream_messages(body: bytes, ctype: str | None, message: str) -> None:
    """The one-line message names the media type, or the first 16 bytes when sniffing."""
    with pytest.raises(NotAStreamError) as info:
        stream_format(body, ctype)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("body", "fmt"),
    [
        (b"data:1\n\n", "sse"),
        (b"data\n\n", "sse"),
        (b"data\r\n", "sse"),
        (b"id: 1\n\n", "sse"),
        (b"retry: 5\n\n", "sse"),
        (b": comment\n\n", "sse"),
        (b"\r\n\r\nevent: x\n", "sse"),
        (b"\xef\xbb\xbf\ndata: 1\n\n", "sse"),
    ],
)
def test_sse_is_sniffed_from_any_field(body: bytes, fmt: str) -> None:
    """Any SSE field or comment at the start (after a BOM and blank lines) means SSE."""
    assert stream_format(body, None) == fmt


@pytest.mark.parametrize(
    "body",
    [
        b"dat: 1\n\n",
        b" data: 1\n\n",
        b"\tdata: 1\n",
        b"datum\n",
        b"\xef\xbb\xbf\xef\xbb\xbfdata: 1",
    ],
)
def test_near_misses_are_not_sse(body: bytes) -> None:
    """Only real field names (and only one BOM, and only blank lines) are skipped over."""
    with pytest.raises(NotAStreamError):
        stream_format(body, None)


def test_eventstream_sniffing_needs_a_full_valid_prelude() -> None:
    """16+ bytes whose prelude CRC matches and whose total length is at least 16."""
    import struct
    import zlib

    msg = bedrock_messages()[0]
    assert stream_format(msg[:16], None) == "eventstream"
    with pytest.raises(NotAStreamError):
        stream_format(msg[:15], None)
    # A valid prelude CRC over an impossible total length (15) is not an event stream.
    prelude = struct.pack(">II", 15, 0)
    fake = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 8
    with pytest.raises(NotAStreamError):
        stream_format(fake, None)
    prelude = struct.pack(">II", 16, 0)
    real = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 4
    assert stream_format(real, None) == "eventstream"
    assert stream_format(b"data: 1\n\n", "application/vnd.amazon.eventstream") == "eventstream"


def test_eventstream_spans_are_exact() -> None:
    """Each message's span is its bytes; an exception message is named by its type."""
    from replayproxy._core.wire.eventstream import encode_event, encode_exception

    a = encode_event("contentBlockDelta", b"{}")
    b = encode_exception("throttlingException", b"{}")
    c = encode_event("messageStop", b"{}")
    bad = bytearray(b)
    bad[-1] ^= 0xFF  # a message CRC error is not fatal: decoding goes on
    spans = event_spans(a + bytes(bad) + c, "application/vnd.amazon.eventstream")
    assert spans == [
        EventSpan(0, 0, len(a), "contentBlockDelta"),
        EventSpan(1, len(a) + len(b), len(a) + len(b) + len(c), "messageStop"),
    ]
    assert event_spans(a + b, None) == [
        EventSpan(0, 0, len(a), "contentBlockDelta"),
        EventSpan(1, len(a), len(a) + len(b), "throttlingException"),
    ]


def test_content_type_decides_over_the_bytes() -> None:
    """With a content type given, the bytes are not sniffed: an empty or odd SSE body has no
    events, it is not an error; only the media type before the first ';' counts."""
    assert event_spans(b"", "text/event-stream") == []
    assert event_spans(b"{}", "text/event-stream; charset=utf-8; x=y") == []
    with pytest.raises(NotAStreamError):
        stream_format(b"Xdata: 1\n\n", None)
