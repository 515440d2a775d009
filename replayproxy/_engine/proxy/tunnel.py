"""A CONNECT tunnel on the replay origin: ``200 Connection established``, then TLS terminated
with the proxy's CA (or plain HTTP inside the tunnel), then the connection served as any other,
matched as if sent to the tunnel's host.

What mitmproxy decides in its ``tls_clienthello`` hook the engine decides here, before the
handshake: the client's first bytes are *peeked* (read from the socket with ``MSG_PEEK``, so
the TLS layer still reads them from the start) and parsed as a ClientHello
(:mod:`~replayproxy._core.wire.client_hello`). Its SNI and the CONNECT host name the
certificate (as mitmproxy's ``TlsConfig.get_cert`` does); its ALPN offers and the versions the
cassette recorded for that host pick the one protocol the server offers back
(:func:`~replayproxy._core.replay.http_version.choose_alpn`; with nothing to go by, the client's
first offer the engine speaks, as mitmproxy picks it). Then ``StreamWriter.start_tls``
upgrades the same connection, and the origin serves it: HTTP/2 when ``h2`` was agreed (its
preface comes first), HTTP/1.1 otherwise, WebSocket upgrades included.

The transport stops reading once the CONNECT head is read, so the ClientHello stays in the
kernel for the peek; the socket is watched through a duplicate descriptor (the loop refuses a
reader on a descriptor a transport owns). A client that sent bytes before the ``200`` (which no
real client does: it cannot know the tunnel is up) gets a 400.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast
from urllib.parse import urlsplit

from replayproxy._core.replay.http_version import H2, HTTP11, RecordedVersions, choose_alpn
from replayproxy._core.wire.client_hello import (
    MAX_CLIENT_HELLO,
    ClientHello,
    NotAClientHello,
    parse_client_hello,
)
from replayproxy._core.wire.preface import Preface, classify
from replayproxy._engine.http1_reader import StampedReader
from replayproxy._engine.http1_writer import send_plain

if TYPE_CHECKING:
    from replayproxy._engine.session import ReplaySession

__all__ = ["ESTABLISHED", "ServerContexts", "TunnelRefused", "open_tunnel"]

log = logging.getLogger(__name__)

ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"

_SPOKEN = (H2, HTTP11, b"http/1.0")
"""The ALPN protocols the engine serves, in the order mitmproxy prefers them."""

_MORE_DELAY = 0.001
"""Seconds between peeks while a ClientHello arrives in pieces (the socket stays readable
with the first piece in it, so readiness cannot tell that more came)."""


_VERSIONS = RecordedVersions()
"""The recorded versions per host of the cassette last served (shared by every origin in the
process: switching cassettes only recomputes the table)."""


class ServerContexts(Protocol):
    """Where TLS server contexts come from: a certificate for ``names`` (the first is its
    common name), signed by the CA clients were told to trust, offering ``alpn`` (``None``:
    no ALPN). ``ca_cert`` is that CA's certificate file. The mitmproxy shell's
    implementation is ``mitm/leaf_certs.py``."""

    @property
    def ca_cert(self) -> str: ...

    def server_context(self, names: Sequence[str], alpn: bytes | None) -> ssl.SSLContext: ...


class TunnelRefused(Exception):
    """The tunnel cannot be opened; the message is the one line the client gets."""


def _authority(target: str) -> tuple[str, int]:
    """``host`` and ``port`` of a CONNECT target (``request.url`` is ``http://HOST:PORT``)."""
    try:
        parts = urlsplit(target)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        shown = target.removeprefix("http://")
        raise TunnelRefused(f"CONNECT needs a HOST:PORT target, not {shown!r}")
    return host, port


def _base(scheme: str, host: str, port: int) -> tuple[str, str]:
    """``(scheme, netloc)`` as a recorded URL spells it: default port left out, IPv6 bracketed."""
    netloc = f"[{host}]" if ":" in host else host
    if port != {"http": 80, "https": 443}[scheme]:
        netloc += f":{port}"
    return scheme, netloc


async def _peek(sock: socket.socket, timeout: float) -> bytes:
    """The bytes the client has sent first, left unread: a whole ClientHello, or whatever
    else came (``b""``: it closed). :class:`TunnelRefused` past ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    watch = socket.socket(fileno=os.dup(sock.fileno()))
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(watch.fileno(), readable)
    try:
        async with asyncio.timeout(timeout):
            await ready
            while True:
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    seen = watch.recv(MAX_CLIENT_HELLO, socket.MSG_PEEK)
                    kind = classify(seen)
                    if not seen or kind is Preface.HTTP1 or kind is Preface.H2:
                        return seen
                    if kind is Preface.TLS and parse_client_hello(seen) is not None:
                        return seen
                    if len(seen) >= MAX_CLIENT_HELLO:
                        raise NotAClientHello(f"a ClientHello of more than {len(seen)} bytes")
                await asyncio.sleep(_MORE_DELAY)
    except TimeoutError:
        raise TunnelRefused(f"no request in the tunnel within {timeout:g} s") from None
    except NotAClientHello as e:
        raise TunnelRefused(f"the client's TLS handshake is malformed: {e}") from None
    finally:
        loop.remove_reader(watch.fileno())
        watch.close()


def _protocol(session: ReplaySession, host: str, hello: ClientHello) -> bytes | None:
    """The one ALPN protocol to offer back (``None``: no ALPN, HTTP/1.1)."""
    recorded = _VERSIONS.for_host(session.cassette, host, match_host=session.options.match_host)
    chosen = choose_alpn(session.http_version, recorded, hello.alpn)
    if chosen is None:  # nothing to go by: the client's first offer spoken, as mitmproxy picks
        chosen = next((offer for offer in hello.alpn if offer in _SPOKEN), None)
    return chosen


async def _establish(
    target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float
) -> tuple[str, int, bytes]:
    """Answer ``CONNECT target`` with the ``200`` and peek at what the client sends first:
    ``(host, port, first bytes)``; :class:`TunnelRefused` if the tunnel cannot be opened."""
    host, port = _authority(target)
    transport = cast(asyncio.Transport, writer.transport)
    transport.pause_reading()  # keep what comes next in the kernel for the peek
    if isinstance(reader, StampedReader) and reader.has_partial_request:
        raise TunnelRefused("the client sent bytes before the tunnel was established")
    writer.write(ESTABLISHED)
    await writer.drain()
    return host, port, await _peek(transport.get_extra_info("socket"), timeout)


async def open_tunnel(
    target: str,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    session: ReplaySession,
    contexts: ServerContexts,
    timeout: float,
) -> tuple[str, str] | None:
    """Answer ``CONNECT target`` on ``writer``'s connection and start what comes through it
    (TLS, or plain HTTP): where the tunnel's requests go, ``(scheme, netloc)`` as a recorded
    URL spells it, for the origin to serve the connection with; or ``None`` if there is
    nothing to serve: the client left, the tunnel was refused (a 400 saying why) or its TLS
    handshake failed (one log line naming the host and what to check)."""
    try:
        host, port, first = await _establish(target, reader, writer, timeout)
    except TunnelRefused as e:
        if not writer.transport.is_closing():
            await send_plain(writer, 400, f"replayproxy: bad request: {e}\n".encode())
        return None
    if not first:
        return None
    hello = parse_client_hello(first) if classify(first) is Preface.TLS else None
    if hello is None:  # plain HTTP (or h2c) inside the tunnel
        cast(asyncio.Transport, writer.transport).resume_reading()
        return _base("http", host, port)
    names = list(dict.fromkeys(n for n in (hello.sni, host) if n))
    context = contexts.server_context(names, _protocol(session, hello.sni or host, hello))
    try:
        await writer.start_tls(context, ssl_handshake_timeout=timeout)
    except (ssl.SSLError, ConnectionError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", None) or type(e).__name__
        log.warning(
            "replayproxy: TLS handshake with a client for %s failed (%s); does the client "
            "trust replayproxy's CA (%s)?",
            names[0],
            reason,
            contexts.ca_cert,
        )
        return None
    return _base("https", host, port)
