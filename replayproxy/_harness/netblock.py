"""Refuse every way out of this process but loopback (pytest-recording's ``--block-network``),
so a client that bypasses the proxy fails loudly, offline, even if it swallows the error.

:func:`blocked_network` installs, for a ``with`` block, the guards of :mod:`.netpatch`: name
resolution (``getaddrinfo``, ``gethostbyname[_ex]``, ``gethostbyaddr``, ``getnameinfo``, asyncio's
``loop.getaddrinfo``) of a name that is not ``localhost`` (or this machine's own name, which
``socket.getfqdn()`` looks up), and connections and datagrams
(``connect``/``connect_ex``, ``sendto``/``sendmsg`` with any flags, ``_socket.socket`` used
directly, ``create_connection``, asyncio's connections and datagram endpoints) to an address
outside ``127.0.0.0/8`` and ``::1``, each raise :class:`NetworkBlockedError` before any packet
leaves. Unix sockets stay allowed, and so do the hosts given as ``allowed_hosts`` (names, IPs,
``host:port``; a name's resolved addresses are let through with it).

Every refused attempt is kept in :attr:`NetworkBlock.attempts` with the thread that made it and
the label (the test) during which that thread was started (:mod:`.threadorigin`), so a caller
can report it even when the client swallowed the error, and blame a leftover thread correctly.
Other threads of the process are refused too: use it only while nothing should reach the
network (replay that never forwards). Out of reach: C code calling the C library itself
(extensions, ``ctypes``), subprocesses, and references to the unpatched functions taken
before the block began; only a network namespace stops those.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from replayproxy._errors import ReplayProxyError, UsageError
from replayproxy._harness import netpatch, threadorigin

__all__ = [
    "Attempt",
    "NetworkBlock",
    "NetworkBlockedError",
    "allowed_hosts",
    "blocked_network",
    "is_loopback",
]

DEFAULT_HINT = "pass it in allowed_hosts= to blocked_network()"


class NetworkBlockedError(ReplayProxyError, ConnectionRefusedError):
    """A connection, datagram or name lookup outside loopback while the network is blocked."""


def is_loopback(address: Any) -> bool:
    """Whether a socket address stays on this machine's loopback (or is not IP at all)."""
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths, abstract sockets: local by nature
    return _loopback_host(address[0])


def _loopback_host(host: Any) -> bool:
    if host is None or host == "" or host == b"":
        return True  # getaddrinfo(None, port): the local wildcard / loopback, no lookup
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).split("%", 1)[0].lower().rstrip(".")
    if name == "localhost":
        return True
    ip = _ip(name)
    return ip is not None and ip.is_loopback


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None  # a name
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _port(port: Any) -> int | None:
    if isinstance(port, bytes):
        port = port.decode("ascii", "replace")
    if isinstance(port, int) or (isinstance(port, str) and port.isascii() and port.isdigit()):
        return int(port)
    return None  # None, or a service name ("https")


def _norm(host: Any) -> str:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    text = str(host).split("%", 1)[0].lower().rstrip(".").strip("[]")
    ip = _ip(text)
    return text if ip is None else str(ip)


def allowed_hosts(values: Iterable[str], where: str = "allowed_hosts") -> tuple[Allowed, ...]:
    """Parse ``name``, ``IP``, ``name:port``, ``[v6]:port`` (commas separate several);
    a malformed entry is a UsageError naming ``where``."""
    parsed = []
    for value in values:
        if not isinstance(value, str):
            raise UsageError(f"{where}: expected host names or addresses, got {value!r}")
        for entry in filter(None, (e.strip() for e in value.split(","))):
            host, port = entry, None
            if entry.startswith("["):
                host, bracket, rest = entry[1:].partition("]")
                port = rest[1:] if rest.startswith(":") else (rest or None)
                host = host if bracket else ""
            elif entry.count(":") == 1:
                host, port = entry.split(":")
            if not host or (
                port is not None and not (port.isascii() and port.isdigit() and int(port) < 65536)
            ):
                raise UsageError(f"{where}: {entry!r} is not a host, IP or host:port")
            parsed.append(Allowed(_norm(host), None if port is None else int(port)))
    return tuple(parsed)


