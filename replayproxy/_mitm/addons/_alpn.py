"""The HTTP version a TLS client is answered with in forward mode: the ALPN protocol the
replay session's ``http_version`` option asks for, decided in
:func:`~replayproxy._core.replay.http_version.choose_alpn`.

mitmproxy chooses the client's ALPN protocol in ``alpn_select_callback``
(``mitmproxy/addons/tlsconfig.py``, the same in 11.0.2 and 12.x): the connection's
``client.alpn`` if set, else the upstream's (none under ``connection_strategy=lazy``), else
the client's first offer it speaks. ``TlsConfig.tls_start_client`` hands it ``client.alpn``
as read after ``tls_clienthello``, the hook that sees the client's offers and SNI first; so
setting ``client.alpn`` there picks the protocol, and mitmproxy still builds the TLS context
(certificate, ciphers) as always. After the handshake mitmproxy overwrites ``client.alpn``
with what was negotiated.
"""

from __future__ import annotations

from typing import Any, Protocol

from mitmproxy import ctx, tls

from replayproxy._core.replay.http_version import RecordedVersions, choose_alpn
from replayproxy._engine.session import ReplaySession

__all__ = ["AlpnChoice"]


class _Serving(Protocol):
    """What :class:`AlpnChoice` reads: the replayer's current session (switched per test)."""

    session: ReplaySession | None


class AlpnChoice:
    """Answer each TLS client with the HTTP version its session's ``http_version`` asks for."""

    def __init__(self, serving: _Serving) -> None:
        self._serving = serving
        self._versions = RecordedVersions()

    def tls_clienthello(self, data: tls.ClientHelloData) -> None:
        session = self._serving.session
        if session is None:
            return
        hello = data.client_hello
        host = hello.sni
        if not host and data.context.server.address:
            host = data.context.server.address[0]  # the CONNECT target
        recorded = self._versions.for_host(
            session.cassette, host, match_host=session.options.match_host
        )
        opts: Any = ctx.options
        alpn = choose_alpn(
            session.http_version, recorded, tuple(hello.alpn_protocols), http2=opts.http2
        )
        if alpn is not None:
            data.context.client.alpn = alpn
