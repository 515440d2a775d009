"""engine/websocket.py byte for byte: server frames, the replayed 101, and a whole replayed
conversation run by ``serve_websocket`` over a socketpair (or loopback TCP, for the reset)
on the virtual clock, so every frame's bytes and due time are exact."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest
import wsproto.events as wse
from wsproto.connection import Connection, ConnectionType

from replayproxy._core.cassette.model import Request
from replayproxy._core.cassette.websocket import WsClose, WsCloseKind, WsMessage
from replayproxy._core.schedule.model import Head
from replayproxy._core.websocket.conversation import Turn, WsPlan
from replayproxy._engine import websocket as websocket_mod
from replayproxy._engine.websocket import (
    ClientArrivals,
    WsServe,
    _handshake,
    encode_frames,
    is_upgrade,
    serve_websocket,
)
from replayproxy.testing import MS
from tests.replay.test_sockets import tcp_pair
from tests.replay.virtual_time import VirtualClock, run_virtual

KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 §1.3's example key and its accept token
ACCEPT = b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
UPGRADE = Request(
    "GET",
    "http://api.test/v1/realtime",
    headers=((b"upgrade", b"websocket"), (b"sec-websocket-key", KEY.encode())),
)
OPEN = WsClose(0, WsCloseKind.OPEN)


# -- frames and the handshake (pure) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "data", "fragments", "expected"),
    [
        (True, b"hi", (), b"\x81\x02hi"),
        (False, b"\x00", (), b"\x82\x01\x00"),
        (True, b"", (), b"\x81\x00"),
        (True, b"x" * 125, (), b"\x81\x7d" + b"x" * 125),
        (True, b"x" * 126, (), b"\x81\x7e\x00\x7e" + b"x" * 126),
        (False, b"x" * 65535, (), b"\x82\x7e\xff\xff" + b"x" * 65535),
        (False, b"x" * 65536, (), b"\x82\x7f" + struct.pack("!Q", 65536) + b"x" * 65536),
        (True, b"hello", (2, 3), b"\x01\x02he\x80\x03llo"),
        (False, b"abc", (1, 1, 1), b"\x02\x01a\x00\x01b\x80\x01c"),
        (True, b"x" * 200, (130, 70),
         b"\x01\x7e\x00\x82" + b"x" * 130 + b"\x80\x46" + b"x" * 70),
    ],
)  # fmt: skip
def test_encode_frames(
    text: bool, data: bytes, fragments: tuple[int, ...], expected: bytes
) -> None:
    """Unmasked server frames: opcode text/binary, then continuations; FIN on the last; the
    7-bit, 16-bit and 64-bit length forms at their bounds."""
    assert encode_frames(text, data, fragments) == expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (((b"Upgrade", b"WebSocket"),), True),
        (((b"upgrade", b"websocket"),), True),
        (((b"upgrade", b"h2c"),), False),
        ((), False),
    ],
)
def test_is_upgrade(headers: tuple[tuple[bytes, bytes], ...], expected: bool) -> None:
    """A request is a WebSocket upgrade when its Upgrade header says websocket (any case)."""
    assert is_upgrade(Request("GET", "http://h/", headers=headers)) is expected


@pytest.mark.parametrize(
    ("reason", "headers", "expected"),
    [
        ("", (),
         [b"HTTP/1.1 101 Switching Protocols", b"upgrade: websocket", b"connection: Upgrade"]),
        ("Web Socket Protocol Handshake",
         ((b"Upgrade", b"websocket"), (b"Connection", b"upgrade"), (b"x-id", b"7"),
          (b"Sec-WebSocket-Accept", b"old"), (b"sec-websocket-extensions", b"permessage-deflate"),
          (b"Content-Length", b"0"), (b"transfer-encoding", b"chunked")),
         [b"HTTP/1.1 101 Web Socket Protocol Handshake", b"Upgrade: websocket",
          b"Connection: upgrade", b"x-id: 7"]),
        ("", ((b"connection", b"Upgrade"),),
         [b"HTTP/1.1 101 Switching Protocols", b"connection: Upgrade", b"upgrade: websocket"]),
        ("", ((b"upgrade", b"websocket"),),
         [b"HTTP/1.1 101 Switching Protocols", b"upgrade: websocket", b"connection: Upgrade"]),
    ],
)  # fmt: skip
def test_handshake(
    reason: str, headers: tuple[tuple[bytes, bytes], ...], expected: list[bytes]
) -> None:
    """The recorded 101 without its accept token, extensions or framing headers (any case),
    Upgrade and Connection added when missing, a fresh accept token for the key, and the
    standard reason when none was recorded."""
    got = _handshake(Head(0, 101, reason, headers), KEY)
    assert got == b"\r\n".join([*expected, b"sec-websocket-accept: " + ACCEPT]) + b"\r\n\r\n"


# -- a replayed conversation on the virtual clock --------------------------------------------------


def srv(text: str | bytes, *, fragments: tuple[int, ...] = ()) -> WsMessage:
    data = text.encode() if isinstance(text, str) else text
    return WsMessage(0, False, isinstance(text, str), data, fragments)


def cli(text: str | bytes) -> WsMessage:
    data = text.encode() if isinstance(text, str) else text
    return WsMessage(0, True, isinstance(text, str), data)


def close_frame(code: int, reason: str = "") -> bytes:
    payload = struct.pack("!H", code) + reason.encode()
    return bytes([0x88, len(payload)]) + payload


def _frames(buf: bytearray) -> list[bytes]:
    """Complete unmasked frames at the start of ``buf`` (removed from it)."""
    out = []
    while len(buf) >= 2:
        n, at = buf[1] & 0x7F, 2
        if n == 126:
            n, at = struct.unpack("!H", buf[2:4])[0], 4
        elif n == 127:
            n, at = struct.unpack("!Q", buf[2:10])[0], 10
        if len(buf) < at + n:
            break
        out.append(bytes(buf[: at + n]))
        del buf[: at + n]
    return out


@dataclass
class Peer:
    """The client's end: what arrived when (ms after the upgrade request), masked frames out."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    t0: float
    head: tuple[float, bytes] | None = None
    raw: bytearray = field(default_factory=bytearray)  # everything after the head
    frames: list[tuple[float, bytes]] = field(default_factory=list)
    end: str = ""
    conn: Connection = field(default_factory=lambda: Connection(ConnectionType.CLIENT))

    def now_ms(self) -> float:
        return round((asyncio.get_running_loop().time() - self.t0) * 1000, 3)

    def send(self, event: wse.Event) -> None:
        self.writer.write(self.conn.send(event))

    async def read_all(self, on_frame: Callable[[bytes], None] = lambda f: None) -> None:
        buf = bytearray()
        while True:
            try:
                data = await self.reader.read(65536)
            except ConnectionResetError:
                self.end = "reset"
                return
            if not data:
                self.end = "eof"
                return
            buf += data
            if self.head is None:
                if b"\r\n\r\n" not in buf:
                    continue
                cut = buf.index(b"\r\n\r\n") + 4
                self.head = (self.now_ms(), bytes(buf[:cut]))
                del buf[:cut]
                self.raw += buf
            else:
                self.raw += data
            for f in _frames(buf):
                self.frames.append((self.now_ms(), f))
                on_frame(f)


