"""The network block refuses every Python-level way out but loopback, before any packet leaves.

Nothing here can reach the network even if a guard were broken: the ``stubbed`` fixture
replaces the functions the guards wrap (``socket.socket.connect``/``connect_ex``/``sendto``/
``sendmsg``, the resolvers of ``socket`` and ``_socket``) by recording stubs *before* the block
is installed, so the guard's "real" call is the stub: a test asserts the guard raised and the
stub never ran. The one exception, ``_socket.socket`` (its guarded subclass wraps the C
methods themselves), is tried only after the same test proved the guarded class is in place,
against TEST-NET-1 (192.0.2.0/24, never routed).
"""

from __future__ import annotations

import _socket
import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from replayproxy._errors import UsageError
from replayproxy._harness import netpatch, threadorigin
from replayproxy._harness.netblock import (
    Allowed,
    NetworkBlock,
    NetworkBlockedError,
    allowed_hosts,
    blocked_network,
    is_loopback,
)

FAKE_IP = "203.0.113.5"  # what the stub resolver answers for the allowed name


class Stubs:
    """Recording stand-ins for the system calls the guards wrap."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.connect = self._method("connect")
        monkeypatch.setattr(socket.socket, "connect", self.connect)
        for name in ("connect_ex", "sendto", "sendmsg"):
            monkeypatch.setattr(socket.socket, name, self._method(name))
        for module in (socket, _socket):
            monkeypatch.setattr(module, "getaddrinfo", self._getaddrinfo)
            monkeypatch.setattr(module, "gethostbyname", self._gethostbyname)
            monkeypatch.setattr(module, "gethostbyname_ex", self._gethostbyname)
            monkeypatch.setattr(module, "gethostbyaddr", self._gethostbyname)
            monkeypatch.setattr(module, "getnameinfo", self._getnameinfo)

    def _method(self, name: str) -> Any:
        def stub(sock: socket.socket, *args: Any) -> int:
            self.calls.append((name, args[-1]))
            return 0

        return stub

    def _getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(("getaddrinfo", host))
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (FAKE_IP, port or 0))]

    def _getnameinfo(self, sockaddr: Any, flags: int) -> tuple[str, str]:
        self.calls.append(("getnameinfo", sockaddr))
        return sockaddr[0], str(sockaddr[1])

    def _gethostbyname(self, host: Any) -> str:
        self.calls.append(("gethostbyname", host))
        return FAKE_IP


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[NetworkBlock, Stubs]]:
    stubs = Stubs(monkeypatch)
    with blocked_network(["api.allowed.test:443"], label="t::current") as block:
        assert socket.socket.connect is not stubs.connect  # the guard is on
        yield block, stubs


def _refused(call: Any, host: str) -> str:
    with pytest.raises(NetworkBlockedError) as info:
        call()
    message = str(info.value)
    assert message.startswith("replayproxy: blocked ") and host in message
    assert "allowed_hosts" in message
    return message


def test_name_resolution_of_a_non_loopback_name_is_refused_before_the_resolver(
    stubbed: tuple[NetworkBlock, Stubs],
) -> None:
    """getaddrinfo / gethostbyname[_ex] of a name, in socket and _socket, and the reverse
    lookups gethostbyaddr / getnameinfo (unless numeric): refused, recorded, and the resolver
    is never asked."""
    block, stubs = stubbed
    calls = [
        lambda: socket.getaddrinfo("api.openai.com", 443),
        lambda: _socket.getaddrinfo("api.openai.com", 443),
        lambda: socket.gethostbyname("api.openai.com"),
        lambda: socket.gethostbyname_ex("api.openai.com"),
        lambda: socket.gethostbyaddr("192.0.2.9"),
    ]
    for call in calls[:4]:
        assert "name resolution of api.openai.com" in _refused(call, "api.openai.com")
    _refused(calls[4], "192.0.2.9")
    _refused(lambda: socket.getnameinfo(("192.0.2.9", 80), 0), "192.0.2.9")
    assert stubs.calls == []
    assert [a.host for a in block.attempts] == ["api.openai.com"] * 4 + ["192.0.2.9"] * 2
    numeric = socket.NI_NUMERICHOST | socket.NI_NUMERICSERV
    assert socket.getnameinfo(("192.0.2.9", 80), numeric) == ("192.0.2.9", "80")  # no lookup
    assert block.attempts[0].during == "t::current" and not block.attempts[0].leftover


def test_connections_and_datagrams_outside_loopback_are_refused(
    stubbed: tuple[NetworkBlock, Stubs],
) -> None:
    """connect, connect_ex, create_connection by name and IP, UDP sendto, TCP sendto with
    MSG_FASTOPEN, sendmsg with an address: each refused before the call."""
    block, stubs = stubbed
    tcp = socket.socket()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        _refused(lambda: tcp.connect(("192.0.2.1", 80)), "192.0.2.1:80")
        _refused(lambda: tcp.connect_ex(("192.0.2.1", 80)), "192.0.2.1:80")
        _refused(lambda: socket.create_connection(("api.openai.com", 443)), "api.openai.com")
        assert "datagram" in _refused(lambda: udp.sendto(b"x", ("192.0.2.1", 53)), "192.0.2.1")
        fastopen = getattr(socket, "MSG_FASTOPEN", 0x20000000)
        _refused(lambda: tcp.sendto(b"x", fastopen, ("10.9.9.9", 9000)), "10.9.9.9:9000")
        _refused(lambda: udp.sendmsg([b"x"], [], 0, ("192.0.2.1", 53)), "192.0.2.1")
        _refused(lambda: udp6.sendto(b"x", ("2001:db8::1", 53, 0, 0)), "[2001:db8::1]:53")
        _refused(lambda: tcp.connect(("::ffff:192.0.2.1", 80)), "192.0.2.1")
    finally:
        for s in (tcp, udp, udp6):
            s.close()
    assert stubs.calls == []
    assert len(block.attempts) == 8
    # Loopback passes through to the (stubbed) call.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", ("127.0.0.1", 9))
    assert stubs.calls == [("sendto", ("127.0.0.1", 9))]


def test_an_allowed_name_reaches_the_resolver_and_its_addresses_the_allowed_port(
    stubbed: tuple[NetworkBlock, Stubs],
) -> None:
    """``api.allowed.test:443`` is resolved by the real resolver (the stub here, so nothing
    leaves), and the address it resolved to is let through on port 443 only."""
    block, stubs = stubbed
    assert socket.getaddrinfo("API.allowed.test.", 443)[0][4][0] == FAKE_IP
    with socket.socket() as s:
        s.connect((FAKE_IP, 443))
        _refused(lambda: s.connect((FAKE_IP, 80)), f"{FAKE_IP}:80")
    _refused(lambda: socket.getaddrinfo("other.allowed.test", 443), "other.allowed.test")
    assert stubs.calls == [("getaddrinfo", "API.allowed.test."), ("connect", (FAKE_IP, 443))]
    assert len(block.attempts) == 2


def test_asyncio_connections_and_datagram_endpoints_are_refused(
    stubbed: tuple[NetworkBlock, Stubs],
) -> None:
    """open_connection (by name and IP), create_datagram_endpoint, sock_connect and
    loop.getaddrinfo: refused in the loop, before any resolver or socket call."""
    block, stubs = stubbed

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        messages = []
        attempts: list[Any] = [
            asyncio.open_connection("api.openai.com", 443),
            asyncio.open_connection("192.0.2.1", 80),
            loop.create_datagram_endpoint(asyncio.DatagramProtocol, remote_addr=("192.0.2.1", 53)),
            loop.getaddrinfo("api.openai.com", 443),
        ]
        with socket.socket() as sock:
            sock.setblocking(False)
            attempts.append(loop.sock_connect(sock, ("192.0.2.1", 80)))
            for attempt in attempts:
                with pytest.raises(NetworkBlockedError) as info:
                    await attempt
                messages.append(str(info.value))
        return messages

    messages = asyncio.run(main())
    assert [m.split(" (")[1].split(")")[0] for m in messages] == [
        "loop.create_connection",
        "loop.create_connection",
        "loop.create_datagram_endpoint",
        "loop.getaddrinfo",
        "loop.sock_connect",
    ]
    assert stubs.calls == [] and len(block.attempts) == 5


def test_sockets_made_from_the_c_type_are_refused() -> None:
    """``_socket.socket`` is the guarded subclass inside the block (proved first), so its
    connect and sendto are refused; outside the block the C type is back."""
    original = _socket.socket
    with blocked_network() as block:
        assert _socket.socket is not original and issubclass(_socket.socket, original)
        sock = _socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        assert type(sock).sendto is not original.sendto  # guarded: safe to try TEST-NET-1
        try:
            _refused(lambda: sock.sendto(b"x", ("192.0.2.1", 53)), "192.0.2.1:53")
            _refused(lambda: sock.connect(("192.0.2.1", 53)), "192.0.2.1:53")
        finally:
            sock.close()
        assert len(block.attempts) == 2
        assert isinstance(socket.socket(), socket.socket)  # ordinary sockets still work
    assert _socket.socket is original and socket.socket.connect is original.connect


def test_blocked_network_lets_loopback_connect_and_restores_everything() -> None:
    """A real loopback listener is reachable inside the block (by 127.0.0.1 and localhost,
    through connect_ex and create_connection); afterwards every patched name is restored."""
    before = (socket.getaddrinfo, socket.create_connection, socket.socket.connect)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        with blocked_network() as block:
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", port)) == 0
            socket.create_connection(("localhost", port), timeout=5).close()
        assert block.attempts == []
    finally:
        server.close()
    assert (socket.getaddrinfo, socket.create_connection, socket.socket.connect) == before
    assert netpatch._saved == []


def test_a_thread_started_under_another_label_is_named_as_leftover(
    stubbed: tuple[NetworkBlock, Stubs], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attempt from a thread tagged with an earlier label says so (the block's label is
    the running one); a thread of the running label is not called leftover."""
    block, _ = stubbed
    monkeypatch.setattr(threading.Thread, "start", threading.Thread.start)  # undo install
    threadorigin.install()

    def attempt() -> None:
        with contextlib.suppress(NetworkBlockedError):
            socket.getaddrinfo("api.openai.com", 443)

    for label in ("t::earlier", "t::current"):
        with threadorigin.during(label):
            thread = threading.Thread(target=attempt, name=f"from-{label}")
            thread.start()
        thread.join(10)
    earlier, current = block.attempts
    assert earlier.leftover and current.leftover is False
    assert "from thread 'from-t::earlier', started during t::earlier" in earlier.describe()


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        (("127.0.0.1", 80), True),
        (("127.8.9.10", 80), True),
        (("::1", 80, 0, 0), True),
        (("::ffff:127.0.0.1", 80, 0, 0), True),
        (("localhost", 80), True),
        (("LocalHost.", 80), True),
        ("/tmp/some.sock", True),
        (("203.0.113.7", 80), False),
        (("0.0.0.0", 80), False),
        (("10.0.0.1", 80), False),
        (("api.openai.com", 443), False),
        (("2001:db8::1", 443, 0, 0), False),
    ],
)
def test_is_loopback(address: object, loopback: bool) -> None:
    """Only loopback addresses (and non-IP sockets) count as local."""
    assert is_loopback(address) is loopback


