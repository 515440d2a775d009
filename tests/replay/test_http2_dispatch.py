"""The origin's first-bytes dispatch (replayproxy._engine.http2.dispatch.sniff): what the client
speaks, decided over as many reads as it takes, with every byte looked at given back to the
reader (and when it arrived), also when the client has already half-closed."""

from __future__ import annotations

import asyncio

from replayproxy._core.wire.preface import H2_PREFACE, Preface
from replayproxy._engine.http1_reader import MAX_HEAD, StampedReader
from replayproxy._engine.http2.dispatch import sniff

GET = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"


def _sniff_pieces(pieces: list[bytes], *, eof: bool = False) -> tuple[Preface, bytes, bool, float]:
    """Feed ``pieces`` 10 ms apart (``eof``: the end with the last); the answer, the bytes left
    in the returned reader, whether it is the same reader, and its arrival stamp minus the
    first piece's."""

    async def main() -> tuple[Preface, bytes, bool, float]:
        reader = StampedReader(limit=MAX_HEAD)

        async def feed() -> None:
            for i, piece in enumerate(pieces):
                reader.feed_data(piece)
                if i < len(pieces) - 1:
                    await asyncio.sleep(0.01)
            if eof:  # with the last piece, before the dispatch reads it
                reader.feed_eof()

        feeding = asyncio.create_task(feed())
        await asyncio.sleep(0)
        first = reader.received_at
        kind, again = await sniff(reader)
        stamp = again.received_at if isinstance(again, StampedReader) else 0.0
        await feeding
        if not eof:
            reader.feed_eof()
        rest = await again.read()
        return kind, rest, again is reader, stamp - first

    return asyncio.run(main())


def test_an_http1_request_is_given_back_whole() -> None:
    """HTTP/1.1: decided at once; the reader still holds the whole request, stamped when it
    arrived (not when the dispatch gave it back)."""
    kind, rest, same, stamp = _sniff_pieces([GET])
    assert (kind, rest, same) == (Preface.HTTP1, GET, True)
    assert stamp == 0.0


def test_a_preface_in_pieces_is_decided_once_complete() -> None:
    """``PRI * HT`` then the rest: undecided after the first read, HTTP/2 after the second;
    the reader holds the preface and what followed it, in order."""
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    kind, rest, same, _ = _sniff_pieces([H2_PREFACE[:8], H2_PREFACE[8:] + settings])
    assert (kind, rest, same) == (Preface.H2, H2_PREFACE + settings, True)


def test_a_half_closed_client_gets_a_fresh_reader_with_its_bytes() -> None:
    """The client sent a request and ended its side before the dispatch read it: the reader
    returned holds the request and the end (the old one refuses more data after EOF)."""
    kind, rest, same, stamp = _sniff_pieces([GET], eof=True)
    assert (kind, rest, same) == (Preface.HTTP1, GET, False)
    assert stamp == 0.0


def test_a_client_that_leaves_undecided_is_http1() -> None:
    """``P`` and then EOF: HTTP/1.1 decides (its reader reports the truncated head)."""
    kind, rest, _, _ = _sniff_pieces([b"P"], eof=True)
    assert (kind, rest) == (Preface.HTTP1, b"P")


def test_no_bytes_at_all_is_http1_with_nothing_to_read() -> None:
    """A connection closed without a byte: HTTP/1.1, whose reader sees a clean end."""
    kind, rest, same, _ = _sniff_pieces([], eof=True)
    assert (kind, rest, same) == (Preface.HTTP1, b"", True)
