"""AWS event-stream (``application/vnd.amazon.eventstream``, used by Bedrock): decode and encode.

A message is, big-endian (botocore ``eventstream.py``)::

    [0:4]  total length   [4:8] headers length   [8:12] CRC32 of bytes 0..8 (prelude CRC)
    headers: { name_len:u8, name, type:u8, value }*    payload    CRC32 of all before it

:class:`EventStreamDecoder` is incremental (any split of the input gives the same result) and
never raises on bad data: ``feed`` returns :class:`EventStreamMessage` s, each with its byte
span, and :class:`EventStreamError` s, each with a stable ``code`` (the checker's rule id).
A bad prelude CRC, an impossible length or a size over botocore's limits loses the framing, so
the decoder reports it as ``fatal`` and ignores the rest of the stream. A bad message CRC or bad
headers inside a well-framed message are reported and decoding resumes at the next message.
:func:`encode_message` builds messages for tests, the simulator and faults.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_HEADERS_LENGTH",
    "MAX_PAYLOAD_LENGTH",
    "EventStreamDecoder",
    "EventStreamError",
    "EventStreamHeader",
    "EventStreamMessage",
    "HeaderValue",
    "Timestamp",
    "decode_all",
    "encode_event",
    "encode_exception",
    "encode_message",
]

PRELUDE_LENGTH: Final = 12
MIN_LENGTH: Final = 16  # prelude + message CRC
MAX_HEADERS_LENGTH: Final = 128 * 1024  # botocore _MAX_HEADERS_LENGTH
MAX_PAYLOAD_LENGTH: Final = 16 * 1024 * 1024  # botocore _MAX_PAYLOAD_LENGTH

# Header value types (AWS event-stream spec).
TRUE, FALSE, BYTE, SHORT, INTEGER, LONG, BYTES, STRING, TIMESTAMP, UUID = range(10)


@dataclass(frozen=True, slots=True)
class Timestamp:
    """A type-8 header value: milliseconds since the Unix epoch."""

    ms: int


HeaderValue = bool | int | bytes | str | Timestamp | uuid.UUID


@dataclass(frozen=True, slots=True)
class EventStreamHeader:
    """One header with its wire type (kept so that decode then encode is byte-exact)."""

    name: str
    type: int
    value: HeaderValue


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """A well-framed message and its ``[start, end)`` span in the stream."""

    index: int
    start: int
    end: int
    headers: tuple[EventStreamHeader, ...]
    payload: bytes

    def header(self, name: str) -> HeaderValue | None:
        for h in self.headers:
            if h.name == name:
                return h.value
        return None

    def _str(self, name: str) -> str | None:
        value = self.header(name)
        return value if isinstance(value, str) else None

    @property
    def message_type(self) -> str | None:
        return self._str(":message-type")

    @property
    def event_type(self) -> str | None:
        return self._str(":event-type")

    @property
    def exception_type(self) -> str | None:
        return self._str(":exception-type")

    @property
    def content_type(self) -> str | None:
        return self._str(":content-type")

    @property
    def name(self) -> str:
        """``:event-type``, else ``:exception-type``/``:error-code``, else the message type."""
        return (
            self.event_type
            or self.exception_type
            or self._str(":error-code")
            or self.message_type
            or "?"
        )


@dataclass(frozen=True, slots=True)
class EventStreamError:
    """A problem at byte ``offset``; ``code`` is stable (``bedrock.message-crc`` ...)."""

    code: str
    offset: int
    message: str
    fatal: bool
    index: int  # the index the message at ``offset`` would have had


class _HeaderError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


_INT_FORMATS: Final = {BYTE: struct.Struct(">b"), SHORT: struct.Struct(">h"),
                       INTEGER: struct.Struct(">i"), LONG: struct.Struct(">q")}  # fmt: skip
_U16: Final = struct.Struct(">H")
_I64: Final = struct.Struct(">q")


def _parse_headers(raw: bytes) -> tuple[EventStreamHeader, ...]:
    headers: list[EventStreamHeader] = []
    seen: set[str] = set()
    pos, n = 0, len(raw)
    overrun = _HeaderError("bedrock.headers", "a header runs past the headers section")
    while pos < n:
        name_len = raw[pos]
        end = pos + 1 + name_len
        if end >= n:
            raise overrun
        name = raw[pos + 1 : end].decode("utf-8", "replace")
        kind = raw[end]
        pos = end + 1
        value: HeaderValue
        if kind in (TRUE, FALSE):
            value = kind == TRUE
        elif kind in _INT_FORMATS:
            fmt = _INT_FORMATS[kind]
            if pos + fmt.size > n:
                raise overrun
            value = fmt.unpack_from(raw, pos)[0]
            pos += fmt.size
        elif kind in (BYTES, STRING):
            if pos + 2 > n:
                raise overrun
            (length,) = _U16.unpack_from(raw, pos)
            pos += 2
            if pos + length > n:
                raise overrun
            blob = raw[pos : pos + length]
            pos += length
            value = blob if kind == BYTES else blob.decode("utf-8", "replace")
        elif kind == TIMESTAMP:
            if pos + 8 > n:
                raise overrun
            value = Timestamp(_I64.unpack_from(raw, pos)[0])
            pos += 8
        elif kind == UUID:
            if pos + 16 > n:
                raise overrun
            value = uuid.UUID(bytes=raw[pos : pos + 16])
            pos += 16
        else:
            raise _HeaderError("bedrock.header-type", f"header {name!r} has unknown type {kind}")
        if name in seen:
            raise _HeaderError("bedrock.duplicate-header", f"header {name!r} appears twice")
        seen.add(name)
        headers.append(EventStreamHeader(name, kind, value))
    return tuple(headers)


class EventStreamDecoder:
    """Incremental decoder: ``feed`` bytes, then ``close`` to learn about a partial tail."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._count = 0
        self.failed = False  # a fatal error was reported; later bytes are ignored
        # Bedrock repeats a handful of identical header blocks; parsing each once keeps a
        # 10 MB body well under a second.
        self._header_cache: dict[bytes, tuple[EventStreamHeader, ...]] = {}

    def feed(self, data: bytes) -> list[EventStreamMessage | EventStreamError]:
        out: list[EventStreamMessage | EventStreamError] = []
        if self.failed:
            return out
        self._buf += data
        pos = 0
        buf = self._buf
        while len(buf) - pos >= PRELUDE_LENGTH:
            total, hlen, pcrc = struct.unpack_from(">III", buf, pos)
            at = self._base + pos
            problem = self._check_prelude(buf, pos, total, hlen, pcrc)
            if problem is not None:
                code, message = problem
                out.append(EventStreamError(code, at, message, True, self._count))
                self.failed = True
                pos = len(buf)
                break
            if len(buf) - pos < total:
                break
            out.append(self._message(bytes(buf[pos : pos + total]), at, hlen))
            self._count += 1
            pos += total
        del buf[:pos]
        self._base += pos
        return out

    def close(self) -> list[EventStreamError]:
        """End of stream: a partial message left over is an error (botocore would wait)."""
        if self.failed or not self._buf:
            return []
        left = len(self._buf)
        self._buf.clear()
        return [
            EventStreamError(
                "bedrock.truncated",
                self._base,
                f"stream ends inside a message ({left} byte(s) of an incomplete message)",
                True,
                self._count,
            )
        ]

    @staticmethod
    def _check_prelude(
        buf: bytearray, pos: int, total: int, hlen: int, pcrc: int
    ) -> tuple[str, str] | None:
        actual = zlib.crc32(buf[pos : pos + 8])
        if actual != pcrc:
            return (
                "bedrock.prelude-crc",
                f"prelude CRC mismatch (stored 0x{pcrc:08x}, computed 0x{actual:08x})",
            )
        if total < MIN_LENGTH or hlen > total - MIN_LENGTH:
            return (
                "bedrock.length",
                f"impossible lengths (total {total}, headers {hlen}; need total >= 16 + headers)",
            )
        if hlen > MAX_HEADERS_LENGTH:
            return ("bedrock.length", f"headers of {hlen} bytes exceed the 128 KiB limit")
        if total - hlen - MIN_LENGTH > MAX_PAYLOAD_LENGTH:
            return ("bedrock.length", "payload exceeds the 16 MiB limit")
        return None

    def _message(self, raw: bytes, at: int, hlen: int) -> EventStreamMessage | EventStreamError:
        (stored,) = struct.unpack_from(">I", raw, len(raw) - 4)
        actual = zlib.crc32(raw[:-4])
        if stored != actual:
            return EventStreamError(
                "bedrock.message-crc",
                at,
                f"message CRC mismatch (stored 0x{stored:08x}, computed 0x{actual:08x})",
                False,
                self._count,
            )
        raw_headers = raw[PRELUDE_LENGTH : PRELUDE_LENGTH + hlen]
        headers = self._header_cache.get(raw_headers)
        if headers is None:
            try:
                headers = _parse_headers(raw_headers)
            except _HeaderError as e:
                return EventStreamError(e.code, at, str(e), False, self._count)
            if len(self._header_cache) < 256:
                self._header_cache[raw_headers] = headers
        payload = raw[PRELUDE_LENGTH + hlen : -4]
        return EventStreamMessage(self._count, at, at + len(raw), headers, payload)


