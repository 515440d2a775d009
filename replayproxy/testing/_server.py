"""The simulator's HTTP/1.1 connection handler (asyncio streams) and its records.

One :class:`Connection` per TCP/TLS connection: it reads requests (keep-alive; bodies by
``Content-Length`` or chunked; answers ``Expect: 100-continue``), routes each one
(:func:`~replayproxy.testing._routes.route`), and writes the response following a
:class:`~replayproxy.testing._behavior.Plan`: the head, then ONE HTTP chunk per planned write
(TCP_NODELAY is set, so each write leaves as its own segment), then the planned finish.
Every response served is reported as a frozen :class:`Served` record.

Finish kinds: ``complete`` (chunked terminator, connection kept alive), ``reset`` (TCP RST via
``SO_LINGER(1, 0)`` + abort, after the written bytes left the process), ``close`` (FIN without
the chunked terminator), ``hang`` (nothing more until the client goes away), and
``client_gone`` (the client disconnected while we were writing), ``stopped`` (the simulator
was stopped mid-response).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

from replayproxy._errors import UsageError
from replayproxy.testing._behavior import KNOBS, Behavior, from_knobs, plan
from replayproxy.testing._routes import error_stream, route
from replayproxy.testing._streams import Stream

__all__ = ["Connection", "Served", "SimRequest"]

_MAX_HEAD = 64 * 1024


@dataclass(frozen=True)
class SimRequest:
    """A request as the simulator read it (header names as sent)."""

    method: str
    target: str  # path + query as on the request line
    http_version: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> str:
        return urlsplit(self.target).query

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)


@dataclass(frozen=True)
class Served:
    """What the simulator did for one request, for test assertions."""

    request: SimRequest
    stream: str  # STREAMS name, or "error-<status>"
    status: int
    behavior: Behavior
    received_ns: int  # time.monotonic_ns() when the request was fully read
    head: bytes  # the raw response head written ("" if none was written)
    head_ns: int | None
    # (time.monotonic_ns() after the write, body bytes without the chunk framing)
    writes: tuple[tuple[int, bytes], ...]
    finish: str  # complete | reset | close | hang | client_gone | stopped

    @property
    def body(self) -> bytes:
        """The body bytes written (de-chunked), as a client would reassemble them."""
        return b"".join(data for _, data in self.writes)

    @property
    def offsets_ns(self) -> tuple[int, ...]:
        """When each write happened, in ns after the request was fully read."""
        return tuple(ns - self.received_ns for ns, _ in self.writes)


class _BadRequest(Exception):
    pass


def _knobs(req: SimRequest) -> dict[str, str]:
    knobs = {}
    for key, value in parse_qsl(req.query, keep_blank_values=True):
        if f"x-{key.lower()}" in KNOBS:
            knobs[f"x-{key.lower()}"] = value
    for key, value in req.headers:
        if key.lower() in KNOBS:
            knobs[key.lower()] = value.strip()
    return knobs


class Connection:
    """Serves one client connection until it closes, a fault ends it, or it is cancelled."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        next_behavior: Callable[[], Behavior],
        on_served: Callable[[Served], None],
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.next_behavior = next_behavior
        self.on_served = on_served
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def run(self) -> None:
        keep = True
        try:
            while keep:
                try:
                    req = await self._read_request()
                except _BadRequest as e:
                    await self._write_error(400, str(e))
                    break
                if req is None:
                    break
                keep = await self._respond(req)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            if not self.writer.transport.is_closing():
                self.writer.close()

    async def _read_request(self) -> SimRequest | None:
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if e.partial.strip():
                raise _BadRequest("request head cut short") from None
            return None
        except asyncio.LimitOverrunError:
            raise _BadRequest("request head too large") from None
        lines = head[:-4].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(f"bad request line {lines[0][:80]!r}")
        headers = []
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise _BadRequest(f"bad header line {line[:80]!r}")
            headers.append((name, value.strip()))
        req = SimRequest(parts[0], parts[1], parts[2], tuple(headers), b"")
        if (req.header("expect") or "").lower() == "100-continue":
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await self._read_body(req)
        return SimRequest(req.method, req.target, req.http_version, req.headers, body)

    async def _read_body(self, req: SimRequest) -> bytes:
        try:
            return await self._read_body_bytes(req)
        except asyncio.LimitOverrunError:
            raise _BadRequest("chunk size line too long") from None

    async def _read_body_bytes(self, req: SimRequest) -> bytes:
        if "chunked" in (req.header("transfer-encoding") or "").lower():
            chunks: list[bytes] = []
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise _BadRequest("bad chunk size") from None
                if size < 0:
                    raise _BadRequest("bad chunk size")
                if size == 0:
                    while (await self.reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers: ignored
                    return b"".join(chunks)
                chunks.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
        length = req.header("content-length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise _BadRequest("bad content-length") from None
        if n < 0:
            raise _BadRequest("bad content-length")
        return await self.reader.readexactly(n)

    async def _write_error(self, status: int, message: str) -> None:
        stream = error_stream("openai", status, message)
        head = _head(stream, None, close=True)
        self.writer.write(head + stream.body)
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.drain()

    async def _respond(self, req: SimRequest) -> bool:
        """Serve one request; True if the connection can serve another."""
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        received_ns = time.monotonic_ns()
        base = self.next_behavior()
        try:
            behavior = from_knobs(base, _knobs(req))
        except UsageError as e:
            behavior = Behavior()
            stream = error_stream("openai", 400, str(e))
        else:
            stream = route(req.method, req.path, req.body, behavior)
        if stream.status != 200:
            # Error answers are immediate and whole: pacing/faults apply to real streams only.
            behavior = Behavior(ttfb_s=behavior.ttfb_s, status=behavior.status)
        p = plan(stream.events, behavior)
        conn = (req.header("connection") or "").lower()
        close = conn == "close" or req.http_version == "HTTP/1.0"
        framed = stream.chunked  # streams: one chunk per write; single JSON bodies: content-length
        head = _head(stream, framed, close=close)
        writes: list[tuple[int, bytes]] = []
        finish = "client_gone"
        head_ns: int | None = None
        try:
            await _sleep_until(loop, t0 + p.head_at_s)
            self.writer.write(head)
            head_ns = time.monotonic_ns()
            await self.writer.drain()
            for w in p.writes:
                await _sleep_until(loop, t0 + w.at_s)
                self.writer.write(b"%x\r\n%s\r\n" % (len(w.data), w.data) if framed else w.data)
                writes.append((time.monotonic_ns(), w.data))
                await self.writer.drain()
            finish = p.finish
            if finish == "complete":
                if framed:
                    self.writer.write(b"0\r\n\r\n")
                    await self.writer.drain()
                return not close
            await self._flushed()
            if finish == "reset":
                self._reset()
            elif finish == "close":
                self.writer.close()
            else:  # hang: say nothing more; wait for the client (or cancellation) to end it
                while await self.reader.read(65536):
                    pass
            return False
        except (ConnectionError, OSError):
            finish = "client_gone"
            return False
        except asyncio.CancelledError:
            if finish != "hang":
                finish = "stopped"
            raise
        finally:
            self.on_served(Served(req, stream.name, stream.status, behavior, received_ns,
                                  head if head_ns is not None else b"", head_ns, tuple(writes),
                                  finish))  # fmt: skip

    async def _flushed(self) -> None:
        # abort() drops whatever is still buffered: wait until our bytes reached the kernel.
        transport = self.writer.transport
        for _ in range(500):
            if transport.get_write_buffer_size() == 0:
                break
            await asyncio.sleep(0.002)

    def _reset(self) -> None:
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


async def _sleep_until(loop: asyncio.AbstractEventLoop, when: float) -> None:
    delay = when - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)


def _head(stream: Stream, framed: bool | None, *, close: bool) -> bytes:
    try:
        reason = HTTPStatus(stream.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {stream.status} {reason}".encode()]
    lines += [k + b": " + v for k, v in stream.headers]
    lines.append(b"date: " + formatdate(usegmt=True).encode())
    if framed:
        lines.append(b"transfer-encoding: chunked")
    else:
        lines.append(b"content-length: %d" % len(stream.body))
    lines.append(b"connection: close" if close else b"connection: keep-alive")
    return b"\r\n".join(lines) + b"\r\n\r\n"