Script = Callable[[Peer], Awaitable[None]]


def converse(
    ws: WsServe,
    script: Script,
    *,
    request: Request = UPGRADE,
    on_frame: Callable[[Peer, bytes], None] | None = None,
    tcp: bool = False,
    server_socks: list[socket.socket] | None = None,
) -> tuple[Peer, float]:
    """Run ``serve_websocket`` against a client running ``script`` (concurrently with a reader
    collecting what arrives); returns the client's view and when the server was done (ms)."""

    async def main() -> tuple[Peer, float]:
        loop = asyncio.get_running_loop()
        if tcp:
            with tcp_pair() as (ours, peer_sock):
                ours.setblocking(False)
                return await run(loop, ours, peer_sock)
        a, b = socket.socketpair()
        return await run(loop, b, a)

    async def run(
        loop: asyncio.AbstractEventLoop, server_sock: socket.socket, client_sock: socket.socket
    ) -> tuple[Peer, float]:
        if server_socks is not None:
            server_socks.append(server_sock)
        sr, sw = await asyncio.open_connection(sock=server_sock)
        cr, cw = await asyncio.open_connection(sock=client_sock)
        t0 = loop.time()
        peer = Peer(cr, cw, t0)
        server = asyncio.create_task(serve_websocket(ws, request, t0, sr, sw))
        reading = asyncio.create_task(
            peer.read_all((lambda f: on_frame(peer, f)) if on_frame else (lambda f: None))
        )
        await script(peer)
        await asyncio.wait_for(server, 60)  # virtual seconds: a server that hangs fails fast
        done = peer.now_ms()
        sw.close()
        await asyncio.wait_for(reading, 5)
        cw.close()
        return peer, done

    return run_virtual(main, VirtualClock())


