"""The replay origin: a loopback HTTP/1.1 server that executes schedules on real sockets.

Each response is sent as its :class:`~replayproxy._core.schedule.model.Schedule` says: the head at
its offset, every :class:`~replayproxy._core.schedule.model.Write` as its own HTTP/1.1 chunk in its
own socket write (TCP_NODELAY) at its *absolute* offset from the moment the request arrived
(writes due at the same offset share one socket write but keep their chunks), then the finish:
the terminator (COMPLETE, kept alive), a FIN (CLOSE), a TCP RST (RESET) or silence (HANG).

Requests are read by :mod:`replayproxy._engine.http1_reader`. How a schedule becomes socket writes
(joined per instant, bounded per connection) is :mod:`replayproxy._engine.http1_writer`; the origin
writes them as the transport drains (at most :data:`WRITE_BUFFER_HIGH` bytes wait for a slow
reader).

Bodies are always chunked: a close-delimited body would make a reset look like a clean end to a
client behind mitmproxy (docs/contributing/mitmproxy-internals.md §3). So recorded
``content-length`` and ``transfer-encoding`` (and the hop-by-hop ``connection`` / ``keep-alive``)
headers are dropped and ``transfer-encoding: chunked`` is sent; ``content-encoding`` and the bytes
stay as recorded.

Three ways in:

- behind the mitmproxy addon, which matches the request and hands its schedule over
  (:mod:`~replayproxy._engine.handoff`: a token, or packed for an origin in a child process);
- directly (:class:`~replayproxy._engine.server.ReplayServer`, no mitmproxy): the origin
  matches requests itself through a :class:`~replayproxy._engine.session.ReplaySession`, as if
  sent to the upstream it stands in for (base-URL mode) or, given ``tls`` (forward mode), to
  where they say: absolute URLs, and CONNECT tunnels (:mod:`~replayproxy._engine.proxy.tunnel`).

When the clock starts (:mod:`~replayproxy._engine.pacing`): directly, at the socket read that
delivered the request's last byte (stamped in ``data_received``); behind mitmproxy at its
``request.timestamp_end``, passed to :meth:`Origin.expect` as ``arrived``; all on the origin's
injected ``clock`` (:mod:`~replayproxy._engine.clock`), by default the event loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable

from replayproxy._core.cassette.model import Request
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.options import ConnectionLimits
from replayproxy._core.replay.upstream import base_of, on_upstream
from replayproxy._core.schedule.model import Schedule
from replayproxy._engine import resolving
from replayproxy._engine.clock import LOOP_CLOCK, Clock
from replayproxy._engine.failsafe import (
    ReplayFailure,
    describe,
    failure_of,
    failure_response,
)
from replayproxy._engine.handoff import (
    FAILURE_HEADER,
    PACKED_HEADER,
    TOKEN_HEADER,
    Handoffs,
    Planned,
)
from replayproxy._engine.http1_reader import MAX_HEAD, BadRequest, StampedReader, read_request
from replayproxy._engine.http1_writer import (
    Whole,
    WritesCache,
    head_bytes,
    plain_whole,
    send_plain,
    wire_headers,
)
from replayproxy._engine.http2.dispatch import serve_unless_http1
from replayproxy._engine.listener import LISTEN_BACKLOG, Listener, Slot, bind
from replayproxy._engine.memory import ReleaseAfterBigBodies
from replayproxy._engine.pacing import ABSORB_MAX, clock_start, execute
from replayproxy._engine.proxy.tunnel import ServerContexts, open_tunnel
from replayproxy._engine.session import Passthrough, ReplaySession
from replayproxy._engine.websocket import WsServe, serve_websocket
from replayproxy._errors import ReplayProxyError

__all__ = [
    "ABSORB_MAX",
    "FAILURE_HEADER",
    "LISTEN_BACKLOG",
    "PACKED_HEADER",
    "TOKEN_HEADER",
    "FailureHandler",
    "Origin",
    "Planned",
    "Whole",
    "clock_start",
    "wire_headers",
]

FailureHandler = Callable[[str, BaseException], ReplayFailure]
"""Counts a request replay failed to answer (``ReplaySession.fail``); returns the failure."""

WRITE_BUFFER_HIGH = 256 * 1024
"""Per connection, the origin stops writing while this many bytes wait for a slow reader
(the transport's high-water mark); with one write of at most JOIN_MAX on top, a client that
stops reading makes the origin hold at most ~320 KiB for it, whatever the body size."""


class _Biggest:
    """The largest request body seen on one connection (its buffers may hold that much)."""

    __slots__ = ("big",)

    def __init__(self) -> None:
        self.big = 0


class Origin:
    """An asyncio HTTP/1.1 server on ``127.0.0.1:0`` that executes replay schedules.

    Run it on a loop (``await start()`` / ``await close()``). With a ``session`` it matches
    requests itself; without one it serves only schedules registered with :meth:`expect`.
    It fails closed (:mod:`~replayproxy._engine.failsafe`): a request it cannot answer gets the
    explained 500, counted by ``fail`` (default: the session's ``fail``), and a request it
    cannot read gets a 400; it never drops a connection without a word.

    Its connections are accepted by a :class:`~replayproxy._engine.listener.Listener` (at most
    ``max_connections`` at once, no log flood when out of file descriptors). With a session
    (base-URL mode, any client) it also times requests out as the session's
    :class:`~replayproxy._core.replay.options.ConnectionLimits` say; behind mitmproxy (no
    session) mitmproxy times its clients out and keeps its upstream connections as it likes.
    """

    def __init__(
        self,
        session: ReplaySession | None = None,
        *,
        fail: FailureHandler | None = None,
        upstream: str | None = None,
        secret: str | None = None,
        tls: ServerContexts | None = None,
        clock: Clock = LOOP_CLOCK,
    ) -> None:
        self.session = session
        # What schedules are timed on, read stamps and request timeouts included.
        self.clock = clock
        # Forward mode: CONNECT opens a tunnel, TLS answered with certificates from here.
        self.tls = tls
        # Requests carrying this secret bring their schedule along (origin_process).
        self._handoffs = Handoffs(secret)
        self.host = "127.0.0.1"
        # Base-URL mode stands in for this host: requests are matched as if sent to it, as
        # mitmproxy's reverse mode shows them (matters for --match-host and explanations).
        self.upstream = upstream
        self._upstream_base = None if upstream is None else base_of(upstream)
        # Where failures are counted: the addon's session (behind mitmproxy) or our own.
        self._fail = fail or (session.fail if session is not None else _uncounted)
        self.port = 0
        self._listener: Listener | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._memory = ReleaseAfterBigBodies()
        # Framed schedules (bounded); none kept in the origin process: unpacked, each is new.
        self._writes = WritesCache(max_bytes=0) if secret is not None else WritesCache()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def limits(self) -> ConnectionLimits:
        """The connection limits served by: the session's (read for each connection: a server
        kept across tests switches sessions), else the defaults."""
        return ConnectionLimits() if self.session is None else self.session.limits

    @property
    def listener(self) -> Listener | None:
        """What accepts the connections (its counts: ``refused``, ``evicted``), once started."""
        return self._listener

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        sockets = bind(host, port)
        self._listener = Listener(sockets, self._connect, lambda: self.limits.max_connections)
        self._listener.start()
        self.host, self.port = sockets[0].getsockname()[:2]

    def _connect(self, sock: socket.socket, slot: Slot) -> None:
        """Serve an accepted connection (the listener counts it in ``slot``)."""
        loop = asyncio.get_running_loop()
        reader = StampedReader(limit=MAX_HEAD, loop=loop)
        reader.clock = self.clock
        if self.session is not None:  # direct clients: any client, time them out
            limits = self.limits
            reader.watch(limits.head_timeout, limits.body_timeout)

        def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> Awaitable[None]:
            return self._handle(r, w, slot)

        def protocol() -> asyncio.StreamReaderProtocol:  # asyncio.start_server, stamped reads
            return asyncio.StreamReaderProtocol(reader, handle, loop=loop)

        async def connect() -> None:
            try:
                transport, _ = await loop.connect_accepted_socket(protocol, sock)
            except BaseException:
                slot.closed()
                sock.close()
                raise
            slot.transport = transport
            slot.has_partial_head = lambda: reader.has_partial_request

        task = loop.create_task(connect())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._listener = None

    def expect(
        self,
        schedule: Schedule,
        method: str = "GET",
        *,
        arrived: float | None = None,
        websocket: WsServe | None = None,
    ) -> str:
        """Register ``schedule`` for the request that will carry the returned token
        (``websocket``: the WebSocket session to replay after the upgrade).

        ``arrived``: when the request reached replayproxy, in this loop's ``time()``; the
        schedule's offsets count from then (default: from when the origin reads the request).
        Call it on the origin's loop (the mitmproxy hooks do).
        """
        return self._handoffs.expect(Planned(schedule, method.upper(), arrived, websocket))

    def forget(self, token: str) -> None:
        """Drop a registered schedule that will not be asked for (the flow was killed)."""
        self._handoffs.forget(token)

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slot: Slot | None = None
    ) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)  # type: ignore[arg-type]  # a handler always runs in a task
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        holder = _Biggest()
        try:
            await self._serve(reader, writer, slot, holder, self._upstream_base)
        except ConnectionError:
            pass
        except asyncio.CancelledError:
            # Only close() cancels handlers. Ending the task normally (not re-raising) avoids
            # CPython's spurious "Exception in callback StreamReaderProtocol..." report for
            # cancelled client_connected_cb tasks (3.11, 3.12.1).
            writer.transport.abort()
        except Exception:  # a bug after the response began: cut it visibly, never hang
            writer.transport.abort()
        finally:
            self._tasks.discard(task)
            self._memory.seen(holder.big)  # the connection's buffers go now: release after them
            if slot is not None:
                slot.closed()
            if not writer.transport.is_closing():
                writer.close()

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        slot: Slot | None,
        holder: _Biggest,
        base: tuple[str, str] | None,
    ) -> None:
        """Serve the connection's requests, matched as if sent to ``base`` (``None``: where
        their own URLs say); a CONNECT (forward mode) opens a tunnel served the same way."""
        clock = self.clock
        ready = clock.time()  # from here on the next request could be read
        if slot is not None:
            slot.waiting()  # may be closed to make room for a new client
        # The first bytes say what the client speaks: HTTP/2 (h2c) and TLS are not HTTP/1.1.
        http1 = await serve_unless_http1(self, reader, writer, base)
        if http1 is None:
            return
        reader = http1
        keep_alive = True
        while keep_alive:
            if slot is not None:
                slot.waiting()  # may be closed to make room for a new client
            try:
                request = await read_request(reader, writer)
            except BadRequest as e:
                # Never drop a connection without a word: say what was wrong, then close
                # (unless the listener closed it to make room, and said so itself).
                if not writer.transport.is_closing():
                    text = f"replayproxy: bad request: {e}\n".encode()
                    await send_plain(writer, e.status, text)
                return
            if request is None:
                return
            if slot is not None:
                slot.busy()
            if request.method == "CONNECT" and self.tls is not None and base is None:
                await self._tunnel(request, reader, writer, slot, holder)
                return
            # The read that completed the request; not earlier than when we could start on
            # it (a pipelined request waited for the response before it).
            now = clock.time()
            received = reader.received_at if isinstance(reader, StampedReader) else now
            t0 = max(ready, min(received, now))
            keep_alive = await self._respond(request, t0, reader, writer, base)
            holder.big = max(holder.big, len(request.body))
            self._memory.seen(holder.big)
            if (request.header("connection") or "").lower() == "close":
                keep_alive = False
            ready = clock.time()

    async def _tunnel(
        self,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        slot: Slot | None,
        holder: _Biggest,
    ) -> None:
        """Open the tunnel ``request`` (a CONNECT) asks for and serve what comes through it."""
        assert self.tls is not None and self.session is not None
        timeout = self.limits.head_timeout
        base = await open_tunnel(request.url, reader, writer, self.session, self.tls, timeout)
        if base is not None:
            writer.transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)  # the TLS one
            await self._serve(reader, writer, slot, holder, base)

    async def _respond(
        self,
        request: Request,
        t0: float,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        base: tuple[str, str] | None,
    ) -> bool:
        try:
            job = await self.job(request, base)
            if isinstance(job, Planned):
                writes = _compiled(self._writes, job.schedule, job.method)
        except Exception as e:  # fail closed: the explained 500, never a dropped connection
            job = self.failure(request, e)
        if not isinstance(job, Planned):
            status, headers, body = job
            writer.write(head_bytes(status, "", headers) + body)
            await writer.drain()
            return True
        t0 = clock_start(t0, job.arrived)
        if job.websocket is not None:
            described = describe(request.method, request.url)

            def protocol_error(line: str) -> None:
                self._fail(described, ReplayProxyError(line))

            await serve_websocket(
                job.websocket, request, t0, reader, writer, protocol_error, self.clock
            )
            return False
        return await execute(job.schedule, writes, t0, reader, writer, self.clock)

    def failure(self, request: Request, exc: BaseException) -> Whole:
        """The explained 500 for ``request``, which replay failed to answer because of ``exc``
        (counted by the failure handler), whatever protocol it came over."""
        failure = self._fail(describe(request.method, request.url), exc)
        status, headers, body = failure_response(failure)
        if self._handoffs.secret is not None:  # for the proxy's count (origin_process)
            # A header value: printable ASCII only, whatever the exception said.
            summary = bytes(c if 32 <= c < 127 else 63 for c in failure.summary.encode())
            headers = (*headers, (FAILURE_HEADER.encode(), summary))
        return status, headers, body

    async def job(self, request: Request, base: tuple[str, str] | None = None) -> Whole | Planned:
        """What to send for ``request``, over HTTP/1.1 or HTTP/2: a whole response, or a
        schedule to execute; matched as if sent to ``base`` (``(scheme, netloc)``: the
        upstream stood in for, or a tunnel's host), else where its URL says.

        Everything that can fail (matching, planning) happens here, before the first byte is
        written, so a failure can still be answered with a complete response (:meth:`failure`).
        """
        handed = self._handoffs.take(request)
        if handed is not None:
            return handed
        if self.session is None:
            return plain_whole(500, b"replayproxy: no replay session\n")
        if base is not None:
            request = on_upstream(request, base)
        result = await resolving.resolve(self.session, request)
        if isinstance(result, Passthrough):
            # Forwarding needs the mitmproxy shell; the direct server only ever replays.
            return plain_whole(502, b"replayproxy: this replay server cannot forward or record\n")
        if isinstance(result, Miss):
            return await resolving.explained(self.session, request, result)
        return Planned(result.schedule, request.method.upper(), None, result.websocket)


# The seam tests break on purpose (tests/reliability), called with the origin's own cache.
_compiled = WritesCache.writes_for


def _uncounted(request: str, exc: BaseException) -> ReplayFailure:
    """The failure handler of an origin that counts nothing (no session)."""
    return failure_of(exc, request)
