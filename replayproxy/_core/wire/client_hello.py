"""What a TLS ClientHello asks for (pure): the server name (SNI) and the ALPN protocols offered.

A forward-mode replay answers TLS itself (:mod:`replayproxy._engine.proxy.tunnel`) and must pick
the certificate and the HTTP version before the handshake starts, as mitmproxy does in its
``tls_clienthello`` hook. Python's :mod:`ssl` shows neither the client's ALPN offers nor, before
the handshake, its SNI, so the engine peeks at the first bytes the client sends after CONNECT
and reads them here: TLS records (RFC 8446 §5.1) carrying one handshake message of type
``client_hello`` (§4.1.2), whose ``server_name`` (RFC 6066 §3) and
``application_layer_protocol_negotiation`` (RFC 7301 §3.1) extensions are all that is read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_CLIENT_HELLO", "ClientHello", "NotAClientHello", "parse_client_hello"]

MAX_CLIENT_HELLO = 1 << 16
"""Bytes a ClientHello may take (its handshake message has a 24-bit length, but every real
client's fits in a few KiB, post-quantum key shares included)."""

_HANDSHAKE = 22
_CLIENT_HELLO = 1
_SERVER_NAME = 0
_ALPN = 16
_HOST_NAME = 0


class NotAClientHello(ValueError):
    """The bytes are not the start of a TLS ClientHello (or it is malformed)."""


@dataclass(frozen=True, slots=True)
class ClientHello:
    """The parts of a ClientHello a TLS server picks its answer by."""

    sni: str | None
    """The host name asked for (``None``: the client sent none, as for IP addresses)."""
    alpn: tuple[bytes, ...]
    """The application protocols offered, in the client's order of preference."""


class _Cursor:
    """Reads big-endian fields from a message, failing with :class:`NotAClientHello`."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise NotAClientHello("a ClientHello field runs past its end")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def number(self, size: int) -> int:
        return int.from_bytes(self.take(size), "big")

    def vector(self, size: int) -> bytes:
        """A field preceded by its length in ``size`` bytes."""
        return self.take(self.number(size))

    @property
    def left(self) -> int:
        return len(self.data) - self.at


def _handshake_bytes(data: bytes) -> bytes | None:
    """The handshake message carried by the TLS records at the start of ``data``: all of it,
    or ``None`` if more records are needed."""
    message = b""
    at = 0
    while True:
        if len(data) - at < 5:
            return None
        kind, length = data[at], int.from_bytes(data[at + 3 : at + 5], "big")
        if kind != _HANDSHAKE or data[at + 1] != 3:
            raise NotAClientHello("not a TLS handshake record")
        if length == 0 or length > 1 << 14:
            raise NotAClientHello(f"a TLS record of {length} bytes")
        if len(data) - at - 5 < length:
            return None
        message += data[at + 5 : at + 5 + length]
        at += 5 + length
        if len(message) >= 4:
            if message[0] != _CLIENT_HELLO:
                raise NotAClientHello(f"handshake message type {message[0]}, not ClientHello")
            whole = 4 + int.from_bytes(message[1:4], "big")
            if whole > MAX_CLIENT_HELLO:
                raise NotAClientHello(f"a ClientHello of {whole} bytes")
            if len(message) >= whole:
                return message[4:whole]


def parse_client_hello(data: bytes) -> ClientHello | None:
    """The ClientHello at the start of ``data`` (the bytes a client sent first), or ``None``
    if it is not complete yet; :class:`NotAClientHello` if the bytes are something else."""
    body = _handshake_bytes(data)
    if body is None:
        return None
    hello = _Cursor(body)
    hello.take(2 + 32)  # legacy_version, random
    hello.vector(1)  # legacy_session_id
    hello.vector(2)  # cipher_suites
    hello.vector(1)  # legacy_compression_methods
    sni: str | None = None
    alpn: tuple[bytes, ...] = ()
    if hello.left == 0:  # no extensions at all (TLS 1.0-era clients)
        return ClientHello(sni, alpn)
    extensions = _Cursor(hello.vector(2))
    while extensions.left:
        kind = extensions.number(2)
        content = _Cursor(extensions.vector(2))
        if kind == _SERVER_NAME:
            names = _Cursor(content.vector(2))
            while names.left:
                name_type, name = names.number(1), names.vector(2)
                if name_type == _HOST_NAME and sni is None:
                    sni = name.decode("ascii", "replace")
        elif kind == _ALPN:
            offers = _Cursor(content.vector(2))
            found = []
            while offers.left:
                found.append(offers.vector(1))
            alpn = tuple(found)
    return ClientHello(sni, alpn)
