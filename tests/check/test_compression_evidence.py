"""The client behaviour behind the grades of ``http.compressed-stream`` (a warning) and
``http.content-encoding`` (an error), shown with httpx's own content decoders and the
openai SDK's SSE decoder on top of them.

A compressed event stream does not break a client: httpx decodes gzip, deflate and br chunk
by chunk, so when the sender flushes after each event the client has the first event after
the first chunk. The harm is at the sender: a compressor that is not flushed holds every event
until the end, and no client can undo that (hence ``stream.buffered``, an error under an
``incremental`` contract). Bytes that do not decode make httpx raise ``DecodingError``.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.check.contract_cases import sse_events
from tests.check.recording_cases import compress_whole, header, streamed_frames

CODINGS = ["gzip", "deflate", "deflate-raw", "br"]  # the codings httpx decodes itself


class _Pulled:
    """The chunks of a response body, counting how many the client has pulled."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.pulled = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.pulled += 1
            yield chunk


def _response(coding: str, body: _Pulled) -> httpx.Response:
    headers = {"content-type": "text/event-stream", "content-encoding": header(coding)}
    return httpx.Response(200, headers=headers, content=body)


@pytest.mark.parametrize("coding", CODINGS)
def test_httpx_decodes_a_flushed_compressed_stream_event_by_event(coding: str) -> None:
    """Flushed after every event: the first event's lines come out of httpx after one chunk
    of seven, and the openai SDK's SSE decoder reads all seven events from the decoded
    bytes."""
    events = sse_events()
    body = _Pulled(streamed_frames(coding, events)[0])
    lines = _response(coding, body).iter_lines()
    assert next(lines) == "event: started"
    assert body.pulled == 1 and len(body.chunks) == len(events)
    decoder = pytest.importorskip("openai._streaming").SSEDecoder
    body = _Pulled(streamed_frames(coding, events)[0])
    sdk = list(decoder().iter_bytes(_response(coding, body).iter_bytes()))
    assert [e.event for e in sdk] == [e.split(b"\n")[0][7:].decode() for e in events]


@pytest.mark.parametrize("coding", CODINGS)
def test_a_compressor_that_is_not_flushed_holds_every_event_to_the_end(coding: str) -> None:
    """The same events through a compressor flushed only at the end (buffering middleware):
    httpx has no event until it has pulled the last chunk; decoding cannot undo buffering."""
    body = _Pulled(compress_whole(coding, sse_events()))
    lines = _response(coding, body).iter_lines()
    assert next(lines) == "event: started"
    assert body.pulled == len(body.chunks)


def test_bytes_that_do_not_decode_make_httpx_raise() -> None:
    """http.content-encoding: corrupt gzip data raises httpx.DecodingError mid-stream."""
    chunks = streamed_frames("gzip", sse_events())[0]
    chunks[3] = chunks[3][:2] + b"\xff\xff\xff\xff" + chunks[3][6:]
    with pytest.raises(httpx.DecodingError):
        list(_response("gzip", _Pulled(chunks)).iter_lines())
