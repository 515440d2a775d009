"""AWS event-stream decoding problems, exactly: code, offset, message, fatality and index of
each error; the limits; the typed headers an encoder infers; a message's name."""

from __future__ import annotations

import struct
import uuid
import zlib

import pytest

from replayproxy._core.wire.eventstream import (
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    EventStreamDecoder,
    EventStreamError,
    EventStreamHeader,
    EventStreamMessage,
    Timestamp,
    decode_all,
    encode_event,
    encode_exception,
    encode_message,
)


def prelude(total: int, hlen: int) -> bytes:
    head = struct.pack(">II", total, hlen)
    return head + struct.pack(">I", zlib.crc32(head))


def with_crc(body: bytes) -> bytes:
    return body + struct.pack(">I", zlib.crc32(body))


GOOD = encode_message([("a", "b")], b"xy")


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (
            struct.pack(">III", 16, 0, 0xDEADBEEF) + b"\x00" * 4,
            "bedrock.prelude-crc",
            f"prelude CRC mismatch (stored 0xdeadbeef, computed "
            f"0x{zlib.crc32(struct.pack('>II', 16, 0)):08x})",
        ),
        (
            prelude(15, 0) + b"\x00" * 4,
            "bedrock.length",
            "impossible lengths (total 15, headers 0; need total >= 16 + headers)",
        ),
        (
            prelude(20, 5) + b"\x00" * 8,
            "bedrock.length",
            "impossible lengths (total 20, headers 5; need total >= 16 + headers)",
        ),
        (
            prelude(16 + MAX_HEADERS_LENGTH + 1, MAX_HEADERS_LENGTH + 1),
            "bedrock.length",
            f"headers of {MAX_HEADERS_LENGTH + 1} bytes exceed the 128 KiB limit",
        ),
        (
            prelude(16 + MAX_PAYLOAD_LENGTH + 1, 0),
            "bedrock.length",
            "payload exceeds the 16 MiB limit",
        ),
    ],
)
def test_fatal_framing_errors(raw: bytes, code: str, message: str) -> None:
    """A framing error after a good message: reported at its offset, fatal, nothing after."""
    items = decode_all(GOOD + raw + GOOD)
    assert items[1:] == [EventStreamError(code, len(GOOD), message, True, 1)]


@pytest.mark.parametrize(
    ("total", "hlen"),
    [(16, 0), (20, 4), (16 + MAX_HEADERS_LENGTH, MAX_HEADERS_LENGTH), (16 + MAX_PAYLOAD_LENGTH, 0)],
)
def test_limits_are_inclusive(total: int, hlen: int) -> None:
    """Total = 16 + headers, 128 KiB of headers and 16 MiB of payload are all allowed: the
    decoder waits for the rest of the message instead of reporting an error."""
    decoder = EventStreamDecoder()
    assert decoder.feed(prelude(total, hlen)) == []
    assert not decoder.failed


def test_a_fatal_error_stops_the_decoder_for_good() -> None:
    """After a fatal error, later bytes and close() report nothing."""
    decoder = EventStreamDecoder()
    assert len(decoder.feed(GOOD + b"\x00" * 16)) == 2
    assert decoder.failed
    assert decoder.feed(GOOD) == []
    assert decoder.close() == []


def test_message_crc_error_is_exact() -> None:
    """A bad message CRC names both CRCs; the next message keeps its index."""
    bad = bytearray(GOOD)
    bad[-1] ^= 0xFF
    stored = struct.unpack(">I", bytes(bad[-4:]))[0]
    items = decode_all(GOOD + bytes(bad) + GOOD)
    assert items[1] == EventStreamError(
        "bedrock.message-crc",
        len(GOOD),
        f"message CRC mismatch (stored 0x{stored:08x}, computed 0x{zlib.crc32(GOOD[:-4]):08x})",
        False,
        1,
    )
    assert items[2] == EventStreamMessage(
        2, 2 * len(GOOD), 3 * len(GOOD), (EventStreamHeader("a", 7, "b"),), b"xy"
    )


