"""The msgpack codec: byte-exact round trips, versioning, torn tails and corruption."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy.core import codec
from replayproxy.core.model import Cassette, Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy.errors import CassetteFormatError, CassetteVersionError

headers = st.lists(
    st.tuples(st.binary(min_size=1, max_size=20), st.binary(max_size=40)), max_size=6
)
frames = st.lists(
    st.builds(Frame, st.integers(min_value=0, max_value=2**62), st.binary(max_size=300)),
    max_size=20,
)
responses = st.one_of(
    st.none(),
    st.builds(
        Response,
        status=st.integers(100, 599),
        reason=st.text(max_size=20),
        http_version=st.sampled_from(["HTTP/1.1", "HTTP/2.0"]),
        headers=headers.map(tuple),
        head_offset_ns=st.integers(0, 2**62),
        frames=frames.map(tuple),
    ),
)
interactions = st.builds(
    Interaction,
    request=st.builds(
        Request,
        method=st.sampled_from(["GET", "POST"]),
        url=st.text(min_size=1, max_size=60),
        http_version=st.just("HTTP/1.1"),
        headers=headers.map(tuple),
        body=st.binary(max_size=200),
    ),
    response=responses,
    end=st.builds(
        Ending, st.sampled_from(list(EndKind)), st.integers(0, 2**62), st.text(max_size=30)
    ),
    faults=st.lists(st.text(max_size=20), max_size=3).map(tuple),
    recorded_at=st.one_of(st.none(), st.floats(0, 2e9)),
)
cassettes = st.builds(
    Cassette,
    interactions=st.lists(interactions, max_size=5).map(tuple),
    meta=st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3).map(
        lambda d: tuple(d.items())
    ),
)


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


@given(cassettes)
def test_round_trip_is_exact(cassette: Cassette) -> None:
    """Any cassette decodes to an equal one, and re-encodes to the same bytes."""
    data = codec.encode(cassette)
    decoded = codec.decode(data)
    assert decoded.torn_at is None
    assert decoded.cassette == cassette
    assert codec.encode(decoded.cassette) == data


def test_every_cut_of_the_last_record_is_a_torn_tail() -> None:
    """Cutting the file anywhere inside the last record keeps everything before it."""
    data = codec.encode(sample())
    first_end = len(codec.encode(Cassette(sample().interactions[:1])))
    for cut in range(first_end + 1, len(data)):
        decoded = codec.decode(data[:cut])
        assert decoded.torn_at == first_end
        assert len(decoded.cassette.interactions) == 1


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
    bad = msgpack.packb({"type": "interaction", "request": 5}, use_bin_type=True)
    with pytest.raises(CassetteFormatError, match=rf"at byte {len(head) + len(good)}: corrupt"):
        codec.decode(head + good + bad + good)


def test_bad_end_kind_lists_valid_ones() -> None:
    """An unknown end kind says which kinds exist."""
    rec = msgpack.unpackb(codec.encode_interaction(sample().interactions[0]), raw=False)
    rec["end"]["kind"] = "exploded"
    data = codec.encode_header() + msgpack.packb(rec, use_bin_type=True)
    with pytest.raises(CassetteFormatError, match="complete, reset"):
        codec.decode(data)
