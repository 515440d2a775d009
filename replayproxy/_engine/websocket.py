"""The WebSocket shell of the replay origin: upgrade, then run a replayed conversation.

The origin reads the upgrade request with its HTTP/1.1 reader; :func:`serve_websocket` answers
with the recorded ``101`` head (a fresh ``Sec-WebSocket-Accept``, no extensions: replayed
messages are sent uncompressed) and then executes a
:class:`~replayproxy._core.websocket.conversation.Conversation`: client frames are parsed with
``wsproto`` (sans-IO, installed with mitmproxy), each complete client message is handed to the
conversation, and the :class:`~replayproxy._core.websocket.conversation.Send` / ``Close`` actions it
returns are executed by one sender task, in order, each at its absolute due time (no drift).

Server frames are built here rather than by wsproto so that a message can be sent in the
fragments the schedule asks for (continuation frames may split a UTF-8 character: RFC 6455
§5.6 only requires the reassembled text to be valid).

Client protocol errors (invalid UTF-8, an unmasked frame, RSV bits, a reserved opcode, a bad
close code, a 2^63+ length: what wsproto reports) are answered as RFC 6455 §7.4 says, with a
close frame carrying 1002 or 1007 and wsproto's reason, and a message longer than
:data:`MAX_MESSAGE` with 1009; each is told to ``on_protocol_error`` (the origin counts it
as a replay failure and logs its line). A big message's memory is given back after it
(:mod:`~replayproxy._engine.memory`): a 300 MB message once left 202-666 MiB held.

When the clock of a turn starts: recorded delays count from when the client's message reached
the recording proxy, so on replay they count from when it reached replayproxy. Directly, that
is when the engine has the complete message. Behind mitmproxy the message is first parsed,
passed through every addon's hook and relayed; the replay addon notes when mitmproxy had it
(:class:`ClientArrivals`, filled from its ``websocket_message`` hook before mitmproxy relays
the message) and the turn counts from the earlier of the two times, so that inbound latency
is absorbed by the recorded delays instead of being added to them, as for HTTP requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import wsproto.events as wse
from wsproto.connection import Connection, ConnectionState, ConnectionType
from wsproto.utilities import LocalProtocolError, generate_accept_token

from replayproxy._core.cassette.model import Header, Request
from replayproxy._core.schedule.model import Head
from replayproxy._core.websocket.conversation import Close, Conversation, Send, WsPlan
from replayproxy._engine.clock import LOOP_CLOCK, Clock, Writer
from replayproxy._engine.memory import ReleaseAfterBigBodies
from replayproxy._engine.sockets import reset_after_drain

__all__ = [
    "MAX_MESSAGE",
    "ClientArrivals",
    "WsServe",
    "encode_frames",
    "is_upgrade",
    "serve_websocket",
]

MAX_MESSAGE = 64 * 2**20
"""The longest client message (bytes, all its fragments) the engine takes; a longer one is
closed with 1009 (message too big). Replayed messages are matched, never relayed, and no
provider's realtime API takes messages near this size."""

ProtocolErrorHandler = Callable[[str], object]

_OP_CONT, _OP_TEXT, _OP_BINARY = 0x0, 0x1, 0x2
# Recorded headers the replayed handshake must not repeat: the accept token is per key, an
# extension would make the client expect compressed frames, framing headers mean nothing here.
_DROPPED = {
    b"sec-websocket-accept",
    b"sec-websocket-extensions",
    b"content-length",
    b"transfer-encoding",
}


class ClientArrivals:
    """When a relay in front of the engine (mitmproxy) received each client message.

    The relay calls :meth:`note` as it receives a message, before relaying it; the engine
    calls :meth:`take` when it has read the message itself. Entries are paired by payload,
    in order, rather than by count: a message another addon dropped (never relayed) is skipped
    when the next relayed one is taken, and a message changed on the way matches nothing, so
    the engine's own time is used for it, never another message's. Both sides run on the same
    event loop, so no lock is needed; at most ``limit`` entries are kept.
    """

    def __init__(self, limit: int = 256) -> None:
        self._seen: deque[tuple[bytes, float]] = deque(maxlen=limit)

    def note(self, data: bytes, at: float) -> None:
        """Client message ``data`` reached the relay at loop time ``at``."""
        self._seen.append((data, at))

    def take(self, data: bytes) -> float | None:
        """When the relay received ``data`` (the earliest such message not taken yet), and
        forget it and any entry before it; ``None`` if the relay did not note it."""
        for i, (seen, at) in enumerate(self._seen):
            if seen == data:
                for _ in range(i + 1):
                    self._seen.popleft()
                return at
        return None

    def __len__(self) -> int:
        return len(self._seen)


