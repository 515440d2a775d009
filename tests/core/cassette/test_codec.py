"""The msgpack codec: byte-exact round trips, versioning, torn tails and corruption."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given

from replayproxy._core.cassette import codec, records
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._errors import CassetteFormatError, CassetteVersionError
from replayproxy.testing.strategies import cassettes


def sample() -> Cassette:
    req = Request("POST", "https://api.example.test/v1/chat", "HTTP/1.1", ((b"a", b"1"),), b"{}")
    resp = Response(
        200,
        "OK",
        "HTTP/1.1",
        ((b"content-type", b"text/event-stream"),),
        5,
        (
            Frame(10, b"data: 1\n\n"),
            Frame(20, b"data: 2\n\n"),
        ),
    )
    ok = Interaction(req, resp, Ending(EndKind.COMPLETE, 25))
    return Cassette((ok, ok))


@given(cassettes())
def test_round_trip_is_exact(cassette: Cassette) -> None:
    """Any cassette decodes to an equal one, and re-encodes to the same bytes."""
    data = codec.encode(cassette)
    decoded = codec.decode(data)
    assert decoded.torn_at is None
    assert decoded.cassette == cassette
    assert codec.encode(decoded.cassette) == data


@pytest.mark.parametrize("version", [1, 2])
def test_every_cut_of_the_last_record_is_a_torn_tail(version: int) -> None:
    """Cutting the file anywhere inside the last record keeps everything before it (v1 and v2:
    the scan for intact records after a short one finds none)."""
    data = codec.encode(sample(), version=version)
    first_end = len(codec.encode(Cassette(sample().interactions[:1]), version=version))
    for cut in range(first_end + 1, len(data)):
        decoded = codec.decode(data[:cut])
        assert decoded.torn_at == first_end
        assert len(decoded.cassette.interactions) == 1
        assert decoded.version == version


@given(cassettes())
def test_version_1_still_round_trips(cassette: Cassette) -> None:
    """v1 files stay readable: any cassette written as v1 decodes equal, and says it is v1."""
    data = codec.encode(cassette, version=1)
    decoded = codec.decode(data)
    assert decoded.version == 1 and decoded.cassette == cassette
    assert codec.encode(decoded.cassette, version=1) == data


def test_unknown_version_is_a_clear_error() -> None:
    """A version this build cannot read names the version and what is readable."""
    data = msgpack.packb({"format": codec.FORMAT_NAME, "version": 99, "meta": {}})
    with pytest.raises(
        CassetteVersionError, match=r"at byte 0: unknown cassette format version 99"
    ):
        codec.decode(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b"\x93\x01\x02\x03", "not a replayproxy cassette"),
        (b"hello world", "not a replayproxy cassette"),
    ],
)
def test_foreign_bytes_are_rejected(data: bytes, message: str) -> None:
    """Files that are not cassettes fail with a one-line message."""
    with pytest.raises(CassetteFormatError, match=message) as e:
        codec.decode(data)
    assert "\n" not in str(e.value)


def test_corrupt_record_names_its_offset() -> None:
    """A structurally wrong record in the middle is an error naming its byte offset."""
    head = codec.encode_header()
    good = codec.encode_interaction(sample().interactions[0])
    bad = records.frame(msgpack.packb({"type": "interaction", "request": 5}, use_bin_type=True))
    with pytest.raises(
        CassetteFormatError,
        match=rf"at byte {len(head) + len(good)}: interaction 1: interaction.request has the wrong",
    ):
        codec.decode(head + good + bad + good)


def test_bad_end_kind_lists_valid_ones() -> None:
    """An unknown end kind says which kinds exist."""
    record = codec.encode_interaction(sample().interactions[0])
    rec = msgpack.unpackb(record[records.HEAD_SIZE :], raw=False)
    rec["end"]["kind"] = "exploded"
    data = codec.encode_header() + records.frame(msgpack.packb(rec, use_bin_type=True))
    with pytest.raises(CassetteFormatError, match="complete, reset"):
        codec.decode(data)