async def nothing(peer: Peer) -> None:
    return None


def test_no_key_is_answered_426_and_nothing_else() -> None:
    """An upgrade request without Sec-WebSocket-Key: 426 with an explanation, exact bytes."""
    ws = WsServe(Head(0, 101, "", ()), WsPlan((Turn(None, ((0, srv("x")),)),), OPEN, 0))
    peer, done = converse(ws, nothing, request=Request("GET", "http://api.test/v1/realtime"))
    body = b"replayproxy: a WebSocket was recorded here; send an upgrade request\n"
    assert peer.head == (
        0.0,
        b"HTTP/1.1 426 Upgrade Required\r\nupgrade: websocket\r\nconnection: close\r\n"
        b"content-type: text/plain\r\ncontent-length: %d\r\n\r\n" % len(body),
    )
    assert bytes(peer.raw) == body and done == 0.0


def test_a_conversation_is_replayed_at_its_recorded_offsets() -> None:
    """The 101 at the head's offset (20 ms), turn 0 relative to it, the replies to a client
    message relative to its arrival (100 ms), fragments as planned, then the server's close
    frame at the recorded end; the client's close answer ends the session."""
    plan = WsPlan(
        (
            Turn(None, ((5 * MS, srv("hello")),)),
            Turn(cli("ask"), ((10 * MS, srv("one")), (30 * MS, srv("two", fragments=(1, 2))))),
        ),
        WsClose(0, WsCloseKind.CLOSE, 1000, "bye", by_client=False),
        50 * MS,
    )
    ws = WsServe(Head(20 * MS, 101, "", ((b"upgrade", b"websocket"),)), plan)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.1)
        peer.send(wse.TextMessage("ask"))

    def answer_close(peer: Peer, frame: bytes) -> None:
        if frame[0] == 0x88:
            peer.send(wse.CloseConnection(1000))

    peer, done = converse(ws, script, on_frame=answer_close)
    assert peer.head == (20.0, _handshake(ws.head, KEY))
    assert peer.frames == [
        (25.0, b"\x81\x05hello"),
        (110.0, b"\x81\x03one"),
        (130.0, b"\x01\x01t"),
        (130.0, b"\x80\x02wo"),
        (150.0, close_frame(1000, "bye")),
    ]
    assert (peer.end, done) == ("eof", 150.0)


def test_a_fragmented_binary_client_message_is_matched_whole() -> None:
    """A client message sent in two frames is reassembled before it is matched; a binary
    reply follows it."""
    plan = WsPlan((Turn(None, ()), Turn(cli(b"abcd"), ((0, srv(b"\x01\x02")),))), OPEN, 0)
    ws = WsServe(Head(0, 101, "", ()), plan)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        peer.send(wse.BytesMessage(b"ab", message_finished=False))
        await asyncio.sleep(0.01)
        peer.send(wse.BytesMessage(b"cd", message_finished=True))
        await asyncio.sleep(0.01)
        peer.send(wse.CloseConnection(1000, "done"))

    peer, done = converse(ws, script)
    assert peer.frames == [(20.0, b"\x82\x02\x01\x02"), (30.0, close_frame(1000, "done"))]
    assert (peer.end, done) == ("eof", 30.0)


def test_a_ping_is_answered_with_its_pong() -> None:
    """A client ping gets a pong with the same payload at once; the client's close is
    answered with the same code and reason, and a reply still pending is not sent."""
    plan = WsPlan((Turn(None, ((500 * MS, srv("late")),)),), OPEN, 0)
    ws = WsServe(Head(0, 101, "", ()), plan)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.005)
        peer.send(wse.Ping(b"p1"))
        await asyncio.sleep(0.005)
        peer.send(wse.CloseConnection(4000, "bye"))

    peer, done = converse(ws, script)
    assert peer.frames == [(5.0, b"\x8a\x02p1"), (10.0, close_frame(4000, "bye"))]
    assert peer.end == "eof"
    assert done == 500.0  # the sender woke for "late", saw the closed connection, sent nothing


def test_a_sender_that_does_not_stop_is_cancelled_after_a_second() -> None:
    """When the client has closed, the server waits at most 1 s for its sender (here asleep
    until a reply due at 5 s), then cancels it."""
    plan = WsPlan((Turn(None, ((5000 * MS, srv("late")),)),), OPEN, 0)
    ws = WsServe(Head(0, 101, "", ()), plan)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        peer.send(wse.CloseConnection(1000))

    peer, done = converse(ws, script)
    assert peer.frames == [(10.0, close_frame(1000))]
    assert done == 1010.0


