"""The replay origin's first-bytes dispatch: HTTP/1.1 as before, h2c served, TLS refused.

The origin listens on plain TCP. Before reading a request it looks at the connection's first
bytes (:func:`~replayproxy._core.wire.preface.classify`): the HTTP/2 preface is served as h2c
(:mod:`~replayproxy._engine.http2.connection`); a TLS ClientHello, which a plain listener cannot
answer, gets one log line saying so, then the HTTP/1.1 reader's 400 and the connection closed at
once (the client fails immediately instead of waiting for a ServerHello that never comes);
anything else is read as HTTP/1.1.

:func:`sniff` reads what the client has sent so far and gives it back to the same reader, so
the HTTP/1.1 reader (and ``h2``, which wants the preface too) reads the connection from its
first byte. It uses only the public ``StreamReader`` API: one ``read`` that takes everything
buffered, then ``feed_data`` of the same bytes into the now empty buffer.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from replayproxy._core.wire.preface import Preface, classify
from replayproxy._engine.http1_reader import MAX_HEAD, StampedReader
from replayproxy._engine.http2.connection import serve_h2

if TYPE_CHECKING:
    from replayproxy._engine.origin import Origin

__all__ = ["serve_unless_http1", "sniff"]

log = logging.getLogger(__name__)

_EVERYTHING = 1 << 40
"""A read size larger than any buffer: ``read(n)`` returns all that is buffered."""


async def sniff(reader: asyncio.StreamReader) -> tuple[Preface, asyncio.StreamReader]:
    """What the connection speaks, and a reader that still holds every byte read so far
    (``reader`` itself, unless the client has already ended its side of the connection)."""
    seen = b""
    kind = Preface.NEED_MORE
    if isinstance(reader, StampedReader):
        reader.reading("head")  # a client that stays silent here times out like in a head
    try:
        while kind is Preface.NEED_MORE:
            data = await reader.read(_EVERYTHING)
            if not data:  # the client left (or half-closed) before saying enough: HTTP/1.1
                kind = Preface.HTTP1
                break
            seen += data
            kind = classify(seen)
    finally:
        if isinstance(reader, StampedReader):
            reader.reading("")
    if not seen:
        return kind, reader
    stamped = reader.received_at if isinstance(reader, StampedReader) else None
    if reader.at_eof():
        # feed_data after feed_eof is refused: a fresh reader holds the bytes and the EOF.
        reader = StampedReader(limit=MAX_HEAD)
        reader.feed_data(seen)
        reader.feed_eof()
    else:
        reader.feed_data(seen)  # the buffer is empty: the bytes go back where they were
    if stamped is not None and isinstance(reader, StampedReader):
        reader.received_at = stamped  # they arrived then, not now
    return kind, reader


async def serve_unless_http1(
    origin: Origin,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    base: tuple[str, str] | None = None,
) -> asyncio.StreamReader | None:
    """Serve the connection as h2c and return ``None`` if it speaks HTTP/2; else return the
    reader for the HTTP/1.1 loop (holding the bytes looked at). A TLS ClientHello is logged
    here and left to that loop, whose first-byte check answers it with a 400 and closes."""
    kind, reader = await sniff(reader)
    if kind is Preface.HTTP1:
        return reader
    if kind is Preface.TLS:
        log.warning(
            "replayproxy: a TLS connection to the plain-HTTP listener %s was closed; use an "
            "http:// base URL (HTTP/1.1 or HTTP/2 with prior knowledge), or forward mode for "
            "https://",
            origin.url,
        )
        return reader  # the HTTP/1 reader answers its first byte with a 400 saying so, and closes
    await serve_h2(origin, reader, writer, base)
    return None
