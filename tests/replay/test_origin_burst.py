"""The replay origin under a burst: 200 clients connecting and streaming at once.

Issue 11's benchmarks time 200 concurrent streams; these tests check what must hold for them
whatever the timing: every connection of a burst completes its handshake without waiting for
the origin (listen backlog), and every one of 200 concurrent requests is answered with its own
recorded stream, frame by frame.
"""

from __future__ import annotations

import asyncio
import errno
import selectors
import socket
import time

from replayproxy._core.matching.differences import MatchOptions
from replayproxy._engine.origin import Origin
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy.testing import CHAT_URL, cassette, interaction, sse_frames

BURST = 200
VARIANTS = 4


def _handshakes_done(port: int, n: int, window: float) -> int:
    """Open ``n`` non-blocking connections at once; how many complete within ``window`` s.

    Synchronous on purpose: called on the origin's own loop, it keeps that loop from accepting,
    so only the kernel's accept queue (the listen backlog) can complete the handshakes. A SYN
    past the queue is dropped and retried only after the initial RTO (1 s on Linux).
    """
    sel = selectors.DefaultSelector()
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            code = s.connect_ex(("127.0.0.1", port))
            assert code in (0, errno.EINPROGRESS), errno.errorcode.get(code, code)
            socks.append(s)
            sel.register(s, selectors.EVENT_WRITE)
        done = 0
        deadline = time.monotonic() + window
        while done < n and (left := deadline - time.monotonic()) > 0:
            for key, _ in sel.select(left):
                sel.unregister(key.fileobj)
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    done += 1
        return done
    finally:
        sel.close()
        for s in socks:
            s.close()


def test_a_burst_of_connections_completes_while_the_origin_is_busy() -> None:
    """200 clients connecting while the origin's loop is busy all complete their handshake at
    once: the listen backlog holds them (asyncio's default of 100 made the rest wait ~1 s)."""

    async def main() -> int:
        origin = Origin(ReplaySession(cassette(interaction(sse_frames(2)))))
        await origin.start()
        try:
            return _handshakes_done(origin.port, BURST, window=0.5)
        finally:
            await origin.close()

    assert asyncio.run(main()) == BURST


async def _read_chunks(reader: asyncio.StreamReader) -> tuple[bytes, list[bytes]]:
    """The head and each HTTP/1.1 chunk of one response (the terminator ends it)."""
    head = await reader.readuntil(b"\r\n\r\n")
    chunks = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        data = await reader.readexactly(size + 2)
        if size == 0:
            return head, chunks
        chunks.append(data[:-2])


def test_two_hundred_concurrent_streams_each_get_their_own_recording() -> None:
    """200 concurrent requests for 4 different recordings (told apart by the request body) are
    each answered 200 with exactly their recording's frames, one chunk per frame, and the
    summary counts all 200 as served."""
    bodies = [b'{"model":"m","stream":true,"n":%d}' % k for k in range(VARIANTS)]
    frames = [[b"data: %d.%d\n\n" % (k, i) for i in range(6)] for k in range(VARIANTS)]
    recorded = cassette(
        *(interaction(frames[k], gap_ms=20, head_ms=30, body=bodies[k]) for k in range(VARIANTS))
    )
    path = CHAT_URL.partition(".invalid")[2]

    async def one(port: int, k: int) -> tuple[bytes, list[bytes]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            body = bodies[k % VARIANTS]
            writer.write(
                b"POST %s HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (path.encode(), len(body), body)
            )
            return await _read_chunks(reader)
        finally:
            writer.close()

    async def burst(port: int) -> list[tuple[bytes, list[bytes]]]:
        return await asyncio.wait_for(
            asyncio.gather(*(one(port, k) for k in range(BURST))), timeout=60
        )

    with ReplayServer(recorded, options=MatchOptions(allow_repeats=True)) as server:
        got = asyncio.run(burst(server.port))
        summary = server.summary()
    for k, (head, chunks) in enumerate(got):
        assert head.startswith(b"HTTP/1.1 200 "), (k, head[:60])
        assert chunks == frames[k % VARIANTS], k
    assert (summary.served, summary.unmatched, summary.errors) == (BURST, 0, 0)
