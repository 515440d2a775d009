"""The replay origin: a loopback HTTP/1.1 server that executes schedules on real sockets.

Each response is sent as its :class:`~replayproxy.core.schedule.Schedule` says: the head at its
offset, every :class:`~replayproxy.core.schedule.Write` as its own HTTP/1.1 chunk in its own
socket write (TCP_NODELAY) at its *absolute* offset from the moment the request arrived (no
drift; writes due at the very same offset, e.g. all of them at ``--speed 0``, share one socket
write but keep their own chunks), then the finish: the chunk terminator (COMPLETE, the
connection is kept alive), a FIN without terminator (CLOSE), a TCP RST (RESET) or silence
until the peer leaves (HANG).

Bodies are always chunked: a close-delimited body would make a reset look like a clean end to a
client behind mitmproxy (mitmproxy-notes §3.1). So recorded ``content-length`` and
``transfer-encoding`` (and the hop-by-hop ``connection`` / ``keep-alive``) headers are dropped
and ``transfer-encoding: chunked`` is sent; ``content-encoding`` and the bytes stay as recorded.

Two ways in:

- behind the mitmproxy addon: the addon matches the request, registers the schedule with
  :meth:`Origin.expect` and forwards the request with the private ``x-replayproxy-token`` header,
  which the origin strips and uses to find the schedule;
- directly (:class:`~replayproxy.engine.server.ReplayServer`, no mitmproxy): the origin
  matches requests itself through a :class:`~replayproxy.engine.session.ReplaySession`.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import itertools
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from replayproxy.core.matching import Miss
from replayproxy.core.model import Header, Request
from replayproxy.core.schedule import FinishKind, Schedule
from replayproxy.engine.session import ReplaySession, unmatched_response
from replayproxy.engine.sockets import reset_after_drain
from replayproxy.engine.websocket import WsServe, serve_websocket

__all__ = ["TOKEN_HEADER", "Origin", "wire_headers"]

TOKEN_HEADER = "x-replayproxy-token"

# Framing is ours to choose (always chunked); connection management is per hop.
_DROPPED = {b"content-length", b"transfer-encoding", b"connection", b"keep-alive"}
_MAX_HEAD = 256 * 1024


class _BadRequest(Exception):
    """The peer sent something that is not an HTTP/1.1 request we can read."""


def wire_headers(headers: Sequence[Header], *, chunked: bool = True) -> list[Header]:
    """Recorded headers as sent on replay: framing headers replaced by ``chunked`` framing."""
    out = [(k, v) for k, v in headers if k.lower() not in _DROPPED]
    if chunked:
        out.append((b"transfer-encoding", b"chunked"))
    return out


def _has_body(method: str, status: int) -> bool:
    return method != "HEAD" and status >= 200 and status not in (204, 304)


def _head_bytes(status: int, reason: str, headers: Sequence[Header]) -> bytes:
    if not reason:
        with contextlib.suppress(ValueError):
            reason = http.HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {reason}".encode("latin-1")]
    lines += [k + b": " + v for k, v in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """Read one request (head and whole body); ``None`` when the peer closed between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        raise _BadRequest("connection closed inside a request head") from None
    except asyncio.LimitOverrunError:
        raise _BadRequest("request head too large") from None
    lines = head[:-4].split(b"\r\n")
    try:
        method, target, version = lines[0].decode("latin-1").split(" ", 2)
        headers = tuple(
            (k.strip(), v.strip()) for k, v in (line.split(b":", 1) for line in lines[1:])
        )
    except ValueError:
        raise _BadRequest(f"malformed request head {lines[0][:80]!r}") from None
    fields = {k.lower(): v for k, v in headers}
    if fields.get(b"expect", b"").lower() == b"100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    try:
        if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(fields.get(b"content-length", b"0")))
    except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        raise _BadRequest("malformed or truncated request body") from None
    host = fields.get(b"host", b"127.0.0.1").decode("latin-1")
    url = target if "://" in target else f"http://{host}{target}"
    return Request(method, url, version, headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def _reset(writer: asyncio.StreamWriter) -> None:
    """End the connection with a TCP RST, after the bytes already written reached the peer."""
    sock = writer.get_extra_info("socket")
    transport = writer.transport
    if sock is None or not await reset_after_drain(transport, sock):
        transport.abort()  # the peer left, or no SO_LINGER: end it anyway


class Origin:
    """An asyncio HTTP/1.1 server on ``127.0.0.1:0`` that executes replay schedules.

    Run it on a loop (``await start()`` / ``await close()``). With a ``session`` it matches
    requests itself; without one it serves only schedules registered with :meth:`expect`.
    """

    def __init__(self, session: ReplaySession | None = None) -> None:
        self.session = session
        self.port = 0
        self._server: asyncio.Server | None = None
        self._expected: dict[str, tuple[Schedule, str, WsServe | None]] = {}
        self._tokens = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = await asyncio.start_server(self._handle, host, port, limit=_MAX_HEAD)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    def expect(
        self, schedule: Schedule, method: str = "GET", websocket: WsServe | None = None
    ) -> str:
        """Register ``schedule`` for the request that will carry the returned token
        (``websocket``: the WebSocket session to replay after the upgrade).

        Call it on the origin's loop (the mitmproxy hooks do).
        """
        token = str(next(self._tokens))
        self._expected[token] = (schedule, method.upper(), websocket)
        return token

    def forget(self, token: str) -> None:
        """Drop a registered schedule that will not be asked for (the flow was killed)."""
        self._expected.pop(token, None)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            keep_alive = True
            while keep_alive:
                request = await _read_request(reader, writer)
                if request is None:
                    break
                t0 = asyncio.get_running_loop().time()
                keep_alive = await self._respond(request, t0, reader, writer)
                if (request.header("connection") or "").lower() == "close":
                    keep_alive = False
        except (_BadRequest, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Only close() cancels handlers. Ending the task normally (not re-raising) avoids
            # CPython's spurious "Exception in callback StreamReaderProtocol..." report for
            # cancelled client_connected_cb tasks (3.11, 3.12.1).
            writer.transport.abort()
        finally:
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    async def _respond(
        self,
        request: Request,
        t0: float,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        token = request.header(TOKEN_HEADER)
        if token is not None:
            found = self._expected.pop(token, None)
            if found is None:
                return await self._plain(writer, 500, b"replayproxy: unknown replay token\n")
            if found[2] is not None:
                await serve_websocket(found[2], request, t0, reader, writer)
                return False
            return await _execute(found[0], found[1], t0, reader, writer)
        if self.session is None:
            return await self._plain(writer, 500, b"replayproxy: no replay session\n")
        result = self.session.resolve(request)
        if isinstance(result, Miss):
            status, headers, body = unmatched_response(result)
            writer.write(_head_bytes(status, "", headers) + body)
            await writer.drain()
            return True
        if result.websocket is not None:
            await serve_websocket(result.websocket, request, t0, reader, writer)
            return False
        return await _execute(result.schedule, request.method.upper(), t0, reader, writer)

    @staticmethod
    async def _plain(writer: asyncio.StreamWriter, status: int, body: bytes) -> bool:
        headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
        writer.write(_head_bytes(status, "", headers) + body)
        await writer.drain()
        return True


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A schedule in wire form: ``(at_ns, bytes)`` steps, each sent in ONE socket write.

    The head, the framed body chunks and the chunk terminator are built once. Pieces due at
    the same instant (everything at ``--speed 0``) are joined into one step: each body write
    still is its own HTTP/1.1 chunk, so the chunk boundaries (what mitmproxy forwards one by
    one, and what a client de-chunks) stay as recorded, while the origin saves a syscall and
    an event-loop round per chunk. Pieces due at different instants are never joined.
    """

    steps: tuple[tuple[int, bytes], ...]


def _compile(schedule: Schedule, method: str) -> _Compiled:
    head = schedule.head
    if head is None:
        return _Compiled(())
    body = _has_body(method, head.status)
    pieces = [
        (
            head.at_ns,
            _head_bytes(head.status, head.reason, wire_headers(head.headers, chunked=body)),
        )
    ]
    if body:
        for w in schedule.writes:
            if w.data:  # an empty chunk would be the terminator
                pieces.append((w.at_ns, b"%x\r\n%s\r\n" % (len(w.data), w.data)))
        if schedule.finish.kind is FinishKind.COMPLETE:
            pieces.append((schedule.finish.at_ns, b"0\r\n\r\n"))
    steps: list[tuple[int, list[bytes]]] = []
    for at_ns, data in pieces:
        if steps and steps[-1][0] == at_ns:
            steps[-1][1].append(data)
        else:
            steps.append((at_ns, [data]))
    return _Compiled(tuple((at, b"".join(parts)) for at, parts in steps))


# Fault-free schedules are planned once per interaction and reused (see faults.plan), so the
# same Schedule object comes back request after request: compile it once too. Keyed by
# identity; the entry keeps the schedule alive, so its id cannot be reused while cached.
_COMPILED: dict[tuple[int, str], tuple[Schedule, _Compiled]] = {}
_COMPILED_MAX = 1024


def _compiled(schedule: Schedule, method: str) -> _Compiled:
    key = (id(schedule), method)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] is schedule:
        return hit[1]
    out = _compile(schedule, method)
    if len(_COMPILED) >= _COMPILED_MAX:
        with contextlib.suppress(KeyError, StopIteration, RuntimeError):
            del _COMPILED[next(iter(_COMPILED))]  # oldest first
    _COMPILED[key] = (schedule, out)
    return out


async def _execute(
    schedule: Schedule,
    method: str,
    t0: float,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> bool:
    """Send ``schedule``; return whether the connection can serve another request."""
    loop = asyncio.get_running_loop()

    async def until(at_ns: int) -> None:
        # Absolute deadlines: a late wake-up does not delay the writes after it.
        delay = t0 + at_ns / 1e9 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)

    for at_ns, data in _compiled(schedule, method).steps:
        await until(at_ns)
        writer.write(data)
        await writer.drain()
    finish = schedule.finish
    await until(finish.at_ns)
    if schedule.head is None:
        writer.close()
        return False
    if finish.kind is FinishKind.COMPLETE:
        return True
    if finish.kind is FinishKind.CLOSE:
        writer.close()
    elif finish.kind is FinishKind.RESET:
        await _reset(writer)
    else:  # HANG: say nothing more, keep the socket open until the peer goes away
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass
    return False
