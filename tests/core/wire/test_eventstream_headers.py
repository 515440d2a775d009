"""Event-stream header sections that end exactly where a field would start: bedrock.headers."""

from __future__ import annotations

import struct
import zlib

import pytest

from replayproxy._core.wire.eventstream import EventStreamError, EventStreamMessage, decode_all


def raw_message(headers: bytes, payload: bytes = b"{}") -> bytes:
    """An event-stream message with these exact header bytes and correct CRCs."""
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize(
    "headers",
    [
        b"\x03abc",  # the name fills the section: no type byte
        b"\x04abc",  # the name itself runs past the section
        b"\x01a\x04\x00\x00",  # an int32 value cut short
        b"\x01a\x07\x00",  # a string length cut short
        b"\x01a\x08\x00\x00\x00\x00",  # a timestamp cut short
        b"\x01a\x09" + b"\x00" * 15,  # a uuid cut short
    ],
)
def test_a_header_running_past_its_section_is_reported(headers: bytes) -> None:
    """A header cut by the end of the header section is bedrock.headers, never an
    IndexError or struct.error."""
    (err,) = decode_all(raw_message(headers))
    assert isinstance(err, EventStreamError)
    assert err.code == "bedrock.headers" and err.offset == 0 and err.index == 0


def test_a_header_ending_exactly_at_the_section_end_decodes() -> None:
    """The boundary case the other way: a header whose value ends at the section's last byte."""
    (msg,) = decode_all(raw_message(b"\x01a\x00\x02bc\x07\x00\x01z"))
    assert isinstance(msg, EventStreamMessage)
    assert [(h.name, h.value) for h in msg.headers] == [("a", True), ("bc", "z")]
