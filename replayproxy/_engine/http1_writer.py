"""A schedule in wire form: HTTP/1.1 head and chunks, as ``(at_ns, bytes)`` socket writes.

Pieces due at the same instant (everything at ``--speed 0``) are joined into one write: each
body write still is its own HTTP/1.1 chunk, so the chunk boundaries (what mitmproxy forwards
one by one, and what a client de-chunks) stay as recorded, while the origin saves a syscall
and an event-loop round per chunk. Pieces due at different instants are never joined.

Memory is bounded per connection: a joined write holds at most :data:`JOIN_MAX` bytes, a
longer chunk is sent as its size line, slices of at most ``JOIN_MAX`` bytes (views of the
recorded frame, not copies) and its CRLF, all due at the chunk's instant. Small schedules
(at most :data:`CACHE_ITEM` body bytes) are framed once and cached by their origin
(:class:`WritesCache`), bounded in total by :data:`CACHE_BYTES`; bigger ones are framed lazily,
write by write, as the transport drains.
Before, ``--speed 0`` joined a whole 50 MB body into one write per client.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from replayproxy._core.cassette.model import Header
from replayproxy._core.schedule.model import FinishKind, Schedule

__all__ = [
    "CACHE_BYTES",
    "CACHE_ITEM",
    "JOIN_MAX",
    "Compiled",
    "Whole",
    "WritesCache",
    "compile_schedule",
    "has_body",
    "head_bytes",
    "plain_response",
    "plain_whole",
    "send_plain",
    "steps",
    "wire_headers",
]

JOIN_MAX = 64 * 1024
"""The largest socket write the origin makes (bytes)."""

CACHE_ITEM = 1 * 2**20
"""Schedules with more body bytes than this are framed lazily, never cached."""

CACHE_BYTES = 32 * 2**20
"""Total framed bytes one :class:`WritesCache` keeps (one per origin)."""

# Framing is ours to choose (always chunked); connection management is per hop.
_DROPPED = {b"content-length", b"transfer-encoding", b"connection", b"keep-alive"}


def wire_headers(headers: Sequence[Header], *, chunked: bool = True) -> list[Header]:
    """Recorded headers as sent on replay: framing headers replaced by ``chunked`` framing."""
    out = [(k, v) for k, v in headers if k.lower() not in _DROPPED]
    if chunked:
        out.append((b"transfer-encoding", b"chunked"))
    return out


def has_body(method: str, status: int) -> bool:
    return method != "HEAD" and status >= 200 and status not in (204, 304)


def head_bytes(status: int, reason: str, headers: Sequence[Header]) -> bytes:
    if not reason:
        with contextlib.suppress(ValueError):
            reason = http.HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {reason}".encode("latin-1")]
    lines += [k + b": " + v for k, v in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


Whole = tuple[int, tuple[Header, ...], bytes]
"""A response sent whole (status, headers with its content-length, body): the explained 500s,
the origin's own refusals."""


def plain_whole(status: int, body: bytes) -> Whole:
    """A whole ``text/plain`` response: status, headers and ``body``."""
    return status, ((b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))), body


def plain_response(status: int, body: bytes, *, close: bool = False) -> bytes:
    """:func:`plain_whole` as HTTP/1.1 bytes (``close``: with ``connection: close``)."""
    status, headers, body = plain_whole(status, body)
    if close:
        headers = (*headers, (b"connection", b"close"))
    return head_bytes(status, "", headers) + body