def test_a_client_that_goes_away_without_a_close_frame_gets_none() -> None:
    """The client's TCP connection ends without a close frame: no close frame is sent back
    and the server is done."""
    plan = WsPlan((Turn(None, ()),), OPEN, 0)
    ws = WsServe(Head(0, 101, "", ()), plan)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        peer.writer.write_eof()

    peer, done = converse(ws, script)
    assert (peer.frames, peer.end, done) == ([], "eof", 10.0)


def test_a_mismatch_is_closed_at_once_with_the_explanation() -> None:
    """A client message that does not match: 1008 with the explanation at once, before the
    pending turn-0 reply (which is never sent); on_miss gets the explanation."""
    plan = WsPlan(
        (Turn(None, ((500 * MS, srv("late")),)), Turn(cli("ask"), ((0, srv("no")),))), OPEN, 0
    )
    misses: list[str] = []
    ws = WsServe(Head(0, 101, "", ()), plan, on_miss=misses.append)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        peer.send(wse.TextMessage("other"))
        await asyncio.sleep(0.01)
        peer.send(wse.CloseConnection(1000))

    peer, _ = converse(ws, script)
    why = "client message 0 does not match the recording: the text differs"
    assert misses == [why]
    assert peer.frames == [(10.0, close_frame(1008, "replayproxy: " + why))]


def test_a_dropped_end_is_reported_then_reset() -> None:
    """A recorded drop: on_drop is awaited with the number of messages sent (2), at the end's
    offset, then the connection is reset (no close frame)."""
    plan = WsPlan(
        (Turn(None, ((10 * MS, srv("a")), (20 * MS, srv("b")))),),
        WsClose(0, WsCloseKind.DROPPED),
        40 * MS,
    )
    drops: list[tuple[int, float]] = []

    async def on_drop(sent: int) -> None:
        drops.append((sent, round(asyncio.get_running_loop().time() * 1000, 3)))

    ws = WsServe(Head(0, 101, "", ()), plan, on_drop=on_drop)
    peer, done = converse(ws, nothing, tcp=True)
    assert peer.frames == [(10.0, b"\x81\x01a"), (20.0, b"\x81\x01b")]
    assert [sent for sent, _ in drops] == [2]
    assert peer.end == "reset"
    assert 40.0 <= done < 60.0


def _two_turns(reply_ms: int = 10) -> WsPlan:
    return WsPlan(
        (
            Turn(None, ()),
            Turn(cli("one"), ((reply_ms * MS, srv("r1")),)),
            Turn(cli("two"), ((reply_ms * MS, srv("r2")),)),
        ),
        OPEN,
        0,
    )


async def _ask_twice(peer: Peer, at_s: float = 0.01) -> None:
    await asyncio.sleep(at_s)
    peer.send(wse.TextMessage("one"))
    await asyncio.sleep(0.05)
    peer.send(wse.TextMessage("two"))
    await asyncio.sleep(0.05)
    peer.send(wse.CloseConnection(1000))


def test_each_client_message_gets_its_own_turn() -> None:
    """Two client messages, each answered 10 ms after it arrived."""
    peer, _ = converse(WsServe(Head(0, 101, "", ()), _two_turns()), _ask_twice)
    assert peer.frames[:2] == [(20.0, b"\x81\x02r1"), (70.0, b"\x81\x02r2")]


def test_turn_clocks_stay_exact_hours_into_a_session() -> None:
    """A client message 10,000 s after the upgrade is still answered exactly 10 ms after it
    arrived (no scale error creeping in with the session's age)."""
    peer, _ = converse(WsServe(Head(0, 101, "", ()), _two_turns()), lambda p: _ask_twice(p, 1e4))
    assert peer.frames[:2] == [(1e7 + 10.0, b"\x81\x02r1"), (1e7 + 60.0, b"\x81\x02r2")]


def test_a_relay_stamp_hours_into_a_session_is_exact() -> None:
    """The relay had the message 3 ms before the engine read it, 10,000 s into the session:
    the reply comes 10 ms after the relay's time, to the microsecond."""
    arrivals = ClientArrivals()
    ws = WsServe(Head(0, 101, "", ()), _two_turns(), arrivals=arrivals)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(1e4)
        arrivals.note(b"one", asyncio.get_running_loop().time())
        await asyncio.sleep(0.003)
        peer.send(wse.TextMessage("one"))
        await asyncio.sleep(0.05)
        peer.send(wse.CloseConnection(1000))

    peer, _ = converse(ws, script)
    assert peer.frames[0] == (1e7 + 10.0, b"\x81\x02r1")