def decode_all(data: bytes) -> list[EventStreamMessage | EventStreamError]:
    """Decode a complete body: messages and errors in stream order."""
    decoder = EventStreamDecoder()
    return [*decoder.feed(data), *decoder.close()]


def _infer(name: str, value: HeaderValue) -> EventStreamHeader:
    if isinstance(value, bool):
        return EventStreamHeader(name, TRUE if value else FALSE, value)
    if isinstance(value, int):
        kind = INTEGER if -(2**31) <= value < 2**31 else LONG
        return EventStreamHeader(name, kind, value)
    if isinstance(value, bytes):
        return EventStreamHeader(name, BYTES, value)
    if isinstance(value, str):
        return EventStreamHeader(name, STRING, value)
    if isinstance(value, Timestamp):
        return EventStreamHeader(name, TIMESTAMP, value)
    return EventStreamHeader(name, UUID, value)


def _encode_header(h: EventStreamHeader) -> bytes:
    name = h.name.encode("utf-8")
    head = struct.pack(">B", len(name)) + name + struct.pack(">B", h.type)
    v = h.value
    if h.type in (TRUE, FALSE):
        return head
    if h.type in (BYTE, SHORT, INTEGER, LONG):
        fmt = {BYTE: ">b", SHORT: ">h", INTEGER: ">i", LONG: ">q"}[h.type]
        assert isinstance(v, int)
        return head + struct.pack(fmt, v)
    if h.type in (BYTES, STRING):
        blob = v.encode("utf-8") if isinstance(v, str) else v
        assert isinstance(blob, bytes)
        return head + struct.pack(">H", len(blob)) + blob
    if h.type == TIMESTAMP:
        assert isinstance(v, Timestamp)
        return head + struct.pack(">q", v.ms)
    assert isinstance(v, uuid.UUID)
    return head + v.bytes


def encode_message(
    headers: Iterable[EventStreamHeader | tuple[str, HeaderValue]], payload: bytes
) -> bytes:
    """One framed message. ``(name, value)`` pairs get a type from the value's Python type
    (``int`` -> int32 or int64, ``str`` -> string, ``bytes`` -> bytes ...)."""
    typed = [h if isinstance(h, EventStreamHeader) else _infer(*h) for h in headers]
    raw_headers = b"".join(_encode_header(h) for h in typed)
    total = PRELUDE_LENGTH + len(raw_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def encode_event(event_type: str, payload: bytes, content_type: str = "application/json") -> bytes:
    """An ``event`` message with the headers (and order) Bedrock sends."""
    return encode_message(
        [(":event-type", event_type), (":content-type", content_type), (":message-type", "event")],
        payload,
    )


def encode_exception(
    exception_type: str, payload: bytes, content_type: str = "application/json"
) -> bytes:
    """An ``exception`` message (a mid-stream error such as ``throttlingException``)."""
    headers: Sequence[tuple[str, HeaderValue]] = [
        (":exception-type", exception_type),
        (":content-type", content_type),
        (":message-type", "exception"),
    ]
    return encode_message(headers, payload)