def _pieces(schedule: Schedule, method: str) -> Iterator[tuple[int, bytes | memoryview]]:
    head = schedule.head
    if head is None:
        return
    body = has_body(method, head.status)
    yield head.at_ns, head_bytes(head.status, head.reason, wire_headers(head.headers, chunked=body))
    if not body:
        return
    for w in schedule.writes:
        n = len(w.data)
        if not n:  # an empty chunk would be the terminator
            continue
        if n <= JOIN_MAX:
            yield w.at_ns, b"%x\r\n%s\r\n" % (n, w.data)
            continue
        yield w.at_ns, b"%x\r\n" % n
        view = memoryview(w.data)
        for i in range(0, n, JOIN_MAX):
            yield w.at_ns, view[i : i + JOIN_MAX]
        yield w.at_ns, b"\r\n"
    if schedule.finish.kind is FinishKind.COMPLETE:
        yield schedule.finish.at_ns, b"0\r\n\r\n"


def steps(schedule: Schedule, method: str) -> Iterator[tuple[int, bytes]]:
    """The socket writes for ``schedule``, lazily: pieces due at one instant joined up to
    :data:`JOIN_MAX` bytes."""
    parts: list[bytes | memoryview] = []
    size = 0
    at = 0
    for t, data in _pieces(schedule, method):
        if parts and (t != at or size + len(data) > JOIN_MAX):
            yield at, b"".join(parts)
            parts, size = [], 0
        at = t
        parts.append(data)
        size += len(data)
    if parts:
        yield at, b"".join(parts)


@dataclass(frozen=True, slots=True)
class Compiled:
    """The socket writes of a small schedule, framed once."""

    steps: tuple[tuple[int, bytes], ...]

    @property
    def size(self) -> int:
        return sum(len(d) for _, d in self.steps)


def compile_schedule(schedule: Schedule, method: str) -> Compiled:
    return Compiled(tuple(steps(schedule, method)))


class _Same:
    """A cache key that is one schedule *object* and a method.

    Equal only to a key for the very same object: its value would do too, but hashing a
    schedule's value costs about a microsecond per write, on every request. The key holds the
    schedule, so while it is in a cache the object cannot be freed and no other schedule can
    ever come to match it (an ``id()`` could, once its object is garbage collected).
    """

    __slots__ = ("_hash", "method", "schedule")

    def __init__(self, schedule: Schedule, method: str) -> None:
        self.schedule = schedule
        self.method = method
        self._hash = hash((object.__hash__(schedule), method))  # identity, not value

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Same)
            and other.schedule is self.schedule
            and other.method == self.method
        )


class WritesCache:
    """The socket writes of small schedules, framed once; one per owner (each
    :class:`~replayproxy._engine.origin.Origin` has its own, gone with it).

    Fault-free schedules are planned once per interaction and reused (see faults.plan), so the
    same Schedule object comes back request after request: it is framed once. Schedules with
    more than ``max_item`` body bytes are framed lazily and never kept; the rest are kept up
    to ``max_bytes`` framed bytes in all, oldest out first. Not thread-safe: an origin uses
    it from its own event loop only.
    """

    def __init__(self, *, max_bytes: int = CACHE_BYTES, max_item: int = CACHE_ITEM) -> None:
        self.max_bytes = max_bytes
        self.max_item = max_item
        self.size = 0
        """The framed bytes kept now (at most ``max_bytes``)."""
        self._entries: dict[_Same, Compiled] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def writes_for(self, schedule: Schedule, method: str) -> Iterable[tuple[int, bytes]]:
        """The socket writes for ``schedule``: cached when small, else framed lazily."""
        key = _Same(schedule, method)
        hit = self._entries.get(key)
        if hit is not None:  # only small schedules are ever kept
            return hit.steps
        if sum(len(w.data) for w in schedule.writes) > self.max_item:
            return steps(schedule, method)
        out = compile_schedule(schedule, method)
        self._entries[key] = out
        self.size += out.size
        while self.size > self.max_bytes and self._entries:
            old = self._entries.pop(next(iter(self._entries)))  # oldest first
            self.size -= old.size
        return out.steps


async def send_plain(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
    """Send a whole response before closing the connection (the peer may be gone already)."""
    with contextlib.suppress(ConnectionError):
        writer.write(plain_response(status, body, close=True))
        await writer.drain()
