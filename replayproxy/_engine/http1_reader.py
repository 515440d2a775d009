"""Reading HTTP/1.1 requests off an asyncio stream: the replay origin's side of the wire.

:func:`read_request` reads one request, head and whole body (``content-length`` or chunked,
trailers skipped), answers ``Expect: 100-continue``, and raises :class:`BadRequest` with a
short reason and status the origin sends back (400, 408, 501). :class:`StampedReader`
remembers when bytes last arrived, so the origin can start a schedule's clock at the read that
completed the request rather than when its handler woke up, and times a request out
(:meth:`StampedReader.watch`): a head not complete within ``head_timeout`` seconds, a body
silent for ``body_timeout`` seconds (docs/explanations/reliability.md). Its peers are loopback
clients and mitmproxy, so it stays minimal: HTTP/1.1 only, one limit on the head's size
(:data:`MAX_HEAD`).

Framing is strict, because a peer and the origin that disagree on where a request ends
desynchronise (request smuggling, or a client waiting for an answer to a body the origin is
still reading): several ``Content-Length`` values that differ, ``Content-Length`` beside
``Transfer-Encoding``, or a value that is not digits are a 400; a transfer coding other than
``chunked`` (``xchunked``, ``gzip, chunked``) is a 501 (RFC 9112 §6.1).

Line endings: a bare LF ends a line as CRLF does (RFC 9112 §2.2 lets a recipient accept it;
h11 and mitmproxy do), so a head sent with ``\n`` only is read and answered at once instead of
waiting for a ``\r\n\r\n`` that never comes. A request whose first byte cannot start one
(a TLS ClientHello's ``0x16``, a NUL) is refused on that byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import SupportsIndex

from replayproxy._core.cassette.model import Request
from replayproxy._engine.clock import LOOP_CLOCK, Clock, Timer

__all__ = ["MAX_HEAD", "BadRequest", "StampedReader", "read_request"]

MAX_HEAD = 256 * 1024
"""The largest request head the origin reads (the stream's limit); a bigger one is a 400."""


class BadRequest(Exception):
    """The peer sent something that is not an HTTP/1.1 request we can read; ``status`` is what
    it is answered with (400, or 408 for a timeout, 501 for an unknown transfer coding)."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


class RequestTimeout(BadRequest):
    """The request head or body did not arrive in time. ``partial``: some bytes of the
    request had arrived (answered with a 408); otherwise the connection was idle between
    requests and is closed without a word, as HTTP/1.1 servers close idle connections."""

    def __init__(self, reason: str, *, partial: bool) -> None:
        super().__init__(reason, 408)
        self.partial = partial


class StampedReader(asyncio.StreamReader):
    """A StreamReader that remembers when bytes last arrived (event-loop time of the read) and
    can time out the request being read.

    ``feed_data`` runs in the protocol's ``data_received``, i.e. as soon as the loop has read the
    socket; the handler coroutine waiting on the data resumes only later (on a busy loop, after
    every other ready callback), so this stamp is the closer measure of "the request arrived".
    A timeout is delivered as the stream's exception (:meth:`set_exception`), which wakes the
    read waiting for it: one timer per connection, re-armed only when it fires and dropped
    between requests. Times are read from ``clock`` (the loop's unless the origin injects one).
    """

    clock: Clock = LOOP_CLOCK
    received_at = 0.0
    _limits: tuple[float, float] | None = None
    _phase = ""  # "head", "body" or "" (not reading a request: no timeout)
    _since = 0.0
    _timer: Timer | None = None
    _timer_due = 0.0

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.received_at = self.clock.time()
        super().feed_data(data)

    @property
    def has_partial_request(self) -> bool:
        """Some bytes of a request wait in the buffer (the origin has not read them yet)."""
        return bool(self._buffer)  # type: ignore[attr-defined]  # asyncio's own buffer

    def watch(self, head_timeout: float, body_timeout: float) -> None:
        """From now on, time out the request being read: its head must be complete within
        ``head_timeout`` seconds, its body may pause at most ``body_timeout`` seconds."""
        self._limits = (head_timeout, body_timeout)

    def reading(self, phase: str) -> None:
        """The origin now reads a request ``"head"``, its ``"body"``, or nothing (``""``)."""
        if self._limits is None:
            return
        now = self.clock.time()
        self._phase, self._since = phase, now
        if not phase:
            # Not reading: drop the timer, which holds this reader (and a big body's buffer)
            # alive until it fires, long after the connection is gone.
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        delay = self._limits[0] if phase == "head" else self._limits[1]
        if self._timer is not None:
            if self._timer_due <= now + delay:
                return  # fires in time; _check re-arms it for what is due then
            self._timer.cancel()
        self._arm(delay)

    def _arm(self, delay: float) -> None:
        self._timer_due = due = self.clock.time() + delay
        self._timer = self.clock.call_at(due, self._check)

    def _check(self) -> None:
        self._timer = None
        if not self._phase or self._limits is None or self.exception() is not None:
            return
        head_s, body_s = self._limits
        now = self.clock.time()
        if self._phase == "head":
            due = self._since + head_s
        else:
            due = max(self._since, self.received_at) + body_s
        if now < due - 0.001:
            self._arm(due - now)
            return
        if self._phase == "head":
            what = f"no complete request head within {head_s:g} s (head_timeout)"
        else:
            what = f"the request body paused for {body_s:g} s (body_timeout)"
        partial = self._phase == "body" or self.has_partial_request
        self.set_exception(RequestTimeout(what, partial=partial))


def _phase(reader: asyncio.StreamReader, phase: str) -> None:
    if isinstance(reader, StampedReader):
        reader.reading(phase)


def _first_byte_check(byte: int) -> None:
    """Refuse at once a request that cannot be HTTP/1 (a client waits for nothing)."""
    if byte == 0x16:
        raise BadRequest(
            "this is a plain http:// server and the client sent a TLS handshake: use http://"
        )
    if (byte < 0x20 and byte not in b"\r\n\t") or byte >= 0x7F:
        raise BadRequest(f"not an HTTP/1.1 request (first byte 0x{byte:02x})")


async def _read_head(reader: asyncio.StreamReader) -> list[bytes] | None:
    """The head's lines without their endings (CRLF or bare LF); ``None`` at a clean EOF."""
    try:
        first = await reader.readexactly(1)
    except asyncio.IncompleteReadError:
        return None
    _first_byte_check(first[0])
    lines: list[bytes] = []
    size = 0
    pending = first
    limit = vars(reader).get("_limit")
    try:
        while True:
            # One line at a time (either line end), the head bounded as a whole: asyncio's
            # per-call bound is set to what is left of MAX_HEAD (+3, where a CRLFCRLF search
            # refused it before), so an oversize head is refused once all of it was read.
            if limit is not None:
                vars(reader)["_limit"] = MAX_HEAD + 3 - size
            line = pending + await reader.readuntil(b"\n")
            pending = b""
            size += len(line)
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            if not line:
                if not lines:  # an empty request line: only a line end before EOF is no error
                    pending = await reader.readexactly(1)
                    raise BadRequest("malformed request line b''")
                return lines
            lines.append(line)
    except asyncio.IncompleteReadError as e:
        if not b"".join(lines).strip() and not (pending + e.partial).strip():
            return None
        raise BadRequest("connection closed inside a request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest(f"request head larger than {MAX_HEAD // 1024} KiB") from None
    finally:
        if limit is not None:
            vars(reader)["_limit"] = limit


def _body_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The body's framing: its ``content-length``, or ``None`` for chunked. Raises
    :class:`BadRequest` for framing two readers could disagree on."""
    lengths = [v for k, v in headers if k.lower() == b"content-length"]
    codings = [v for k, v in headers if k.lower() == b"transfer-encoding"]
    if codings:
        names = [c.strip().lower() for v in codings for c in v.split(b",") if c.strip()]
        if names != [b"chunked"]:
            shown = ", ".join(n.decode("latin-1") for n in names)
            raise BadRequest(f"transfer coding {shown!r} not supported (only chunked)", 501)
        if lengths:
            raise BadRequest("both Transfer-Encoding and Content-Length (ambiguous framing)")
        return None
    values = {v.strip() for line in lengths for v in line.split(b",")}
    if not values:
        return 0
    if not all(v.isdigit() for v in values):
        raise BadRequest("malformed or truncated request body")
    if len({int(v) for v in values}) > 1:
        shown = ", ".join(sorted(v.decode("latin-1") for v in values))
        raise BadRequest(f"conflicting Content-Length headers ({shown})")
    return int(values.pop())


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """Read one request (head and whole body); ``None`` when the peer closed between requests
    (or stayed silent past ``head_timeout``, see :meth:`StampedReader.watch`)."""
    _phase(reader, "head")
    try:
        return await _read_request(reader, writer)
    except RequestTimeout as e:
        if not e.partial:
            return None
        raise
    finally:
        _phase(reader, "")


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    head = await _read_head(reader)
    if head is None:
        return None
    request_line, *header_lines = head
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
    length = _body_length(headers)
    _phase(reader, "body")
    if fields.get(b"expect", b"").lower() == b"100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    try:
        if length is None:
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(length)
    except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        raise BadRequest("malformed or truncated request body") from None
    host = fields.get(b"host", b"127.0.0.1").decode("latin-1")
    if method == "CONNECT":  # authority form: HOST:PORT is the whole target
        url = f"http://{target}"
    else:
        url = target if "://" in target else f"http://{host}{target}"
    return Request(method, url, version, tuple(headers), body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\n")).split(b";", 1)[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\n")).rstrip(b"\r\n"):  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if (await reader.readuntil(b"\n")).strip():
            raise ValueError("no line end after a chunk")
