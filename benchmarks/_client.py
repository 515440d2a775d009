"""Benchmark clients: raw asyncio sockets reading chunked HTTP/1.1 responses, one recv at a time.

A client must not blur what it measures, so this one is an ``asyncio.Protocol``: each
``data_received`` call is one ``recv()`` on the socket, timestamped (``time.monotonic_ns``,
CLOCK_MONOTONIC, comparable across processes) and de-chunked on the spot. For each read we
keep ``(t_ns, payload_bytes)``; from that the harness derives when each recorded frame
arrived and whether the read held exactly one recorded frame (split fidelity).

Entry points are plain functions taking and returning picklable values, run in worker
processes (``multiprocessing``) so the client side is never the bottleneck:
:func:`run_streams` (timed streams) and :func:`run_throughput` (back-to-back requests).
"""

from __future__ import annotations

import asyncio
import gc
import socket
import time
from dataclasses import dataclass, field

__all__ = ["ResponseParser", "StreamResult", "ThroughputResult", "run_streams", "run_throughput"]

HEAD, SIZE, DATA, DATA_CRLF, TRAILER, CL_BODY, CLOSE_BODY, DONE = range(8)


class ResponseParser:
    """Incremental HTTP/1.1 response parser; :meth:`feed` returns the payload bytes consumed."""

    def __init__(self, keep: bool = False) -> None:
        self.buf = bytearray()
        self.body: bytearray | None = bytearray() if keep else None  # payload, if kept
        self.state = HEAD
        self.chunks = 0  # HTTP/1.1 chunks of the body (0 for a content-length body)
        self.status = 0
        self.remaining = 0
        self.keep_alive = True

    def _head(self, raw: bytes) -> None:
        lines = raw.split(b"\r\n")
        self.status = int(lines[0].split(b" ", 2)[1])
        chunked, length = False, None
        for line in lines[1:]:
            k, _, v = line.partition(b":")
            k, v = k.strip().lower(), v.strip().lower()
            if k == b"transfer-encoding" and b"chunked" in v:
                chunked = True
            elif k == b"content-length":
                length = int(v)
            elif k == b"connection" and v == b"close":
                self.keep_alive = False
        if chunked:
            self.state = SIZE
        elif length is not None:
            self.remaining = length
            self.state = CL_BODY if length else DONE
        else:
            self.keep_alive = False
            self.state = CLOSE_BODY

    def feed(self, data: bytes) -> int:
        buf = self.buf
        buf += data
        n = 0
        while True:
            st = self.state
            if st == HEAD:
                i = buf.find(b"\r\n\r\n")
                if i < 0:
                    break
                self._head(bytes(buf[:i]))
                del buf[: i + 4]
            elif st == SIZE:
                i = buf.find(b"\r\n")
                if i < 0:
                    break
                size = int(bytes(buf[:i]).split(b";")[0], 16)
                del buf[: i + 2]
                if size:
                    self.chunks += 1
                    self.remaining, self.state = size, DATA
                else:
                    self.state = TRAILER
            elif st in (DATA, CL_BODY):
                if not buf:
                    break
                take = min(self.remaining, len(buf))
                n += take
                if self.body is not None:
                    self.body += buf[:take]
                del buf[:take]
                self.remaining -= take
                if not self.remaining:
                    self.state = DATA_CRLF if st == DATA else DONE
            elif st == DATA_CRLF:
                if len(buf) < 2:
                    break
                del buf[:2]
                self.state = SIZE
            elif st == TRAILER:
                i = buf.find(b"\r\n")
                if i < 0:
                    break
                line = bytes(buf[:i])
                del buf[: i + 2]
                if not line:
                    self.state = DONE
            elif st == CLOSE_BODY:
                n += len(buf)
                if self.body is not None:
                    self.body += buf
                buf.clear()
                break
            else:
                break
        return n


@dataclass
class StreamResult:
    """What one client saw of one response."""

    name: str
    rid: int | None
    status: int = 0
    t_send: int = 0
    t_head: int = 0
    reads: list[tuple[int, int]] = field(default_factory=list)  # (t_ns, payload bytes), >0 only
    error: str = ""
    body: bytes = b""  # the payload, when asked for (peer comparison: events, not frames)


@dataclass
class ThroughputResult:
    responses: int
    body_bytes: int
    errors: int
    t_start: int
    t_end: int
    first_error: str = ""
    rechunked: int = 0  # responses whose chunk count differs from the recorded frame count


