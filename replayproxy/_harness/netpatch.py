"""The guards :func:`~replayproxy._harness.netblock.blocked_network` installs: wrappers around
every Python-level way out of the process that ask the active block first and raise its error
before the system call, so a refused attempt never sends a packet or a DNS query.

Patched while installed: ``socket.socket``'s ``connect``/``connect_ex``/``sendto``/``sendmsg``
(and ``bind`` of ``AF_PACKET`` sockets); ``_socket.socket`` and ``_socket.SocketType`` are
replaced by a guarded subclass (the C type itself cannot be changed, so sockets of the C type
created before the block, or through a reference to it taken earlier, stay unguarded); the
resolvers of both ``socket`` and ``_socket`` (``getaddrinfo``, ``gethostbyname``,
``gethostbyname_ex``, ``gethostbyaddr``, and ``getnameinfo`` unless numeric);
``socket.create_connection``; asyncio's
``getaddrinfo``, ``create_connection`` (so ``open_connection``), ``create_datagram_endpoint``
and ``sock_connect`` on the event loop classes that define them. An IP literal needs no
lookup, so resolving one is let through; its connection is what is checked.
"""

from __future__ import annotations

import _socket
import asyncio.base_events
import asyncio.proactor_events
import asyncio.selector_events
import socket
from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["install", "uninstall"]


class Block(Protocol):
    def permits(self, host: Any, port: Any = None) -> bool: ...
    def permits_lookup(self, host: Any, port: Any = None) -> bool: ...
    def learn(self, host: Any, port: Any, addresses: Iterable[str]) -> None: ...
    def refuse(self, what: str, host: Any, port: Any, call: str) -> Exception: ...


_current: Callable[[], Block | None] = lambda: None  # noqa: E731
_saved: list[tuple[Any, str, Any]] = []
_CSocket = _socket.socket
_INET = (socket.AF_INET, socket.AF_INET6)
_PACKET = getattr(socket, "AF_PACKET", None)


def _is_ip(host: Any) -> bool:
    import ipaddress

    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return False
    return True


def _check(family: int, address: Any, what: str, call: str) -> None:
    """Raise the block's error when ``address`` of a ``family`` socket is outside it."""
    block = _current()
    if block is None or not isinstance(address, tuple) or not address:
        return
    if family in _INET and not block.permits(address[0], address[1]):
        raise block.refuse(what, address[0], address[1], call)
    if _PACKET is not None and family == _PACKET and address[0] != "lo":
        raise block.refuse("raw packets on", f"interface {address[0]}", None, call)


def _kind(sock: Any) -> str:
    if sock.type == socket.SOCK_DGRAM:
        return "a datagram to"
    return "a connection to"  # TCP with MSG_FASTOPEN: connect and send at once


def _resolving(host: Any, port: Any, call: str) -> Block | None:
    """The block when ``host`` is an allowed name (to learn its addresses); raise if refused."""
    block = _current()
    if block is None or _is_ip(host):
        return None
    if not block.permits_lookup(host, port):
        raise block.refuse("name resolution of", host, port, call)
    return block


def _guarded_methods(base: Any) -> dict[str, Any]:
    """Guarded ``connect``/``connect_ex``/``sendto``/``sendmsg``/``bind`` over ``base``'s."""
    connect, connect_ex, sendto, bind = base.connect, base.connect_ex, base.sendto, base.bind
    sendmsg = getattr(base, "sendmsg", None)

    def g_connect(self: Any, address: Any) -> Any:
        _check(self.family, address, "a connection to", "socket.connect")
        return connect(self, address)

    def g_connect_ex(self: Any, address: Any) -> Any:
        _check(self.family, address, "a connection to", "socket.connect_ex")
        return connect_ex(self, address)

    def g_sendto(self: Any, data: Any, *args: Any) -> Any:
        if args:
            _check(self.family, args[-1], _kind(self), "socket.sendto")
        return sendto(self, data, *args)

    def g_bind(self: Any, address: Any) -> Any:
        if self.family == _PACKET:
            _check(self.family, address, "raw packets on", "socket.bind")
        return bind(self, address)

    methods = {
        "connect": g_connect,
        "connect_ex": g_connect_ex,
        "sendto": g_sendto,
        "bind": g_bind,
    }
    if sendmsg is not None:

        def g_sendmsg(self: Any, buffers: Any, *args: Any) -> Any:
            if len(args) >= 3 and args[2] is not None:
                _check(self.family, args[2], _kind(self), "socket.sendmsg")
            return sendmsg(self, buffers, *args)

        methods["sendmsg"] = g_sendmsg
    return methods


_GuardedCSocket = type(
    "socket", (_CSocket,), {"__module__": "_socket", **_guarded_methods(_CSocket)}
)
"""What ``_socket.socket`` is while installed: the C type with the guarded methods."""


def _resolver(original: Any, call: str) -> Any:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        block = _resolving(host, port, call)
        result = original(host, port, *args, **kwargs)
        if block is not None:
            block.learn(host, port, [str(info[4][0]) for info in result])
        return result

    return getaddrinfo