@pytest.mark.parametrize("left", [1, 11, 12, len(GOOD) - 1])
def test_truncated_tail_is_exact(left: int) -> None:
    """close() reports how many bytes of an incomplete message were left, where it started."""
    decoder = EventStreamDecoder()
    decoder.feed(GOOD)
    decoder.feed(GOOD[:left])
    assert decoder.close() == [
        EventStreamError(
            "bedrock.truncated",
            len(GOOD),
            f"stream ends inside a message ({left} byte(s) of an incomplete message)",
            True,
            1,
        )
    ]
    assert decoder.close() == []


def test_a_complete_stream_closes_cleanly() -> None:
    """No bytes left over: close() reports nothing."""
    decoder = EventStreamDecoder()
    decoder.feed(GOOD)
    assert decoder.close() == []


def _headers_message(raw_headers: bytes) -> bytes:
    total = 16 + len(raw_headers)
    return with_crc(prelude(total, len(raw_headers)) + raw_headers)


@pytest.mark.parametrize(
    ("raw_headers", "code", "message"),
    [
        (b"\x01a\x0b", "bedrock.header-type", "header 'a' has unknown type 11"),
        (b"\x01a\x00\x01a\x01", "bedrock.duplicate-header", "header 'a' appears twice"),
        (b"\x01a", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x04\x00\x00\x00", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x07\x00", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x07\x00\x05abcd", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x08" + b"\x00" * 7, "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x09" + b"\x00" * 15, "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x02", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x03\x00", "bedrock.headers", "a header runs past the headers section"),
        (b"\x01a\x05" + b"\x00" * 7, "bedrock.headers", "a header runs past the headers section"),
    ],
)
def test_header_errors_are_exact(raw_headers: bytes, code: str, message: str) -> None:
    """Bad headers in a well-framed message: not fatal, the next message decodes."""
    bad = _headers_message(raw_headers)
    items = decode_all(bad + GOOD)
    assert items[0] == EventStreamError(code, 0, message, False, 0)
    assert isinstance(items[1], EventStreamMessage) and items[1].index == 1


@pytest.mark.parametrize(
    ("raw_headers", "header"),
    [
        (b"\x01a\x00", EventStreamHeader("a", 0, True)),
        (b"\x01a\x01", EventStreamHeader("a", 1, False)),
        (b"\x01a\x02\xff", EventStreamHeader("a", 2, -1)),
        (b"\x01a\x03\x80\x00", EventStreamHeader("a", 3, -32768)),
        (b"\x01a\x04\x00\x00\x01\x00", EventStreamHeader("a", 4, 256)),
        (b"\x01a\x05" + b"\x00" * 7 + b"\x02", EventStreamHeader("a", 5, 2)),
        (b"\x01a\x06\x00\x02\xff\x00", EventStreamHeader("a", 6, b"\xff\x00")),
        (b"\x01a\x07\x00\x02\xc3\xa9", EventStreamHeader("a", 7, "\u00e9")),
        (b"\x01a\x07\x00\x01\xff", EventStreamHeader("a", 7, "\ufffd")),
        (b"\x01\xff\x07\x00\x00", EventStreamHeader("\ufffd", 7, "")),
        (b"\x01a\x08" + b"\xff" * 8, EventStreamHeader("a", 8, Timestamp(-1))),
        (
            b"\x01a\x09" + bytes(range(16)),
            EventStreamHeader("a", 9, uuid.UUID(bytes=bytes(range(16)))),
        ),
    ],
)
def test_each_header_type_ends_exactly_at_the_section_end(
    raw_headers: bytes, header: EventStreamHeader
) -> None:
    """A header that fills the section to its last byte decodes (signed ints, UTF-8 with
    replacement for bad bytes)."""
    (msg,) = decode_all(_headers_message(raw_headers))
    assert isinstance(msg, EventStreamMessage)
    assert msg.headers == (header,)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, 0),
        (False, 1),
        (0, 4),
        (2**31 - 1, 4),
        (-(2**31), 4),
        (2**31, 5),
        (-(2**31) - 1, 5),
        (b"x", 6),
        ("x", 7),
        (Timestamp(5), 8),
        (uuid.UUID(int=1), 9),
    ],
)
def test_inferred_header_types(value: object, kind: int) -> None:
    """(name, value) pairs get the wire type of the value: ints are int32 when they fit."""
    (msg,) = decode_all(encode_message([("h", value)], b""))  # type: ignore[list-item]
    assert isinstance(msg, EventStreamMessage)
    assert msg.headers == (EventStreamHeader("h", kind, value),)  # type: ignore[arg-type]


