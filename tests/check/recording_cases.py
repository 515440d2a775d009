"""Endpoint recordings for the rules that need more than the body bytes: the response's
``Content-Encoding``, the frames' arrival times, the stored record, the upstream's end.

Built with ``replayproxy.testing`` builders from the example application stream in
docs/examples (``chat-turn.sse``, seven events): compressed the way middleware compresses
(one compressor over the whole response: buffered; or flushed after every event: streamed),
at the offsets a real endpoint would send them. ``RECORDING_CASES`` maps each such rule to a
check that reports it; ``tests/core/check/test_rules.py`` counts them as the rule's case.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import brotli

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.check import Contract, Violation
from replayproxy.checking import check_interaction
from replayproxy.testing import _builders as builders
from tests.check.contract_cases import contract, sse_events

__all__ = [
    "APP_URL",
    "CODINGS",
    "RECORDING_CASES",
    "app_contract",
    "buffered_frames",
    "compress_whole",
    "header",
    "recording",
    "streamed_frames",
]

APP_URL = "http://app.invalid/api/chat"
TURN = {"turn_id": "t_8f2c41", "message_id": "m_0193"}  # the example stream's committed event


def app_contract(**changes: Any) -> Contract:
    """The example chat-turn contract, with ``changes`` (``incremental=True`` ...)."""
    return dataclasses.replace(contract(), **changes)


class _Zstd:
    def __init__(self) -> None:
        import zstandard

        self._obj = zstandard.ZstdCompressor().compressobj()
        self._flush_block = zstandard.COMPRESSOBJ_FLUSH_BLOCK

    def compress(self, data: bytes) -> bytes:
        return self._obj.compress(data)

    def flush(self, mode: int | None = None) -> bytes:
        return self._obj.flush() if mode is None else self._obj.flush(self._flush_block)


class _Brotli:
    def __init__(self) -> None:
        self._obj = brotli.Compressor()

    def compress(self, data: bytes) -> bytes:
        return bytes(self._obj.process(data))

    def flush(self, mode: int | None = None) -> bytes:
        return bytes(self._obj.finish() if mode is None else self._obj.flush())


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self._obj = zlib.compressobj(wbits=wbits)

    def compress(self, data: bytes) -> bytes:
        return self._obj.compress(data)

    def flush(self, mode: int | None = None) -> bytes:
        return self._obj.flush() if mode is None else self._obj.flush(zlib.Z_SYNC_FLUSH)


def _zstd_installed() -> bool:
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


CODINGS: dict[str, Callable[[], Any]] = {
    "gzip": lambda: _Zlib(31),
    "deflate": lambda: _Zlib(15),  # the zlib format RFC 9110 names
    "deflate-raw": lambda: _Zlib(-15),  # what some servers send as "deflate"
    "br": _Brotli,
}
if _zstd_installed():
    CODINGS["zstd"] = _Zstd


def header(coding: str) -> str:
    """The Content-Encoding value of a coding of :data:`CODINGS`."""
    return "deflate" if coding == "deflate-raw" else coding


def compress_whole(coding: str, events: Sequence[bytes]) -> list[bytes]:
    """What buffering middleware writes: one compressor fed every event, flushed only at the
    end; the non-empty outputs (gzip's 10-byte header first, the rest at the end)."""
    c = CODINGS[coding]()
    out = [c.compress(e) for e in events] + [c.flush()]
    return [o for o in out if o]


def buffered_frames(coding: str | None, events: Sequence[bytes]) -> tuple[list[bytes], list[float]]:
    """The buffering endpoint's frames and arrival offsets (ms): what the compressor emits at
    once arrives at 11 ms, the rest 2190 ms after the request (the issue's measured case)."""
    if coding is None:
        return [b"".join(events)], [2190.0]
    chunks = compress_whole(coding, events)
    if len(chunks) == 1:
        return chunks, [2190.0]
    return [chunks[0], b"".join(chunks[1:])], [11.0, 2190.0]


def streamed_frames(coding: str | None, events: Sequence[bytes]) -> tuple[list[bytes], list[float]]:
    """A streaming endpoint: one frame per event, flushed, 30 ms apart after 300 ms."""
    if coding is None:
        chunks = list(events)
    else:
        c = CODINGS[coding]()
        chunks = [c.compress(e) + c.flush(zlib.Z_SYNC_FLUSH) for e in events]
        chunks[-1] += c.flush()
    return chunks, [300.0 + 30 * i for i in range(len(chunks))]


def recording(
    frames_at: tuple[list[bytes], list[float]],
    coding: str | None = None,
    *,
    content_type: bytes = b"text/event-stream",
    method: str = "POST",
    url: str = APP_URL,
) -> Interaction:
    """A recorded response of the app's endpoint: these frames at these offsets, with the
    Content-Encoding header when ``coding`` is given."""
    chunks, at = frames_at
    headers = [(b"content-type", content_type), (b"cache-control", b"no-cache")]
    if coding is not None:
        headers.append((b"content-encoding", header(coding).encode()))
    return builders.interaction(
        chunks,
        request=builders.request(method, url, body=b'{"message":"hi"}'),
        headers=tuple(headers),
        head_ms=5,  # the head goes out before the body, as Starlette sends it
        at_ms=at,
    )


def _violations(interaction: Interaction, c: Contract, **kwargs: Any) -> list[Violation]:
    report = check_interaction(interaction, contract=c, **kwargs)
    assert report.skipped is None, report.skipped
    return list(report.violations)


def _corrupt_gzip() -> list[Violation]:
    chunks, at = streamed_frames("gzip", sse_events())
    chunks[3] = chunks[3][:2] + b"\xff\xff\xff\xff" + chunks[3][6:]
    return _violations(recording((chunks, at), "gzip"), app_contract())


def _committed_after_incomplete() -> list[Violation]:
    c = app_contract(after_incomplete=frozenset({"rejected"}))
    return _violations(recording(streamed_frames(None, sse_events())), c, upstream_incomplete=True)


RECORDING_CASES: dict[str, tuple[set[str], Callable[[], list[Violation]]]] = {
    "http.compressed-stream": (
        {"http.compressed-stream"},
        lambda: _violations(recording(streamed_frames("gzip", sse_events()), "gzip"), contract()),
    ),
    "http.content-encoding": ({"http.compressed-stream", "http.content-encoding"}, _corrupt_gzip),
    "stream.buffered": (
        {"stream.buffered"},
        lambda: _violations(
            recording(buffered_frames(None, sse_events())), app_contract(incremental=True)
        ),
    ),
    "contract.record": (
        {"contract.record"},
        lambda: _violations(
            recording(streamed_frames(None, sse_events())),
            app_contract(record=(("committed", (("/message_id", "/message_id"),)),)),
            record={**TURN, "message_id": "m_0194"},
        ),
    ),
    "contract.upstream": ({"contract.upstream"}, _committed_after_incomplete),
}
"""rule -> (the exact rules the recording breaks, the check that reports them)."""