def _by_name(original: Any, call: str) -> Any:
    def gethostbyname(host: Any, *args: Any) -> Any:
        block = _resolving(host, None, call)
        result = original(host, *args)
        if block is not None:
            block.learn(host, None, [result] if isinstance(result, str) else result[2])
        return result

    return gethostbyname


def _by_addr(original: Any, call: str) -> Any:
    def gethostbyaddr(host: Any) -> Any:
        block = _current()
        if block is not None and not block.permits_lookup(host):  # reverse DNS, even for an IP
            raise block.refuse("name resolution of", host, None, call)
        return original(host)

    return gethostbyaddr


def _by_sockaddr(original: Any, call: str) -> Any:
    def getnameinfo(sockaddr: Any, flags: int) -> Any:
        block = _current()
        numeric = flags & socket.NI_NUMERICHOST
        if block is not None and not numeric and not block.permits(sockaddr[0]):
            raise block.refuse("name resolution of", sockaddr[0], None, call)  # reverse DNS
        return original(sockaddr, flags)

    return getnameinfo


def _create_connection(original: Any) -> Any:
    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        block = _current()
        if block is not None and not block.permits(address[0], address[1]):
            raise block.refuse("a connection to", address[0], address[1], "create_connection")
        return original(address, *args, **kwargs)

    return create_connection


def _loop_methods(cls: Any) -> dict[str, Any]:
    methods: dict[str, Any] = {}
    own = cls.__dict__
    if "getaddrinfo" in own:
        getaddrinfo = own["getaddrinfo"]

        async def l_getaddrinfo(self: Any, host: Any, port: Any, **kwargs: Any) -> Any:
            block = _resolving(host, port, "loop.getaddrinfo")
            result = await getaddrinfo(self, host, port, **kwargs)
            if block is not None:
                block.learn(host, port, [str(info[4][0]) for info in result])
            return result

        methods["getaddrinfo"] = l_getaddrinfo
    if "create_connection" in own:
        create_connection = own["create_connection"]

        async def l_create_connection(
            self: Any, factory: Any, host: Any = None, port: Any = None, **kwargs: Any
        ) -> Any:
            block = _current()
            if block is not None and not block.permits(host, port):
                raise block.refuse("a connection to", host, port, "loop.create_connection")
            return await create_connection(self, factory, host, port, **kwargs)

        methods["create_connection"] = l_create_connection
    if "create_datagram_endpoint" in own:
        create_datagram_endpoint = own["create_datagram_endpoint"]

        async def l_create_datagram_endpoint(
            self: Any, factory: Any, local_addr: Any = None, remote_addr: Any = None, **kw: Any
        ) -> Any:
            block = _current()
            if isinstance(remote_addr, tuple) and block is not None:
                host, port = remote_addr[0], remote_addr[1]
                if not block.permits(host, port):
                    raise block.refuse("a datagram to", host, port, "loop.create_datagram_endpoint")
            return await create_datagram_endpoint(self, factory, local_addr, remote_addr, **kw)

        methods["create_datagram_endpoint"] = l_create_datagram_endpoint
    if "sock_connect" in own:
        sock_connect = own["sock_connect"]

        async def l_sock_connect(self: Any, sock: Any, address: Any) -> Any:
            _check(sock.family, address, "a connection to", "loop.sock_connect")
            return await sock_connect(self, sock, address)

        methods["sock_connect"] = l_sock_connect
    return methods


def _patch(owner: Any, name: str, value: Any) -> None:
    _saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
    setattr(owner, name, value)


_MISSING = object()
_LOOPS = (
    asyncio.base_events.BaseEventLoop,
    asyncio.selector_events.BaseSelectorEventLoop,
    asyncio.proactor_events.BaseProactorEventLoop,
)


def install(current: Callable[[], Block | None]) -> None:
    """Install every guard; each asks ``current()`` for the block in force (None: allow)."""
    global _current
    _current = current
    for name, value in _guarded_methods(socket.socket).items():
        _patch(socket.socket, name, value)
    for module in (_socket, socket):
        _patch(module, "socket" if module is _socket else "SocketType", _GuardedCSocket)
    _patch(_socket, "SocketType", _GuardedCSocket)
    for module in (socket, _socket):
        prefix = module.__name__
        _patch(module, "getaddrinfo", _resolver(module.getaddrinfo, f"{prefix}.getaddrinfo"))
        for name in ("gethostbyname", "gethostbyname_ex"):
            _patch(module, name, _by_name(getattr(module, name), f"{prefix}.{name}"))
        _patch(module, "gethostbyaddr", _by_addr(module.gethostbyaddr, f"{prefix}.gethostbyaddr"))
        _patch(module, "getnameinfo", _by_sockaddr(module.getnameinfo, f"{prefix}.getnameinfo"))
    _patch(socket, "create_connection", _create_connection(socket.create_connection))
    for cls in _LOOPS:
        for name, value in _loop_methods(cls).items():
            _patch(cls, name, value)


def uninstall() -> None:
    """Put back everything :func:`install` replaced, in reverse order."""
    while _saved:
        owner, name, value = _saved.pop()
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