class _Conn(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, record: bool, keep: bool = False) -> None:
        self.loop = loop
        self.record = record
        self.keep = keep
        self.transport: asyncio.Transport | None = None
        self.parser = ResponseParser()
        self.waiter: asyncio.Future[None] | None = None
        self.result = StreamResult("", None)
        self.payload = 0
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def start(self, request: bytes, result: StreamResult) -> asyncio.Future[None]:
        assert self.transport is not None
        self.parser = ResponseParser(self.keep)
        self.result = result
        self.payload = 0
        self.waiter = self.loop.create_future()
        result.t_send = time.monotonic_ns()
        self.transport.write(request)
        return self.waiter

    def data_received(self, data: bytes) -> None:
        t = time.monotonic_ns()
        p = self.parser
        had_head = p.state != HEAD
        n = p.feed(data)
        if not had_head and p.state != HEAD:
            self.result.t_head = t
            self.result.status = p.status
        if n:
            self.payload += n
            if self.record:
                self.result.reads.append((t, n))
        if p.state == DONE and self.waiter is not None and not self.waiter.done():
            if p.body is not None:
                self.result.body = bytes(p.body)
            self.waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        w = self.waiter
        if w is None or w.done():
            return
        if self.parser.state == CLOSE_BODY:
            self.parser.state = DONE
            w.set_result(None)
        else:
            w.set_exception(ConnectionError(f"connection lost ({exc or 'EOF'}) mid-response"))


async def _connect(host: str, port: int, record: bool, keep: bool = False) -> _Conn:
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(lambda: _Conn(loop, record, keep), host, port)
    return conn


async def _sleep_until(t_ns: int) -> None:
    delay = (t_ns - time.monotonic_ns()) / 1e9
    if delay > 0:
        await asyncio.sleep(delay)


async def _one_stream(
    host: str,
    port: int,
    job: tuple[str, int | None, bytes, int],
    timeout: float,
    keep: bool,
) -> StreamResult:
    name, rid, request, at_ns = job
    result = StreamResult(name, rid)
    await _sleep_until(at_ns)
    conn: _Conn | None = None
    try:
        conn = await asyncio.wait_for(_connect(host, port, True, keep), timeout)
        await asyncio.wait_for(conn.start(request, result), timeout)
        if result.status != 200:
            result.error = f"HTTP {result.status}"
    except (TimeoutError, OSError) as e:
        result.error = f"{type(e).__name__}: {e}"
    finally:
        if conn is not None and conn.transport is not None:
            conn.transport.close()
    return result


async def _streams(
    host: str,
    port: int,
    jobs: list[tuple[str, int | None, bytes, int]],
    timeout: float,
    keep: bool,
) -> list[StreamResult]:
    return list(await asyncio.gather(*(_one_stream(host, port, j, timeout, keep) for j in jobs)))


def run_streams(
    host: str,
    port: int,
    jobs: list[tuple[str, int | None, bytes, int]],
    timeout: float,
    keep: bool = False,
) -> list[StreamResult]:
    """Open one connection per job ``(name, rid, request, start_at_ns)``; read each response
    (``keep``: also keep its payload bytes).

    The cyclic collector is off while the streams run (after one collection up front): a
    collection here is a pause in the *client*, charged to whichever server is being timed.
    Measured: both client processes collected (12-16 ms each) in the middle of the engine's
    200-stream run, adding their pauses to its gaps; the sweep's order is fixed, so such a
    pause lands on the same path run after run.
    """
    gc.collect()
    gc.disable()
    try:
        return asyncio.run(_streams(host, port, jobs, timeout, keep))
    finally:
        gc.enable()


async def _throughput(
    host: str,
    port: int,
    requests: list[bytes],
    chunks: list[int],
    conns: int,
    start_ns: int,
    duration: float,
) -> ThroughputResult:
    await _sleep_until(start_ns)
    end_ns = start_ns + int(duration * 1e9)
    res = ThroughputResult(0, 0, 0, time.monotonic_ns(), 0)

    async def worker(k: int) -> None:
        conn: _Conn | None = None
        i = k
        while time.monotonic_ns() < end_ns:
            try:
                if conn is None or conn.closed:
                    conn = await asyncio.wait_for(_connect(host, port, False), 10)
                r = StreamResult("", None)
                await asyncio.wait_for(conn.start(requests[i % len(requests)], r), 30)
                if r.status != 200:
                    raise ConnectionError(f"HTTP {r.status}")
                res.responses += 1
                res.rechunked += conn.parser.chunks != chunks[i % len(chunks)]
                res.body_bytes += conn.payload
                if not conn.parser.keep_alive:
                    assert conn.transport is not None
                    conn.transport.close()
                    conn = None
            except (TimeoutError, OSError) as e:
                res.errors += 1
                res.first_error = res.first_error or f"{type(e).__name__}: {e}"
                if conn is not None and conn.transport is not None:
                    conn.transport.close()
                conn = None
                await asyncio.sleep(0.01)
            i += conns
        if conn is not None and conn.transport is not None:
            conn.transport.close()

    await asyncio.gather(*(worker(k) for k in range(conns)))
    res.t_end = time.monotonic_ns()
    return res


def run_throughput(
    host: str,
    port: int,
    requests: list[bytes],
    chunks: list[int],
    conns: int,
    start_ns: int,
    duration: float,
) -> ThroughputResult:
    """``conns`` keep-alive connections issuing requests back to back for ``duration`` s;
    ``chunks[i]``: the recorded frame count of ``requests[i]`` (responses re-chunked are
    counted)."""
    return asyncio.run(_throughput(host, port, requests, chunks, conns, start_ns, duration))
