"""Refuse every non-loopback socket connection in this process (pytest-recording's
``--block-network``), so a client that bypasses the proxy fails loudly, offline.

:func:`blocked_network` patches ``socket.socket.connect`` / ``connect_ex`` for a ``with``
block. Loopback addresses (``127.0.0.0/8``, ``::1``, ``localhost``) and Unix sockets stay
allowed: the replay servers, the proxy and local test servers live there. Every refused
attempt is kept in :attr:`NetworkBlock.attempts`, so a caller can report it even when the
client swallowed the error. Connections by other threads of the process are refused too;
use it only while nothing should reach the network (replay that never forwards).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterator
from typing import Any

from replayproxy.errors import ReplayProxyError

__all__ = ["NetworkBlock", "NetworkBlockedError", "blocked_network", "is_loopback"]


class NetworkBlockedError(ReplayProxyError, ConnectionRefusedError):
    """A connection to a non-loopback address while the network is blocked."""


def is_loopback(address: Any) -> bool:
    """Whether a ``connect()`` address stays on this machine's loopback (or is not IP)."""
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths, abstract sockets: local by nature
    host = str(address[0]).split("%", 1)[0]
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: connect() would resolve it, i.e. use the network
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


class NetworkBlock:
    """The refused connection attempts of one :func:`blocked_network` block."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._lock = threading.Lock()

    def refuse(self, address: Any) -> NetworkBlockedError:
        where = f"{address[0]}:{address[1]}" if len(address) > 1 else str(address[0])
        with self._lock:
            self.attempts.append(where)
        return NetworkBlockedError(
            f"replayproxy blocked a network connection to {where}: only loopback connections "
            "are allowed while replaying (a client that does not use the proxy or base URL?)"
        )


_active: list[NetworkBlock] = []
_lock = threading.Lock()
_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex


def _check(sock: socket.socket, address: Any) -> None:
    block = _active[-1] if _active else None
    inet = sock.family in (socket.AF_INET, socket.AF_INET6)
    if block is not None and inet and not is_loopback(address):
        raise block.refuse(address)


def _connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _original_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _original_connect_ex(self, address)


@contextlib.contextmanager
def blocked_network() -> Iterator[NetworkBlock]:
    """Refuse non-loopback connections from this process for the ``with`` block."""
    block = NetworkBlock()
    with _lock:
        _active.append(block)
        socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
    try:
        yield block
    finally:
        with _lock:
            _active.remove(block)
            if not _active:
                socket.socket.connect = _original_connect  # type: ignore[method-assign]
                socket.socket.connect_ex = _original_connect_ex  # type: ignore[method-assign]
