"""Tests for the AWS event-stream decoder and encoder (replayproxy._core.wire.eventstream)."""

from __future__ import annotations

import json
import struct
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.wire.eventstream import (
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
from tests.check.framing import bedrock_body, bedrock_messages, payload_lines

Item = EventStreamMessage | EventStreamError


def feed_split(data: bytes, cuts: list[int]) -> list[Item]:
    decoder = EventStreamDecoder()
    out: list[Item] = []
    prev = 0
    for cut in [*sorted(cuts), len(data)]:
        out += decoder.feed(data[prev:cut])
        prev = cut
    return [*out, *decoder.close()]


def test_empty_message_matches_the_aws_test_vector() -> None:
    """An empty message encodes to the AWS spec's published bytes (prelude and message CRC)."""
    assert encode_message([], b"").hex() == "000000100000000005c248eb7d98c8ff"


def test_all_header_types_round_trip_byte_exact() -> None:
    """Every header type decodes to its value and re-encodes to the same bytes."""
    headers = [
        EventStreamHeader("t", 0, True),
        EventStreamHeader("f", 1, False),
        EventStreamHeader("b", 2, -5),
        EventStreamHeader("s", 3, 300),
        EventStreamHeader("i", 4, 70000),
        EventStreamHeader("l", 5, 2**40),
        EventStreamHeader("by", 6, b"\x00\x01"),
        EventStreamHeader("str", 7, "h\u00e9"),
        EventStreamHeader("ts", 8, Timestamp(1_700_000_000_000)),
        EventStreamHeader("u", 9, uuid.UUID(int=42)),
    ]
    raw = encode_message(headers, b"payload")
    (msg,) = decode_all(raw)
    assert isinstance(msg, EventStreamMessage)
    assert msg.headers == tuple(headers) and msg.payload == b"payload"
    assert (msg.start, msg.end) == (0, len(raw))
    assert encode_message(msg.headers, msg.payload) == raw


def test_real_converse_stream_decodes() -> None:
    """The real ConverseStream payloads come back with their event types and JSON payloads."""
    body = bedrock_body()
    items = decode_all(body)
    assert all(isinstance(m, EventStreamMessage) for m in items)
    msgs = [m for m in items if isinstance(m, EventStreamMessage)]
    expected = [json.loads(p) for p in payload_lines("bedrock-converse")]
    assert [{m.name: json.loads(m.payload)} for m in msgs] == expected
    assert msgs[0].event_type == "messageStart" and msgs[0].content_type == "application/json"
    assert msgs[0].message_type == "event" and msgs[-1].end == len(body)
    assert [m.index for m in msgs] == list(range(len(msgs)))


def test_byte_by_byte_and_every_split_point() -> None:
    """Feeding byte by byte, or split at any single point, gives the same messages."""
    body = b"".join(bedrock_messages()[:3])
    whole = feed_split(body, [])
    assert feed_split(body, list(range(len(body)))) == whole
    for cut in range(len(body) + 1):
        assert feed_split(body, [cut]) == whole


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(0, 10_000), max_size=30))
def test_any_split_gives_same_messages(cuts: list[int]) -> None:
    """Property: any split of a real event-stream body gives the same messages and spans."""
    body = bedrock_body()
    assert feed_split(body, [c % (len(body) + 1) for c in cuts]) == decode_all(body)


def test_bad_prelude_crc_is_fatal() -> None:
    """A corrupt prelude CRC is reported at its offset and ends decoding."""
    a, b, c = bedrock_messages()[:3]
    bad = bytearray(b)
    bad[9] ^= 0xFF
    items = decode_all(a + bytes(bad) + c)
    assert isinstance(items[0], EventStreamMessage)
    err = items[1]
    assert isinstance(err, EventStreamError) and len(items) == 2
    assert (err.code, err.offset, err.fatal, err.index) == ("bedrock.prelude-crc", len(a), True, 1)


def test_bad_message_crc_skips_only_that_message() -> None:
    """A corrupt payload byte fails the message CRC; decoding resumes at the next message."""
    a, b, c = bedrock_messages()[:3]
    bad = bytearray(b)
    bad[-6] ^= 0x01
    items = decode_all(a + bytes(bad) + c)
    assert [type(i).__name__ for i in items] == [
        "EventStreamMessage",
        "EventStreamError",
        "EventStreamMessage",
    ]
    err, last = items[1], items[2]
    assert isinstance(err, EventStreamError) and err.code == "bedrock.message-crc"
    assert not err.fatal and "CRC" in err.message
    assert isinstance(last, EventStreamMessage) and last.index == 2


def test_truncated_tail_reported_at_close() -> None:
    """A body that stops inside a message yields bedrock.truncated at close."""
    a, b = bedrock_messages()[:2]
    for cut in (1, 11, 12, len(b) - 1):
        items = decode_all(a + b[:cut])
        err = items[-1]
        assert isinstance(err, EventStreamError)
        assert (err.code, err.offset, err.index) == ("bedrock.truncated", len(a), 1)


def test_impossible_length_is_fatal() -> None:
    """A total length under 16 (with a valid prelude CRC) is bedrock.length."""
    import zlib

    prelude = struct.pack(">II", 8, 0)
    raw = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 8
    (err,) = decode_all(raw)
    assert isinstance(err, EventStreamError) and err.code == "bedrock.length" and err.fatal


def test_duplicate_header_and_unknown_type() -> None:
    """Duplicate header names and unknown header types are reported, not raised."""
    dup = encode_message([("a", "1"), ("a", "2")], b"")
    (err,) = decode_all(dup)
    assert isinstance(err, EventStreamError) and err.code == "bedrock.duplicate-header"
    raw = bytearray(encode_message([("a", True)], b""))
    raw[12 + 2] = 42  # header type byte
    import zlib

    raw[-4:] = struct.pack(">I", zlib.crc32(bytes(raw[:-4])))
    (err,) = decode_all(bytes(raw))
    assert isinstance(err, EventStreamError) and err.code == "bedrock.header-type"


def test_exception_message_helpers() -> None:
    """encode_exception/encode_event set the message-type headers Bedrock uses."""
    (exc,) = decode_all(encode_exception("throttlingException", b'{"message":"slow"}'))
    assert isinstance(exc, EventStreamMessage)
    assert (exc.message_type, exc.exception_type, exc.name) == (
        "exception",
        "throttlingException",
        "throttlingException",
    )
    (ev,) = decode_all(encode_event("metadata", b"{}"))
    assert isinstance(ev, EventStreamMessage) and ev.name == "metadata"


@settings(max_examples=100, deadline=None)
@given(
    headers=st.dictionaries(
        st.text(min_size=1, max_size=10),
        st.one_of(
            st.booleans(),
            st.integers(-(2**63), 2**63 - 1),
            st.binary(max_size=20),
            st.text(max_size=20),
        ),
        max_size=5,
    ),
    payload=st.binary(max_size=200),
)
def test_encode_decode_round_trip(headers: dict[str, object], payload: bytes) -> None:
    """Property: any headers and payload survive encode then decode."""
    raw = encode_message(list(headers.items()), payload)  # type: ignore[arg-type]
    (msg,) = decode_all(raw)
    assert isinstance(msg, EventStreamMessage)
    assert {h.name: h.value for h in msg.headers} == headers and msg.payload == payload
