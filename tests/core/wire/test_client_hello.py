"""What a TLS ClientHello asks for (replayproxy._core.wire.client_hello): the SNI and ALPN offers
of real ClientHellos (OpenSSL's, through Python's ssl), of built ones split over records and
reads, and nothing but ``None`` or ``NotAClientHello`` for any other bytes."""

from __future__ import annotations

import ssl

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.wire.client_hello import (
    ClientHello,
    NotAClientHello,
    parse_client_hello,
)


def openssl_hello(sni: str | None, alpn: list[str]) -> bytes:
    """The first flight of a real client: OpenSSL's ClientHello, as Python's ssl sends it."""
    context = ssl.create_default_context()
    context.check_hostname = False
    if alpn:
        context.set_alpn_protocols(alpn)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=sni)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def _vector(data: bytes, size: int) -> bytes:
    return len(data).to_bytes(size, "big") + data


def built_hello(sni: str | None, alpn: tuple[bytes, ...], record_size: int = 1 << 14) -> bytes:
    """A minimal ClientHello with these extensions (and one unknown one), cut into TLS records
    of at most ``record_size`` bytes."""
    extensions = b"\xaa\xaa" + _vector(b"grease", 2)  # an extension nobody knows
    if sni is not None:
        name = b"\x00" + _vector(sni.encode(), 2)
        extensions += b"\x00\x00" + _vector(_vector(name, 2), 2)
    if alpn:
        offers = b"".join(_vector(p, 1) for p in alpn)
        extensions += b"\x00\x10" + _vector(_vector(offers, 2), 2)
    body = b"\x03\x03" + bytes(32) + _vector(b"s" * 32, 1) + _vector(b"\x13\x01", 2)
    body += _vector(b"\x00", 1) + _vector(extensions, 2)
    message = b"\x01" + _vector(body, 3)
    records = b""
    for at in range(0, len(message), record_size):
        records += b"\x16\x03\x01" + _vector(message[at : at + record_size], 2)
    return records


@pytest.mark.parametrize(
    ("sni", "alpn"),
    [
        ("api.openai.com", ["h2", "http/1.1"]),
        ("api.anthropic.com", ["http/1.1"]),
        (None, ["h2"]),
        ("example.test", []),
    ],
)
def test_a_real_openssl_client_hello_gives_its_sni_and_alpn_offers(
    sni: str | None, alpn: list[str]
) -> None:
    """OpenSSL's own ClientHello (with its key shares, GREASE-free extensions, padding) reads as
    the server name and protocols the client was configured with, in its order."""
    hello = openssl_hello(sni, alpn)
    assert parse_client_hello(hello) == ClientHello(sni, tuple(p.encode() for p in alpn))


def test_every_prefix_of_a_real_client_hello_needs_more() -> None:
    """Cut anywhere short of its end, a ClientHello is not complete yet (``None``)."""
    hello = openssl_hello("api.openai.com", ["h2", "http/1.1"])
    for n in range(len(hello)):
        assert parse_client_hello(hello[:n]) is None, n


_HOSTS = st.from_regex(r"[a-z0-9]{1,20}(\.[a-z0-9]{1,20}){0,3}", fullmatch=True)
_PROTOCOLS = st.lists(st.binary(min_size=1, max_size=20), max_size=5).map(tuple)


@given(
    sni=st.none() | _HOSTS,
    alpn=_PROTOCOLS,
    record_size=st.integers(min_value=1, max_value=300),
    extra=st.binary(max_size=50),
)
def test_a_client_hello_split_over_records_reads_the_same(
    sni: str | None, alpn: tuple[bytes, ...], record_size: int, extra: bytes
) -> None:
    """However the handshake message is fragmented into records, and whatever follows it, the
    ClientHello reads the same; every shorter prefix needs more."""
    data = built_hello(sni, alpn, record_size)
    assert parse_client_hello(data + extra) == ClientHello(sni, alpn)
    for n in range(0, len(data), max(1, len(data) // 20)):
        assert parse_client_hello(data[:n]) is None


@given(st.binary(max_size=400))
def test_any_bytes_are_a_hello_none_or_not_a_client_hello(data: bytes) -> None:
    """Arbitrary bytes never raise anything but ``NotAClientHello``."""
    try:
        result = parse_client_hello(data)
    except NotAClientHello:
        return
    assert result is None or isinstance(result, ClientHello)


@given(st.data())
def test_a_mutated_client_hello_never_raises_anything_else(data: st.DataObject) -> None:
    """A real ClientHello with one byte changed reads as some ClientHello, needs more, or is
    ``NotAClientHello``: no IndexError, no UnicodeDecodeError."""
    hello = bytearray(built_hello("api.openai.com", (b"h2", b"http/1.1")))
    at = data.draw(st.integers(min_value=0, max_value=len(hello) - 1))
    hello[at] = data.draw(st.integers(min_value=0, max_value=255))
    try:
        result = parse_client_hello(bytes(hello))
    except NotAClientHello:
        return
    assert result is None or isinstance(result.alpn, tuple)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", "not a TLS handshake record"),
        (b"\x16\x03\x01\x00\x00", "a TLS record of 0 bytes"),
        (b"\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00", "type 2, not ClientHello"),
        (b"\x16\x03\x01\x00\x04\x01\xff\xff\xff", f"of {4 + 0xFFFFFF} bytes"),
    ],
)
def test_other_bytes_are_named_for_what_they_are(data: bytes, words: str) -> None:
    """An HTTP request, an empty record, a ServerHello, an oversized hello: each says so."""
    with pytest.raises(NotAClientHello, match=words):
        parse_client_hello(data)
