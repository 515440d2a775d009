"""The floor: a plain asyncio HTTP/1.1 server that writes a cassette's schedules directly.

It is what any competent hand-written replay server would do, with no replayproxy code on the
serving path: read the request, look the stream up by its ``?bench=NAME`` query, then
``sleep until t0 + offset; write one chunk`` for each frame (absolute offsets, TCP_NODELAY,
one ``transport.write`` per chunk), then the chunked terminator. Keep-alive is supported.
Timing figures for replayproxy are judged against this floor measured in the same run; behind
plain ``mitmdump`` it is also the floor for the proxy path, and the upstream for recording.

With ``?rid=N`` in the request it logs the monotonic time (CLOCK_MONOTONIC, shared by all
processes) just before each chunk write; ``GET /__sendlog`` returns that log as JSON, so the
recording benchmark can compute per-chunk latency origin -> client.

Run: ``python benchmarks/_floor_server.py CASSETTE [--speed S] [--tls PEM]``; prints ``PORT <n>``
when ready. ``--tls``: serve HTTPS with the certificate and key in ``PEM`` (the floor for clients
that speak TLS through a forward proxy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import ssl
import sys
import time
from urllib.parse import parse_qs, urlsplit

from replayproxy import _store as store
from replayproxy._core.schedule.model import Schedule, from_interaction, scale

_DROP = {b"content-length", b"transfer-encoding", b"connection", b"keep-alive"}


def load_schedules(path: str, speed: float) -> dict[str, Schedule]:
    out: dict[str, Schedule] = {}
    for it in store.load(path).interactions:
        name = parse_qs(urlsplit(it.request.url).query).get("bench", [""])[0]
        out[name] = scale(from_interaction(it), speed)
    return out


class Floor:
    def __init__(self, schedules: dict[str, Schedule]) -> None:
        self.schedules = schedules
        self.sendlog: dict[str, list[int]] = {}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.split(b"\r\n")
                _method, target, _ = lines[0].split(b" ", 2)
                length = 0
                for line in lines[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
                if length:
                    await reader.readexactly(length)
                t0 = loop.time()
                url = urlsplit(target.decode("latin-1"))
                if url.path == "/__sendlog":
                    body = json.dumps(self.sendlog).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(body), body)
                    )
                    continue
                q = parse_qs(url.query)
                sched = self.schedules.get(q.get("bench", [""])[0])
                if sched is None or sched.head is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                rid = q.get("rid", [None])[0]
                log = self.sendlog.setdefault(rid, []) if rid is not None else None
                await _until(loop, t0 + sched.head.at_ns / 1e9)
                out = [b"HTTP/1.1 %d %s\r\n" % (sched.head.status, sched.head.reason.encode())]
                out += [
                    k + b": " + v + b"\r\n" for k, v in sched.head.headers if k.lower() not in _DROP
                ]
                out.append(b"transfer-encoding: chunked\r\n\r\n")
                writer.write(b"".join(out))
                for w in sched.writes:
                    await _until(loop, t0 + w.at_ns / 1e9)
                    if log is not None:
                        log.append(time.monotonic_ns())
                    writer.write(b"%x\r\n%s\r\n" % (len(w.data), w.data))
                    await writer.drain()
                await _until(loop, t0 + sched.finish.at_ns / 1e9)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except ConnectionError:
            return
        finally:
            writer.close()


async def _until(loop: asyncio.AbstractEventLoop, deadline: float) -> None:
    delay = deadline - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cassette")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--tls", default=None, help="serve HTTPS: certificate and key (PEM)")
    args = ap.parse_args()
    floor = Floor(load_schedules(args.cassette, args.speed))
    context = None
    if args.tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls)
    server = await asyncio.start_server(floor.handle, "127.0.0.1", 0, backlog=1024, ssl=context)
    print("PORT", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
