"""Reading HTTP/1.1 requests off an asyncio stream: the replay origin's side of the wire.

:func:`read_request` reads one request, head and whole body (``content-length`` or chunked,
trailers skipped), answers ``Expect: 100-continue``, and raises :class:`BadRequest` with a
short reason the origin sends back in its 400. :class:`StampedReader` remembers when bytes
last arrived, so the origin can start a schedule's clock at the read that completed the
request rather than when its handler woke up. Its peers are loopback clients and mitmproxy,
so it stays minimal: HTTP/1.1 only, one limit on the head's size (:data:`MAX_HEAD`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import SupportsIndex

from replayproxy.core.cassette.model import Request

__all__ = ["MAX_HEAD", "BadRequest", "StampedReader", "read_request"]

MAX_HEAD = 256 * 1024
"""The largest request head the origin reads (the stream's limit); a bigger one is a 400."""


class BadRequest(Exception):
    """The peer sent something that is not an HTTP/1.1 request we can read."""


class StampedReader(asyncio.StreamReader):
    """A StreamReader that remembers when bytes last arrived (event-loop time of the read).

    ``feed_data`` runs in the protocol's ``data_received``, i.e. as soon as the loop has read the
    socket; the handler coroutine waiting on the data resumes only later (on a busy loop, after
    every other ready callback), so this stamp is the closer measure of "the request arrived".
    """

    received_at = 0.0

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.received_at = asyncio.get_running_loop().time()
        super().feed_data(data)


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """Read one request (head and whole body); ``None`` when the peer closed between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        raise BadRequest("connection closed inside a request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest(f"request head larger than {MAX_HEAD // 1024} KiB") from None
    request_line, *header_lines = head[:-4].split(b"\r\n")
    try:
        method, target, version = request_line.decode("latin-1").split(" ", 2)
    except ValueError:
        raise BadRequest(f"malformed request line {request_line[:80]!r}") from None
    headers: list[tuple[bytes, bytes]] = []
    for line in header_lines:
        name, colon, value = line.partition(b":")
        if not colon or not name.strip():
            raise BadRequest(f"malformed header line {line[:80]!r}")
        headers.append((name.strip(), value.strip()))
    fields = {k.lower(): v for k, v in headers}
    if fields.get(b"expect", b"").lower() == b"100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    try:
        if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(fields.get(b"content-length", b"0")))
    except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        raise BadRequest("malformed or truncated request body") from None
    host = fields.get(b"host", b"127.0.0.1").decode("latin-1")
    url = target if "://" in target else f"http://{host}{target}"
    return Request(method, url, version, tuple(headers), body)


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
