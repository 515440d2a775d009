"""WebSocket frames, read off the wire by a raw client. The engine keeps every fragment
boundary as recorded, in base-URL mode and as a forward proxy (how every replay runs). Through
mitmproxy (a session that may record), which reassembles each message before any hook, then
sends it on in frames of the sizes it arrived in (its ``Fragmentizer``), fragment sizes survive,
except a fragment boundary inside a UTF-8 character of a text message, which moves to the start
of that character. What this means is in docs/guides/websocket.md."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

import pytest

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.cassette.websocket import WsMessage
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy._mitm.stack import build_stack
from replayproxy.testing import ns, ws_interaction

HOST = "api.openai.com"  # never resolved: connection_strategy=lazy
PATH = "/v1/realtime?model=gpt-realtime"
ASCII = WsMessage(ns(5), False, True, b'{"type":"session.created"}', fragments=(7, 7, 12))
# "é" is 2 bytes; the first fragment ends after its first byte.
UTF8 = WsMessage(ns(6), False, True, "aé bc".encode(), fragments=(2, 4))
BINARY = WsMessage(ns(7), False, False, bytes(range(10)), fragments=(1, 9))
CASSETTE = Cassette((ws_interaction([ASCII, UTF8, BINARY], url=f"wss://{HOST}{PATH}"),))


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedProxy]:
    stack = build_stack(None, None)
    with stack.proxy(confdir=tmp_path_factory.mktemp("conf")) as running:
        yield running


def _frames(sock: socket.socket | ssl.SSLSocket, host: str, count: int) -> list[tuple[int, int]]:
    """Send the upgrade, then read ``count`` server frames: (opcode, payload size) each."""
    sock.sendall(
        f"GET {PATH} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, _, buf = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    out: list[tuple[int, int]] = []
    while len(out) < count:
        while len(buf) < 2 or len(buf) < 2 + (buf[1] & 0x7F):
            buf += sock.recv(65536)
        size = buf[1] & 0x7F  # the frames here are small: no extended length
        out.append((buf[0] & 0x0F, size))
        buf = buf[2 + size :]
    return out


# Opcodes: 1 text, 2 binary, 0 continuation.
RECORDED = [(1, 7), (0, 7), (0, 12), (1, 2), (0, 4), (2, 1), (0, 9)]


def test_the_engine_sends_each_fragment_as_recorded() -> None:
    """Base-URL mode: every fragment boundary as recorded, even inside a UTF-8 character."""
    with (
        ReplayServer(CASSETTE, speed=0) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        got = _frames(sock, f"127.0.0.1:{server.port}", len(RECORDED))
    assert got == RECORDED


def test_the_engine_as_a_forward_proxy_sends_each_fragment_as_recorded(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Forward mode served by the engine (CONNECT, TLS with mitmproxy's CA): every fragment
    boundary as recorded, the one inside "é" too."""
    tls = LeafCerts(tmp_path_factory.mktemp("conf"))
    session = ReplaySession(CASSETTE, speed=0)
    with ReplayServer.for_session(session, tls=tls) as server:
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        raw.sendall(f"CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\n\r\n".encode())
        assert raw.recv(4096).startswith(b"HTTP/1.1 200")
        context = ssl.create_default_context(cafile=tls.ca_cert)
        with context.wrap_socket(raw, server_hostname=HOST) as sock:
            got = _frames(sock, HOST, len(RECORDED))
    assert got == RECORDED


def test_mitmproxy_keeps_fragment_sizes_but_not_a_cut_inside_a_character(
    proxy: EmbeddedProxy,
) -> None:
    """Through mitmproxy the sizes survive, but the cut after the first byte of "é" moves
    before it (wsproto, under mitmproxy, decodes text frames as it reads them and holds the
    incomplete character back for the next frame)."""
    replayer = next(a for a in proxy.addons if isinstance(a, Replayer))
    assert isinstance(replayer, Replayer)
    replayer.use(ReplaySession(CASSETTE, speed=0))
    raw = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    raw.sendall(f"CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\n\r\n".encode())
    assert raw.recv(4096).startswith(b"HTTP/1.1 200")
    context = ssl.create_default_context(cafile=str(proxy.ca_cert))
    context.maximum_version = ssl.TLSVersion.TLSv1_2  # see tests/replay/helpers.ws_client_tls
    with context.wrap_socket(raw, server_hostname=HOST) as tls:
        got = _frames(tls, HOST, len(RECORDED))
    moved = [(1, 7), (0, 7), (0, 12), (1, 1), (0, 5), (2, 1), (0, 9)]
    assert got == moved