def test_allowed_hosts_parse_names_ips_and_ports() -> None:
    """Names (case and trailing dot folded), IPs, host:port, [v6]:port, commas; a bad entry is
    a one-line UsageError naming where it was set."""
    assert allowed_hosts(["API.Example.com.", "10.0.0.1:8080,[2001:db8::1]:443", "::2"]) == (
        Allowed("api.example.com"),
        Allowed("10.0.0.1", 8080),
        Allowed("2001:db8::1", 443),
        Allowed("::2"),
    )
    with pytest.raises(UsageError, match=r"^--x: 'host:http' is not a host, IP or host:port$"):
        allowed_hosts(["host:http"], where="--x")


@given(st.ip_addresses(), st.integers(0, 65535))
def test_allowed_hosts_round_trip_any_address_and_port(ip: Any, port: int) -> None:
    """Any IPv4/IPv6 address, alone or with a port (``[v6]:port`` for IPv6), parses back."""
    text = f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"
    expected = str(ip.ipv4_mapped or ip) if ip.version == 6 else str(ip)
    assert allowed_hosts([text]) == (Allowed(expected, port),)
    assert allowed_hosts([str(ip)]) == (Allowed(expected),)


@given(st.text())
@example("a:\u00b2")  # a digit to str.isdigit(), not to int()
@example("[2001:db8::1")
def test_allowed_hosts_parse_or_refuse_any_text(text: str) -> None:
    """Any text is parsed or refused with a UsageError, never another exception."""
    try:
        allowed_hosts([text])
    except UsageError as e:
        assert "\n" not in str(e).strip() or "\n" in text


def test_the_machines_own_name_may_be_looked_up_but_not_connected_to() -> None:
    """``socket.getfqdn()`` (logging, smtplib) looks up this machine's own name: the lookup
    runs under the block, with the real resolver, and gives what it gives without the block;
    another name is still refused, and so is connecting to a non-loopback address."""
    unblocked = socket.getfqdn()
    with blocked_network() as block:
        assert socket.getfqdn() == unblocked
        socket.gethostbyname_ex(socket.gethostname())
        with pytest.raises(NetworkBlockedError, match=r"name resolution of api\.openai\.com"):
            socket.gethostbyname("api.openai.com")
        with pytest.raises(NetworkBlockedError):
            socket.create_connection(("192.0.2.9", 80), timeout=1)
    assert [a.host for a in block.attempts] == ["api.openai.com", "192.0.2.9"]