def test_event_and_exception_headers() -> None:
    """Bedrock's header order; the content type defaults to JSON."""
    (ev,) = decode_all(encode_event("chunk", b"{}"))
    (exc,) = decode_all(encode_exception("throttlingException", b"{}", "text/plain"))
    assert isinstance(ev, EventStreamMessage) and isinstance(exc, EventStreamMessage)
    assert [(h.name, h.value) for h in ev.headers] == [
        (":event-type", "chunk"),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ]
    assert [(h.name, h.value) for h in exc.headers] == [
        (":exception-type", "throttlingException"),
        (":content-type", "text/plain"),
        (":message-type", "exception"),
    ]
    assert (ev.content_type, ev.event_type, ev.exception_type) == (
        "application/json",
        "chunk",
        None,
    )


@pytest.mark.parametrize(
    ("headers", "name"),
    [
        ([(":event-type", "a"), (":exception-type", "b"), (":message-type", "m")], "a"),
        ([(":exception-type", "b"), (":error-code", "c"), (":message-type", "m")], "b"),
        ([(":error-code", "c"), (":message-type", "error")], "c"),
        ([(":message-type", "error")], "error"),
        ([(":event-type", b"bytes"), (":message-type", "m")], "m"),
        ([(":event-type", 5)], "?"),
        ([], "?"),
    ],
)
def test_message_name(headers: list[tuple[str, object]], name: str) -> None:
    """:event-type, else :exception-type, else :error-code, else :message-type, else "?";
    only string values count."""
    (msg,) = decode_all(encode_message(headers, b""))  # type: ignore[arg-type]
    assert isinstance(msg, EventStreamMessage)
    assert msg.name == name
    assert msg.header("nope") is None


def test_spans_and_offsets_across_feeds() -> None:
    """Spans are stream offsets, whatever the feeds."""
    decoder = EventStreamDecoder()
    out = decoder.feed(GOOD[:5]) + decoder.feed(GOOD[5:] + GOOD[:20]) + decoder.feed(GOOD[20:])
    assert [(m.index, m.start, m.end) for m in out if isinstance(m, EventStreamMessage)] == [
        (0, 0, len(GOOD)),
        (1, len(GOOD), 2 * len(GOOD)),
    ]


def test_a_uuid_header_followed_by_another() -> None:
    """A UUID takes exactly 16 bytes: the next header decodes after it."""
    u = uuid.UUID(int=7)
    (msg,) = decode_all(encode_message([("u", u), ("s", "x")], b""))
    assert isinstance(msg, EventStreamMessage)
    assert msg.headers == (EventStreamHeader("u", 9, u), EventStreamHeader("s", 7, "x"))


def test_a_bad_prelude_is_reported_as_soon_as_it_is_complete() -> None:
    """Twelve bytes are a prelude: a bad one is an error at once, not a truncation later."""
    decoder = EventStreamDecoder()
    (err,) = decoder.feed(struct.pack(">III", 16, 0, 1))
    assert isinstance(err, EventStreamError) and err.code == "bedrock.prelude-crc"


def test_the_payload_limit_does_not_count_the_headers() -> None:
    """16 MiB of payload plus headers is within the limits."""
    decoder = EventStreamDecoder()
    assert decoder.feed(prelude(20 + MAX_PAYLOAD_LENGTH, 4)) == []
    assert not decoder.failed


@pytest.mark.parametrize(
    "header",
    [
        EventStreamHeader("n" * 200, 7, "long name"),
        EventStreamHeader("s", 3, -300),
        EventStreamHeader("b", 6, b"\x00" * 40_000),
        EventStreamHeader("t", 8, Timestamp(-1)),
    ],
)
def test_wide_header_values_round_trip(header: EventStreamHeader) -> None:
    """Names up to 255 bytes, negative shorts and timestamps, values over 32 KiB."""
    (msg,) = decode_all(encode_message([header], b"p"))
    assert isinstance(msg, EventStreamMessage)
    assert msg.headers == (header,)


def test_exception_content_type_defaults_to_json() -> None:
    """encode_exception without a content type says application/json."""
    (exc,) = decode_all(encode_exception("throttlingException", b"{}"))
    assert isinstance(exc, EventStreamMessage)
    assert exc.content_type == "application/json"
