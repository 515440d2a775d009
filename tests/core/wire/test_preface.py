"""What a connection speaks from its first bytes (replayproxy._core.wire.preface): HTTP/1.x,
HTTP/2 prior knowledge, TLS, or not decided yet; any split of the same bytes gives the same
answer once one is given."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.wire.preface import H2_PREFACE, Preface, classify
from replayproxy.testing.strategies import splits

# A real ClientHello's first bytes (curl 8 / OpenSSL 3, TLS 1.0 record version), and a TLS 1.2 one.
CLIENT_HELLO = bytes.fromhex("16030102000100")
CLIENT_HELLO_12 = bytes.fromhex("16030302000100")


def test_the_http2_preface_is_h2() -> None:
    """The 24-byte preface, with or without the SETTINGS frame after it, is HTTP/2."""
    assert classify(H2_PREFACE) is Preface.H2
    assert classify(H2_PREFACE + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00") is Preface.H2


@pytest.mark.parametrize("n", range(1, len(H2_PREFACE)))
def test_every_proper_prefix_of_the_preface_needs_more(n: int) -> None:
    """``PRI * HTTP/2.0`` cut anywhere short of its 24 bytes is not decided yet."""
    assert classify(H2_PREFACE[:n]) is Preface.NEED_MORE


def test_nothing_yet_needs_more() -> None:
    """No bytes: not decided."""
    assert classify(b"") is Preface.NEED_MORE


@pytest.mark.parametrize(
    "first",
    [b"GET / HTTP/1.1\r\n", b"POST /v1/chat HTTP/1.1\r\n", b"PO", b"PUT", b"PRI / HTTP/1.1\r\n"],
)
def test_http1_request_lines_are_http1(first: bytes) -> None:
    """Request lines, even one with method PRI that is not the preface, are HTTP/1.x as soon
    as they differ from the preface."""
    assert classify(first) is Preface.HTTP1


@pytest.mark.parametrize("hello", [CLIENT_HELLO, CLIENT_HELLO_12, b"\x16\x03"])
def test_a_tls_client_hello_is_tls(hello: bytes) -> None:
    """A TLS handshake record (0x16, major version 3) is TLS from its second byte."""
    assert classify(hello) is Preface.TLS


def test_one_byte_of_a_tls_record_needs_more() -> None:
    """0x16 alone could still be a TLS record."""
    assert classify(b"\x16") is Preface.NEED_MORE


def test_0x16_not_followed_by_version_3_is_http1() -> None:
    """0x16 then anything but 0x03 is not a TLS record: the HTTP/1.1 reader says what it is."""
    assert classify(b"\x16\x01") is Preface.HTTP1


@given(st.binary(max_size=64))
def test_any_bytes_are_classified_from_their_first_24(data: bytes) -> None:
    """Bytes after the 24th never change the answer, and a decided answer never changes as
    more bytes arrive."""
    kind = classify(data)
    assert classify(data[:24]) is kind
    if kind is not Preface.NEED_MORE:
        assert classify(data + b"more") is kind


@given(
    st.sampled_from([H2_PREFACE + b"\x00\x00", CLIENT_HELLO, b"GET / HTTP/1.1\r\n\r\n"]).flatmap(
        splits
    )
)
def test_any_split_gives_the_same_answer(pieces: list[bytes]) -> None:
    """Read in any split, the first prefix that decides gives the answer the whole gives."""
    whole = b"".join(pieces)
    seen = b""
    for piece in pieces:
        seen += piece
        if classify(seen) is not Preface.NEED_MORE:
            break
    assert classify(seen) is classify(whole)
    assert classify(whole) is not Preface.NEED_MORE
