"""Client helpers for the replay tests: what a client receives, and when.

Cassettes are built with :mod:`replayproxy.testing._builders`.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import time
from collections.abc import Sequence

import httpx


def gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def frames_per_read(reads: Sequence[bytes], frames: Sequence[bytes]) -> list[int]:
    """How many of ``frames`` each read holds, asserting that every read is whole consecutive
    frames (a frame is never split across reads) and that the reads are all of them, in order.

    On an idle machine each read is one frame (they are written apart); on a loaded one the
    client may wake after two writes have arrived and read them together: TCP joins them, the
    replay did not. The frames-per-read claim that holds either way is "never split"."""
    counts: list[int] = []
    i = 0
    for data in reads:
        n, got = 0, b""
        while len(got) < len(data) and i + n < len(frames):
            got += frames[i + n]
            n += 1
        assert got == data, f"read {len(counts)} is not whole frames: {data[:80]!r}"
        counts.append(n)
        i += n
    assert i == len(frames), f"{len(frames) - i} frames never arrived"
    return counts


def raw_reads(
    port: int, request: bytes, *, timeout: float = 5.0
) -> tuple[bytes, list[tuple[float, bytes]]]:
    """Send ``request`` on a raw socket; return the head and each ``recv`` (time, bytes) after it.

    The body reads are what a client's socket sees: one read per arrival.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            assert data, "closed before the head"
            buf += data
        head, rest = buf.split(b"\r\n\r\n", 1)
        reads = [(time.monotonic(), rest)] if rest else []
        while True:
            data = sock.recv(65536)
            if not data:
                return head, reads
            reads.append((time.monotonic(), data))
            if data.endswith(b"0\r\n\r\n"):
                return head, reads


def stream_raw(
    client: httpx.Client, url: str, body: bytes, into: list[bytes] | None = None
) -> list[bytes]:
    """POST ``body`` and collect ``iter_raw`` chunks (also into ``into``, kept on errors)."""
    got = [] if into is None else into
    with client.stream("POST", url, content=body) as r:
        r.raise_for_status()
        got.extend(r.iter_raw())
    return got


def ws_client_tls(ca_cert: object) -> ssl.SSLContext:
    """A client TLS context for the ``websockets`` sync client in forward mode, capped at
    TLS 1.2.

    Why: that client reads the socket on a background thread while its main thread writes the
    upgrade request; when a TLS 1.3 session ticket arrives at that moment, the request is
    sometimes never written (about 1 open in 100 on a loaded machine; seen with ``ss``: only the
    handshake left the socket; python-websockets/websockets#1387). TLS 1.2 sends no ticket
    after the handshake: 0 failures in 600 opens under the same load. A client bug, not
    replayproxy's: see docs/guides/websocket.md.
    """
    ctx = ssl.create_default_context(cafile=str(ca_cert))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    return ctx