def test_a_late_head_is_sent_at_its_exact_offset() -> None:
    """The 101 is sent at the head's offset, to the microsecond even 10,000 s in."""
    ws = WsServe(Head(10_000 * 10**9, 101, "", ()), WsPlan((Turn(None, ()),), OPEN, 0))

    async def script(peer: Peer) -> None:
        await asyncio.sleep(1e4 + 0.01)
        peer.send(wse.CloseConnection(1000))

    peer, _ = converse(ws, script)
    assert peer.head is not None and peer.head[0] == 1e7


def test_arrivals_keep_256_notes_by_default() -> None:
    """The relay's notes are bounded: 256 by default, the oldest dropped first."""
    arrivals = ClientArrivals()
    for i in range(257):
        arrivals.note(b"%d" % i, float(i))
    assert len(arrivals) == 256
    assert arrivals.take(b"0") is None and arrivals.take(b"1") == 1.0


def test_a_failing_drop_after_the_clients_close_ends_quietly() -> None:
    """The drop handler fails (the client's connection is already gone) while the session is
    ending on the client's close: the session still ends without an error."""
    plan = WsPlan((Turn(None, ()),), WsClose(0, WsCloseKind.DROPPED), 10 * MS)

    async def on_drop(sent: int) -> None:
        await asyncio.sleep(0.1)
        raise ConnectionResetError("the client is gone")

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.05)
        peer.send(wse.CloseConnection(1000))

    ws = WsServe(Head(0, 101, "", ()), plan, on_drop=on_drop)
    peer, done = converse(ws, script)
    assert peer.frames == [(50.0, close_frame(1000))]
    assert done == 110.0


def test_fragments_in_one_read_are_one_message_at_once() -> None:
    """A message whose fragments arrive in a single read is matched and answered at once."""
    plan = WsPlan((Turn(None, ()), Turn(cli(b"abcd"), ((0, srv(b"ok")),))), OPEN, 0)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        first = peer.conn.send(wse.BytesMessage(b"ab", message_finished=False))
        peer.writer.write(first + peer.conn.send(wse.BytesMessage(b"cd")))
        await asyncio.sleep(0.05)
        peer.send(wse.CloseConnection(1000))

    peer, _ = converse(WsServe(Head(0, 101, "", ()), plan), script)
    assert peer.frames[0] == (10.0, b"\x82\x02ok")


def test_a_ping_after_the_servers_close_is_not_answered() -> None:
    """A ping that crosses the server's close frame gets no pong (the server may not send one
    after its close); the client's close then ends the session normally."""
    plan = WsPlan((Turn(None, ()),), WsClose(0, WsCloseKind.CLOSE, 1001, "", False), 10 * MS)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.02)
        peer.send(wse.Ping(b"late"))
        await asyncio.sleep(0.01)
        peer.send(wse.CloseConnection(1001))

    peer, done = converse(WsServe(Head(0, 101, "", ()), plan), script)
    assert peer.frames == [(10.0, close_frame(1001))]
    assert (peer.end, done) == ("eof", 30.0)


def test_a_close_answer_that_cannot_be_written_ends_quietly() -> None:
    """The client's close arrives but the connection can no longer be written: the server's
    answer is dropped and it ends without an error."""
    socks: list[socket.socket] = []

    async def script(peer: Peer) -> None:
        await asyncio.sleep(0.01)
        socks[0].shutdown(socket.SHUT_WR)  # the server's side can no longer send
        peer.send(wse.CloseConnection(1000))

    ws = WsServe(Head(0, 101, "", ()), WsPlan((Turn(None, ()),), OPEN, 0))
    peer, done = converse(ws, script, server_socks=socks)
    assert (peer.frames, peer.end, done) == ([], "eof", 10.0)


def test_a_drop_is_an_abort_when_the_careful_reset_cannot_be_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the reset after draining cannot be done (SO_LINGER refused), the connection is
    aborted anyway: the client is not left waiting."""

    async def refused(transport: object, sock: object) -> bool:
        return False

    monkeypatch.setattr(websocket_mod, "reset_after_drain", refused)
    plan = WsPlan((Turn(None, ((0, srv("a")),)),), WsClose(0, WsCloseKind.DROPPED), 10 * MS)

    async def script(peer: Peer) -> None:
        await asyncio.sleep(1)  # the test fails here if the connection is never ended

    peer, _ = converse(WsServe(Head(0, 101, "", ()), plan), script)
    assert peer.frames == [(0.0, b"\x81\x01a")]
    assert peer.end == "eof"