@dataclass(frozen=True, slots=True)
class WsServe:
    """What the origin needs to replay one WebSocket session.

    ``on_miss`` is told the explanation when a client message does not match. ``on_drop``
    is awaited with the number of server messages sent before the connection is dropped
    without a close frame: behind mitmproxy it cuts the client's connection too, because
    mitmproxy would otherwise turn the dropped upstream into a clean 1000 close (wsproto sends
    1000 for the local-only 1006). ``arrivals``: when the relay in front of the engine had
    each client message (see :class:`ClientArrivals`); ``None`` directly.
    """

    head: Head
    plan: WsPlan
    on_miss: Callable[[str], object] | None = None
    on_drop: Callable[[int], Awaitable[None]] | None = None
    arrivals: ClientArrivals | None = None


def is_upgrade(request: Request) -> bool:
    """Whether ``request`` asks to upgrade to a WebSocket."""
    return (request.header("upgrade") or "").lower() == "websocket"


def _frame(opcode: int, payload: bytes, fin: bool) -> bytes:
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        return struct.pack("!BB", first, n) + payload
    if n < 65536:
        return struct.pack("!BBH", first, 126, n) + payload
    return struct.pack("!BBQ", first, 127, n) + payload


def encode_frames(text: bool, data: bytes, fragments: tuple[int, ...] = ()) -> bytes:
    """A server (unmasked) message: one frame, or one frame per fragment size given."""
    sizes = fragments or (len(data),)
    out, pos = [], 0
    for i, size in enumerate(sizes):
        opcode = (_OP_TEXT if text else _OP_BINARY) if i == 0 else _OP_CONT
        out.append(_frame(opcode, data[pos : pos + size], i == len(sizes) - 1))
        pos += size
    return b"".join(out)


