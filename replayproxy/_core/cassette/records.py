"""Splitting a cassette file into records, per format version, telling a torn tail from damage.

A recorder appends one record per write, so a killed recorder leaves at most the *last* record
cut short: a **torn tail**, safe to skip and to cut off before appending. Anything else that
does not decode is **damage**, and cutting there would delete the intact records after it. The
two are told apart like this (``docs/reference/cassette-format.md`` §5):

- version 2 wraps every record in a checked frame: a fixed 20-byte head (marker, CRC-32 of the
  length, CRC-32 of the payload, length) and the payload. A record is torn only if its head is
  a correct prefix (and, once complete, its length check passes), the file ends before the
  payload does, and no intact record follows it; a failed check anywhere is damage, and a
  flipped bit in a body is caught by the payload CRC.
- version 1 has no checks. A record that stops at the end of the file is torn only if no intact
  record can be found after it (a flipped bit in a length can make a middle record *look* cut
  short); one found means damage in the middle.

After damage the scan resynchronises on the next intact record, so a repair can keep it.
Everything here is pure: bytes in, :data:`Piece` s out.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgpack

__all__ = [
    "HEAD_SIZE",
    "MARKER",
    "Damaged",
    "Piece",
    "Record",
    "Torn",
    "frame",
    "split_v1",
    "split_v2",
    "unpack_one",
]

MARKER = b"\x94\xa3rec"
"""A v2 record starts with these bytes: a MessagePack array of 4, its first element "rec"."""

# array(4) "rec" | uint32 length check | uint32 payload CRC | bin32 length | payload
_HEAD = struct.Struct(">5sBIBIBI")
HEAD_SIZE = _HEAD.size  # 20
_UINT32, _BIN32 = 0xCE, 0xC6
_CONSTANT = {i: b for i, b in enumerate(MARKER)} | {5: _UINT32, 10: _UINT32, 15: _BIN32}

# How a v1 record written by replayproxy begins after its map header: the "type" key first.
_V1_SIGNATURE = b"\xa4type\xabinteraction"


@dataclass(frozen=True, slots=True)
class Record:
    """An intact record at ``offset``..``end``: its decoded MessagePack object."""

    offset: int
    end: int
    value: Any


@dataclass(frozen=True, slots=True)
class Torn:
    """The last record, cut short at the end of the file (a recorder stopped mid-write)."""

    offset: int


@dataclass(frozen=True, slots=True)
class Damaged:
    """Bytes ``offset``..``resume_at`` are not intact records; the next one starts at
    ``resume_at`` (the file's length if none follows)."""

    offset: int
    resume_at: int
    reason: str


Piece = Record | Torn | Damaged


class _Corrupt(ValueError):
    """The bytes at an offset are not one well-formed MessagePack object."""


def _unpacker() -> msgpack.Unpacker:
    return msgpack.Unpacker(raw=False, strict_map_key=True, max_buffer_size=0)


def unpack_one(data: bytes | memoryview, at: int = 0) -> tuple[Any, int]:
    """The MessagePack object at ``data[at:]`` and the offset just after it.

    Raises ``msgpack.OutOfData`` if the data ends inside the object, :class:`ValueError`
    (a private subclass) if the bytes are not MessagePack.
    """
    unpacker = _unpacker()
    unpacker.feed(data[at:])
    try:
        value = unpacker.unpack()
    except msgpack.OutOfData:
        raise
    except (ValueError, TypeError, msgpack.UnpackException, UnicodeDecodeError) as e:
        raise _Corrupt(str(e) or type(e).__name__) from None
    return value, at + unpacker.tell()


def _is_interaction(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") == "interaction"


# -- version 2 -------------------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """``payload`` (one packed record map) in a checked v2 frame."""
    size = struct.pack(">I", len(payload))
    head = _HEAD.pack(
        MARKER, _UINT32, zlib.crc32(size), _UINT32, zlib.crc32(payload), _BIN32, len(payload)
    )
    return head + payload


def _check_frame(data: bytes, at: int) -> int | str | None:
    """The frame at ``at``: where it ends if it is intact, ``None`` if it is torn (cut short
    by the end of the file), else why it is damaged."""
    head = data[at : at + HEAD_SIZE]
    for i, byte in enumerate(head):
        if _CONSTANT.get(i, byte) != byte:
            return "not a record frame (marker or type bytes wrong)"
    if len(head) < HEAD_SIZE:
        return None
    _, _, size_crc, _, body_crc, _, size = _HEAD.unpack(head)
    if zlib.crc32(head[16:]) != size_crc:  # the last 4 bytes of the head: the length
        return "record length fails its check"
    end: int = at + HEAD_SIZE + size
    if end > len(data):
        return None
    if zlib.crc32(memoryview(data)[at + HEAD_SIZE : end]) != body_crc:
        return "record bytes fail their CRC-32 check"
    return end


def _resync_v2(data: bytes, after: int) -> int:
    at = data.find(MARKER, after + 1)
    while at >= 0:
        if isinstance(_check_frame(data, at), int):
            return at
        at = data.find(MARKER, at + 1)
    return len(data)


def split_v2(data: bytes, start: int) -> Iterator[Piece]:
    """The records of a v2 file from ``start`` (just after the header record)."""
    at = start
    while at < len(data):
        checked = _check_frame(data, at)
        if not isinstance(checked, int):
            resume = _resync_v2(data, at)
            if checked is None:
                # Cut short, but an intact record after it (another writer's, appended after a
                # write that was cut) makes it damage: cutting here would delete that record.
                if resume == len(data):
                    yield Torn(at)
                    return
                checked = "record is cut short but intact records follow it"
            yield Damaged(at, resume, checked)
            at = resume
            continue
        end = checked
        try:
            value, used = unpack_one(memoryview(data)[at + HEAD_SIZE : end])
        except (msgpack.OutOfData, _Corrupt):
            value, used = None, -1
        if used != end - at - HEAD_SIZE or not _is_interaction(value):
            yield Damaged(at, end, "record payload is not one interaction map")
        else:
            yield Record(at, end, value)
        at = end


# -- version 1 -------------------------------------------------------------------------------


def _intact_v1_at(data: bytes, at: int) -> bool:
    try:
        value, _ = unpack_one(data, at)
    except (msgpack.OutOfData, _Corrupt):
        return False
    return _is_interaction(value)


def _resync_v1(data: bytes, after: int) -> int:
    # A record starts one byte (its map header) before the signature; the first one that can
    # start after ``after`` (the damaged record's own start) has its signature at after + 2.
    hit = data.find(_V1_SIGNATURE, after + 2)
    while hit >= 0:
        if _intact_v1_at(data, hit - 1):
            return hit - 1
        hit = data.find(_V1_SIGNATURE, hit + 1)
    return len(data)


def split_v1(data: bytes, start: int) -> Iterator[Piece]:
    """The records of a v1 file from ``start``: plain MessagePack maps one after another."""
    at = start
    base, unpacker = at, _unpacker()
    unpacker.feed(memoryview(data)[at:])
    while at < len(data):
        try:
            value = unpacker.unpack()
        except msgpack.OutOfData:
            resume = _resync_v1(data, at)
            if resume == len(data):
                yield Torn(at)
                return
            damage = Damaged(at, resume, "record is cut short but intact records follow it")
        except (ValueError, TypeError, msgpack.UnpackException, UnicodeDecodeError) as e:
            resume = _resync_v1(data, at)
            damage = Damaged(at, resume, f"corrupt record ({str(e) or type(e).__name__})")
        else:
            end = base + unpacker.tell()
            if _is_interaction(value):
                yield Record(at, end, value)
                at = end
                continue
            resume = _resync_v1(data, at)
            damage = Damaged(at, resume, "corrupt record (not an interaction map)")
        # After damage, carry on from the next intact record with a fresh unpacker.
        yield damage
        at = base = damage.resume_at
        unpacker = _unpacker()
        unpacker.feed(memoryview(data)[at:])