@dataclass(frozen=True, slots=True)
class Allowed:
    """A host let through the block, on every port or on one."""

    host: str
    port: int | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One refused attempt: what was asked, and by whom.

    ``during``: the block's label (the test running); ``thread``: the thread's name;
    ``started_during``: the label current when that thread was started (None: before any),
    ``main``: whether it is the main thread.
    """

    what: str
    host: str
    port: int | None
    call: str
    during: str | None
    thread: str
    started_during: str | None
    main: bool

    @property
    def where(self) -> str:
        """``host:port`` (``[v6]:port``), or the host alone."""
        if self.port is None:
            return self.host
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def leftover(self) -> bool:
        """Made by a thread started outside the running test (an earlier test's, say)."""
        return not self.main and self.started_during != self.during

    def describe(self) -> str:
        """``name resolution of api.openai.com (socket.getaddrinfo)`` plus the thread, when
        it is not one started by the running test."""
        text = f"{self.what} {self.where} ({self.call})"
        if self.leftover:
            origin = self.started_during or "before any test"
            if self.started_during:
                origin = f"during {origin}"
            text += f" from thread {self.thread!r}, started {origin}"
        return text


class NetworkBlock:
    """The refused attempts of one :func:`blocked_network` block, and what it lets through."""

    def __init__(
        self, allowed: Iterable[Allowed] = (), *, label: str | None = None, hint: str = ""
    ) -> None:
        self.attempts: list[Attempt] = []
        self.allowed = list(allowed)
        self.label = label
        self.hint = hint or DEFAULT_HINT
        self._lock = threading.Lock()

    def permits(self, host: Any, port: Any = None) -> bool:
        """Whether ``host`` (a name or an address) on ``port`` may be used."""
        if _loopback_host(host):
            return True
        name = _norm(host)
        number = _port(port)
        return any(a.host == name and a.port in (None, number) for a in self.allowed)

    def permits_lookup(self, host: Any, port: Any = None) -> bool:
        """Whether a name lookup of ``host`` may run: what :meth:`permits`, and this machine's
        own name (``socket.getfqdn()``, logging and smtplib look it up; it is answered from
        ``/etc/hosts`` on a normal machine). Connections to what it resolves to stay refused
        unless :meth:`permits` allows them."""
        return self.permits(host, port) or _norm(host) == _norm(socket.gethostname())

    def learn(self, host: Any, port: Any, addresses: Iterable[str]) -> None:
        """The addresses an allowed name resolved to are allowed with it."""
        name = _norm(host)
        for entry in list(self.allowed):
            if entry.host == name:
                for address in addresses:
                    learned = Allowed(_norm(address), entry.port)
                    if learned not in self.allowed:
                        self.allowed.append(learned)

    def refuse(self, what: str, host: Any, port: Any, call: str) -> NetworkBlockedError:
        """Record the attempt and return the error to raise."""
        thread = threading.current_thread()
        attempt = Attempt(
            what,
            _norm(host),
            _port(port),
            call,
            self.label,
            thread.name,
            threadorigin.origin_of(thread),
            thread is threading.main_thread(),
        )
        with self._lock:
            self.attempts.append(attempt)
        return NetworkBlockedError(
            f"replayproxy: blocked {attempt.describe()}: only loopback is reachable while "
            f"replaying (a client that does not use the proxy or base URL?); to let "
            f"{attempt.host} through, {self.hint}"
        )


_active: list[NetworkBlock] = []
_lock = threading.Lock()


def current() -> NetworkBlock | None:
    """The innermost active block (the guards of :mod:`.netpatch` ask it)."""
    return _active[-1] if _active else None


@contextlib.contextmanager
def blocked_network(
    allowed: Iterable[str] | Iterable[Allowed] = (),
    *,
    label: str | None = None,
    hint: str = "",
) -> Iterator[NetworkBlock]:
    """Refuse every non-loopback way out of this process for the ``with`` block.

    ``allowed``: hosts let through (strings as :func:`allowed_hosts` parses them);
    ``label``: who is running (a test id), recorded in each :class:`Attempt`; ``hint``: how
    the user lets a host through, in the words of where they read the error.
    """
    entries = [a for a in allowed if isinstance(a, Allowed)]
    entries += allowed_hosts(a for a in allowed if isinstance(a, str))
    block = NetworkBlock(entries, label=label, hint=hint)
    with _lock:
        _active.append(block)
        if len(_active) == 1:
            netpatch.install(current)
    try:
        yield block
    finally:
        with _lock:
            _active.remove(block)
            if not _active:
                netpatch.uninstall()