def _handshake(head: Head, key: str) -> bytes:
    headers: list[Header] = [(k, v) for k, v in head.headers if k.lower() not in _DROPPED]
    names = {k.lower() for k, _ in headers}
    if b"upgrade" not in names:
        headers.append((b"upgrade", b"websocket"))
    if b"connection" not in names:
        headers.append((b"connection", b"Upgrade"))
    headers.append((b"sec-websocket-accept", generate_accept_token(key.encode("latin-1"))))
    reason = head.reason or "Switching Protocols"
    lines = [f"HTTP/1.1 101 {reason}".encode("latin-1"), *(k + b": " + v for k, v in headers)]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def serve_websocket(
    ws: WsServe,
    request: Request,
    t0: float,
    reader: asyncio.StreamReader,
    writer: Writer,
    on_protocol_error: ProtocolErrorHandler | None = None,
    clock: Clock = LOOP_CLOCK,
) -> None:
    """Answer the upgrade ``request`` (arrived at ``t0`` on ``clock``) and replay the session;
    ``on_protocol_error`` is told each client protocol error (one line, with the close code)."""

    def now_ns() -> int:
        return round((clock.time() - t0) * 1e9)

    def arrival_and_now(message: bytes) -> tuple[int, int]:
        """When ``message`` reached replayproxy (now, or earlier when the relay had it
        first), and now."""
        now = now_ns()
        seen = None if ws.arrivals is None else ws.arrivals.take(message)
        if seen is None:
            return now, now
        return max(0, min(now, round((seen - t0) * 1e9))), now  # not after now nor before t0

    key = request.header("sec-websocket-key")
    if key is None:
        body = b"replayproxy: a WebSocket was recorded here; send an upgrade request\n"
        writer.write(
            b"HTTP/1.1 426 Upgrade Required\r\nupgrade: websocket\r\nconnection: close\r\n"
            b"content-type: text/plain\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        return
    if ws.head.at_ns > 0:
        await clock.sleep_until(clock.time() + ws.head.at_ns / 1e9)
    writer.write(_handshake(ws.head, key))
    await writer.drain()
    conn = Connection(ConnectionType.SERVER)
    conversation = Conversation(ws.plan)
    queue: asyncio.Queue[Send | Close | None] = asyncio.Queue()
    for action in conversation.start(now_ns()):
        queue.put_nowait(action)
    missed = _Wakeup(clock)
    sender = asyncio.create_task(_send_all(queue, conn, writer, t0, ws.on_drop, missed, clock))
    try:
        await _receive_all(
            conversation,
            conn,
            reader,
            writer,
            queue,
            arrival_and_now,
            ws.on_miss,
            missed,
            on_protocol_error,
        )
    finally:
        if not sender.done():
            queue.put_nowait(None)
            with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
                await asyncio.wait_for(asyncio.shield(sender), 1.0)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await sender


async def _receive_all(
    conversation: Conversation,
    conn: Connection,
    reader: asyncio.StreamReader,
    writer: Writer,
    queue: asyncio.Queue[Send | Close | None],
    arrival_and_now: Callable[[bytes], tuple[int, int]],
    on_miss: Callable[[str], object] | None,
    missed: _Wakeup,
    on_protocol_error: ProtocolErrorHandler | None = None,
) -> None:
    parts: list[bytes] = []
    size = 0
    memory = ReleaseAfterBigBodies()

    async def refuse(code: int, reason: str) -> None:
        """Close with ``code`` (our close frame first), tell it, stop receiving."""
        _drain(queue)
        missed.set()
        if on_protocol_error is not None:
            on_protocol_error(f"WebSocket protocol error from the client: {reason} (closed {code})")
        with contextlib.suppress(LocalProtocolError, ConnectionError):
            writer.write(conn.send(wse.CloseConnection(code=code, reason=reason[:120])))
            await writer.drain()
        writer.close()

    while True:
        data = await reader.read(65536)
        if writer.transport.is_closing():
            return
        conn.receive_data(data or None)
        for event in conn.events():
            if isinstance(event, wse.Message):
                payload = event.data.encode() if isinstance(event.data, str) else event.data
                size += len(payload)
                if size > MAX_MESSAGE:
                    parts = []
                    await refuse(1009, f"message larger than {MAX_MESSAGE // 2**20} MiB")
                    return
                parts.append(bytes(payload))
                if not event.message_finished:
                    continue
                text, message = isinstance(event.data, str), b"".join(parts)
                parts, size = [], 0
                actions = conversation.client_message(text, message, *arrival_and_now(message))
                # Not held while the connection waits for the next message: the release
                # (a moment later) can only give back what nothing refers to any more.
                memory.seen(len(message))
                message = payload = b""
                if conversation.miss is not None:
                    # An explained close goes out at once: the pending sends are dropped, the
                    # one the sender is waiting for too.
                    _drain(queue)
                    missed.set()
                    if on_miss is not None:
                        on_miss(conversation.miss)
                for action in actions:
                    queue.put_nowait(action)
            elif isinstance(event, wse.Ping):
                with contextlib.suppress(LocalProtocolError):
                    writer.write(conn.send(event.response()))
            elif isinstance(event, wse.CloseConnection):
                if data and conn.state is ConnectionState.OPEN:
                    # wsproto found a protocol error (it reports one as a close event, the
                    # connection still open): we close, with its code (1002, 1007).
                    await refuse(event.code, event.reason or "invalid frame")
                    return
                # The client closes (or the TCP connection ended): answer the close, stop.
                _drain(queue)
                if conn.state is ConnectionState.REMOTE_CLOSING:
                    writer.write(conn.send(event.response()))
                    with contextlib.suppress(ConnectionError):
                        await writer.drain()
                writer.close()
                return
        if not data:
            return


class _Wakeup:
    """The sender's wait for its next due time, which a miss cuts short.

    ``sleep`` costs what :func:`asyncio.sleep` costs (one timer, one future), where a timeout
    around ``Event.wait`` would cancel the task on every on-time send: the common case must
    stay as cheap as a plain sleep, since every server message waits here.
    """

    def __init__(self, clock: Clock = LOOP_CLOCK) -> None:
        self.clock = clock
        self.is_set = False
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        """A miss: end the current wait now, and make ``is_set`` true until ``clear``."""
        self.is_set = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def clear(self) -> None:
        self.is_set = False

    async def sleep(self, delay: float) -> None:
        """Wait ``delay`` seconds, or until :meth:`set`."""
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        clock = self.clock
        timer = clock.call_at(clock.time() + delay, _resolve, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _drain(queue: asyncio.Queue[Send | Close | None]) -> None:
    while not queue.empty():
        queue.get_nowait()


async def _send_all(
    queue: asyncio.Queue[Send | Close | None],
    conn: Connection,
    writer: Writer,
    t0: float,
    on_drop: Callable[[int], Awaitable[None]] | None,
    missed: _Wakeup,
    clock: Clock = LOOP_CLOCK,
) -> None:
    sent = 0
    while True:
        action = await queue.get()
        missed.clear()  # a miss before this was taken: the queue was drained then
        if action is None:
            return
        delay = t0 + action.at_ns / 1e9 - clock.time()
        if delay > 0:
            await missed.sleep(delay)
            if missed.is_set:
                continue  # dropped for the explained close, which is queued next
        if conn.state is not ConnectionState.OPEN:
            return
        if isinstance(action, Send):
            m = action.message
            writer.write(encode_frames(m.text, m.data, m.fragments))
            await writer.drain()
            sent += 1
            continue
        if action.code is None:  # a dropped connection: no close frame, a TCP RST
            if on_drop is not None:
                await on_drop(sent)
            sock = writer.get_extra_info("socket")
            if sock is None or not await reset_after_drain(writer.transport, sock):
                writer.transport.abort()
            return
        writer.write(conn.send(wse.CloseConnection(code=action.code, reason=action.reason)))
        await writer.drain()
        return
