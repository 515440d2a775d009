"""TLS server contexts for forward-mode replay served by the engine, with mitmproxy's own
certificates: the CA in ``confdir`` (created there on first use, as mitmproxy does) signs a
leaf certificate per host, made by mitmproxy's ``CertStore`` exactly as mitmproxy makes them
(``TlsConfig.get_cert``: the SNI and the CONNECT host as subject alternative names, the first
as common name). So a client trusts the engine wherever it trusted mitmproxy, with the same
``SSL_CERT_FILE`` and friends (:func:`~replayproxy._harness.env.child_env`).

The engine cannot import mitmproxy (docs/explanations/architecture.md); it asks for contexts through
:class:`~replayproxy._engine.proxy.tunnel.ServerContexts`, which :class:`LeafCerts` is.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from mitmproxy import certs

from replayproxy._errors import UsageError

__all__ = ["KEY_SIZE", "LeafCerts"]

KEY_SIZE = 2048
"""mitmproxy's default ``key_size`` option: the CA's key size when it creates one."""

_BASENAME = "mitmproxy"  # mitmproxy's CONF_BASENAME: mitmproxy-ca.pem and the rest


def _general_name(name: str) -> x509.GeneralName:
    """An IP address or a DNS name, as mitmproxy's ``_ip_or_dns_name`` makes them."""
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name.encode("idna").decode())


class LeafCerts:
    """Server contexts whose certificates mitmproxy's CA in ``confdir`` signs (thread-safe;
    one context kept per host names and ALPN protocol)."""

    def __init__(self, confdir: str | os.PathLike[str]) -> None:
        directory = Path(os.path.expanduser(os.fspath(confdir)))
        try:
            self._store = certs.CertStore.from_store(directory, _BASENAME, KEY_SIZE)
        except (OSError, ValueError) as e:  # cryptography's ValueError carries a list too
            words = e.strerror if isinstance(e, OSError) and e.strerror else None
            words = words or (str(e.args[0]) if e.args else type(e).__name__)
            raise UsageError(
                f"cannot use mitmproxy's CA in {directory}: {words.splitlines()[0]} (if its "
                f"{_BASENAME}-ca.pem is damaged, move the {_BASENAME}-ca* files away: a new CA "
                "is made, which clients must then trust)"
            ) from None
        self._ca_cert = str(directory / f"{_BASENAME}-ca-cert.pem")
        self._contexts: dict[tuple[tuple[str, ...], bytes | None], ssl.SSLContext] = {}
        self._lock = threading.Lock()

    @property
    def ca_cert(self) -> str:
        """The CA certificate (PEM) clients must trust."""
        return self._ca_cert

    def server_context(self, names: Sequence[str], alpn: bytes | None) -> ssl.SSLContext:
        key = (tuple(names), alpn)
        with self._lock:
            context = self._contexts.get(key)
            if context is None:
                context = self._contexts[key] = self._make(names, alpn)
            return context

    def _make(self, names: Sequence[str], alpn: bytes | None) -> ssl.SSLContext:
        entry = self._store.get_cert(names[0], [_general_name(n) for n in names])
        pem = entry.privatekey.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        pem += entry.cert.to_pem() + b"".join(c.to_pem() for c in entry.chain_certs)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        # ssl loads keys from files only: a private one, removed as soon as it is read.
        with tempfile.TemporaryDirectory(prefix="replayproxy-leaf-") as private:
            path = Path(private) / "leaf.pem"
            path.touch(mode=0o600)
            path.write_bytes(pem)
            context.load_cert_chain(path)
        if alpn is not None:
            context.set_alpn_protocols([alpn.decode("ascii")])
        return context
