"""core/records.py exactly: the v2 record frame's bytes, and how both versions split a file
into intact records, a torn tail and damage (with the exact offsets, resume points and
reasons), plus properties over cuts and flipped bytes."""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette import records
from replayproxy._core.cassette.records import HEAD_SIZE, MARKER, Damaged, Record, Torn


def split(
    splitter: Callable[[bytes, int], Iterator[records.Piece]], data: bytes, start: int
) -> list[records.Piece]:
    """The pieces, at most 1000 of them: a scan that stops advancing fails fast, not never."""
    return list(itertools.islice(splitter(data, start), 1000))


def rec(i: int, pad: int = 0) -> dict[str, Any]:
    """A record map as replayproxy writes it: the "type" key first."""
    return {"type": "interaction", "i": i, "pad": "x" * pad}


def packed(i: int, pad: int = 0) -> bytes:
    return msgpack.packb(rec(i, pad))


def v2(*payloads: bytes) -> tuple[bytes, list[int]]:
    """Framed payloads one after another, and where each frame starts (plus the end)."""
    data, starts = b"", []
    for p in payloads:
        starts.append(len(data))
        data += records.frame(p)
    return data, [*starts, len(data)]


def v1(*payloads: bytes) -> tuple[bytes, list[int]]:
    data, starts = b"", []
    for p in payloads:
        starts.append(len(data))
        data += p
    return data, [*starts, len(data)]


# -- the frame and unpack_one --------------------------------------------------------------------


def test_frame_bytes() -> None:
    """A v2 frame: marker, uint32 CRC-32 of the big-endian length, uint32 CRC-32 of the
    payload, bin32 length, payload: 20 bytes of head, and one MessagePack array."""
    payload = packed(1)
    size = struct.pack(">I", len(payload))
    assert records.frame(payload) == (
        MARKER + b"\xce" + struct.pack(">I", zlib.crc32(size)) + b"\xce"
        + struct.pack(">I", zlib.crc32(payload)) + b"\xc6" + size + payload
    )  # fmt: skip
    assert HEAD_SIZE == 20 and MARKER == b"\x94\xa3rec"
    assert msgpack.unpackb(records.frame(payload)) == [
        "rec", zlib.crc32(size), zlib.crc32(payload), payload,
    ]  # fmt: skip


def test_unpack_one_returns_the_object_and_where_it_ends() -> None:
    """The object at ``at`` and the offset after it, in the whole data's terms."""
    data = b"\x01" + packed(7) + b"\x02"
    assert records.unpack_one(data, 1) == (rec(7), len(data) - 1)
    assert records.unpack_one(memoryview(data)) == (1, 1)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xc1", "FormatError"),  # a reserved byte: msgpack gives no message
        (b"\x81\x01\x02", "int is not allowed for map key when strict_map_key=True"),
        (b"\xa1\xff", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ],
)
def test_unpack_one_names_what_is_wrong(data: bytes, reason: str) -> None:
    """Bytes that are not MessagePack (or not our kind: binary strings, non-string keys): a
    ValueError with msgpack's reason, or the exception's name when it gives none."""
    with pytest.raises(ValueError) as info:
        records.unpack_one(data)
    assert str(info.value) == reason
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_unpack_one_of_a_cut_object_is_out_of_data() -> None:
    """An object cut short raises msgpack.OutOfData (a torn tail, not damage)."""
    with pytest.raises(msgpack.OutOfData):
        records.unpack_one(packed(1)[:-1])


# -- version 2 -----------------------------------------------------------------------------------


def test_v2_intact_records() -> None:
    """Every intact frame is a Record with its offsets and its map."""
    data, at = v2(packed(0), packed(1, 300))
    head = b"HEADER"
    assert split(records.split_v2, head + data, len(head)) == [
        Record(len(head) + at[0], len(head) + at[1], rec(0)),
        Record(len(head) + at[1], len(head) + at[2], rec(1, 300)),
    ]


@pytest.mark.parametrize("keep", [1, 5, 6, 19, 20, 21])
def test_v2_a_cut_last_record_is_torn(keep: int) -> None:
    """The last frame cut anywhere (in its head or its payload): Torn at its start."""
    data, at = v2(packed(0), packed(1))
    cut = data[: at[1] + keep]
    assert split(records.split_v2, cut, 0) == [Record(0, at[1], rec(0)), Torn(at[1])]


def test_v2_a_cut_record_followed_by_an_intact_one_is_damage() -> None:
    """A frame whose payload is cut short by another, intact frame: damage up to that frame
    (cutting there would delete it), then the intact one."""
    a, b = records.frame(packed(0)), records.frame(packed(1))
    data = a[:30] + b
    assert split(records.split_v2, data, 0) == [
        Damaged(0, 30, "record bytes fail their CRC-32 check"),
        Record(30, len(data), rec(1)),
    ]
    big = records.frame(packed(0, 500))  # claims more bytes than the file has
    data = big[:60] + b
    assert split(records.split_v2, data, 0) == [
        Damaged(0, 60, "record is cut short but intact records follow it"),
        Record(60, len(data), rec(1)),
    ]


@pytest.mark.parametrize(
    ("index", "reason"),
    [
        (0, "not a record frame (marker or type bytes wrong)"),
        (4, "not a record frame (marker or type bytes wrong)"),
        (5, "not a record frame (marker or type bytes wrong)"),
        (6, "record length fails its check"),
        (10, "not a record frame (marker or type bytes wrong)"),
        (11, "record bytes fail their CRC-32 check"),
        (15, "not a record frame (marker or type bytes wrong)"),
        (19, "record length fails its check"),
        (25, "record bytes fail their CRC-32 check"),
    ],
)
def test_v2_a_flipped_byte_is_damage_with_its_reason(index: int, reason: str) -> None:
    """A flipped byte in the middle frame: damage from its start to the next intact frame,
    with the check that failed; the frames around it are kept."""
    data, at = v2(packed(0), packed(1), packed(2))
    flipped = bytearray(data)
    flipped[at[1] + index] ^= 0x01
    assert split(records.split_v2, bytes(flipped), 0) == [
        Record(at[0], at[1], rec(0)),
        Damaged(at[1], at[2], reason),
        Record(at[2], at[3], rec(2)),
    ]


def test_v2_damage_at_the_end_resumes_at_the_end() -> None:
    """Damage with no intact frame after it: resume_at is the file's length."""
    data, at = v2(packed(0))
    junk = b"\x00" * 30
    assert split(records.split_v2, data + junk, 0) == [
        Record(0, at[1], rec(0)),
        Damaged(at[1], at[1] + 30, "not a record frame (marker or type bytes wrong)"),
    ]


def test_v2_resync_skips_markers_that_start_no_intact_frame() -> None:
    """After damage, a marker that begins a bad frame is passed over for the intact one."""
    data, at = v2(packed(1))
    bad = MARKER + b"\x00" * 20  # the marker, then no valid frame
    junk = b"\xff\xff" + bad
    assert split(records.split_v2, junk + data, 0) == [
        Damaged(0, len(junk), "not a record frame (marker or type bytes wrong)"),
        Record(len(junk), len(junk) + at[1], rec(1)),
    ]


@pytest.mark.parametrize(
    "payload",
    [
        msgpack.packb({"type": "header"}),  # a map, not an interaction
        msgpack.packb([1, 2]),  # not a map
        packed(0) + msgpack.packb(1),  # two objects in one frame
        packed(0)[:-2],  # an object cut short inside an intact frame
        b"\xc1",  # not MessagePack
    ],
)
def test_v2_a_frame_that_is_not_one_interaction_map_is_damage(payload: bytes) -> None:
    """An intact frame whose payload is not exactly one interaction map: damage over that
    frame alone; the next frame is read."""
    data, at = v2(payload, packed(1))
    assert split(records.split_v2, data, 0) == [
        Damaged(0, at[1], "record payload is not one interaction map"),
        Record(at[1], at[2], rec(1)),
    ]


def test_v2_nothing_after_the_start() -> None:
    """No bytes after the header: no pieces."""
    assert split(records.split_v2, b"HEAD", 4) == []


# -- version 1 -----------------------------------------------------------------------------------


def test_v1_intact_records() -> None:
    """Plain maps one after another: a Record each, with offsets from ``start``."""
    data, at = v1(packed(0), packed(1, 200))
    head = msgpack.packb({"format": "x"})
    assert split(records.split_v1, head + data, len(head)) == [
        Record(len(head) + at[0], len(head) + at[1], rec(0)),
        Record(len(head) + at[1], len(head) + at[2], rec(1, 200)),
    ]


@pytest.mark.parametrize("keep", [1, 2, 10])
def test_v1_a_cut_last_record_is_torn(keep: int) -> None:
    """The last map cut short, nothing intact after it: Torn at its start."""
    data, at = v1(packed(0), packed(1))
    assert split(records.split_v1, data[: at[1] + keep], 0) == [
        Record(0, at[1], rec(0)),
        Torn(at[1]),
    ]


def test_v1_a_record_cut_short_by_an_intact_one_is_damage() -> None:
    """A map whose (damaged) string length runs past the end of the file, over an intact
    record: damage up to that record, which is kept."""
    long = packed(0, 300)
    pad_at = long.index(b"x" * 300) - 3  # the str16 head of the padding
    assert long[pad_at] == 0xDA
    bad = long[:pad_at] + b"\xda\xff\xff" + b"x" * 10  # claims 65535 bytes
    data = bad + packed(1)
    assert split(records.split_v1, data, 0) == [
        Damaged(0, len(bad), "record is cut short but intact records follow it"),
        Record(len(bad), len(data), rec(1)),
    ]


@pytest.mark.parametrize(
    ("junk", "reason"),
    [
        (b"\xc1", "corrupt record (FormatError)"),
        (b"\x81\x01\x02", "corrupt record (int is not allowed for map key when "
                          "strict_map_key=True)"),
        (msgpack.packb({"type": "other"}), "corrupt record (not an interaction map)"),
        (msgpack.packb(5), "corrupt record (not an interaction map)"),
    ],
)  # fmt: skip
def test_v1_damage_resumes_at_the_next_intact_record(junk: bytes, reason: str) -> None:
    """Bytes that are not an interaction map: damage with the reason, up to the next record
    that starts like ours and decodes, from which reading goes on."""
    data, at = v1(packed(0), junk, packed(1), packed(2))
    assert split(records.split_v1, data, 0) == [
        Record(at[0], at[1], rec(0)),
        Damaged(at[1], at[2], reason),
        Record(at[2], at[3], rec(1)),
        Record(at[3], at[4], rec(2)),
    ]


def test_v1_damage_at_the_end_resumes_at_the_end() -> None:
    """Damage with nothing intact after it: resume_at is the file's length, and it ends."""
    data, at = v1(packed(0), msgpack.packb({"type": "other"}))
    assert split(records.split_v1, data, 0) == [
        Record(0, at[1], rec(0)),
        Damaged(at[1], at[2], "corrupt record (not an interaction map)"),
    ]


def test_v1_resync_needs_the_signature_after_the_damage_and_an_intact_record() -> None:
    """Resynchronising looks for a record starting after the damaged one's first byte, and
    skips a signature that does not begin an intact record."""
    fake = b"\x82\xa4type\xabinteraction\xc1"  # our signature, then garbage
    data, at = v1(msgpack.packb({"type": "other"}), fake, packed(1))
    assert split(records.split_v1, data, 0) == [
        Damaged(0, at[2], "corrupt record (not an interaction map)"),
        Record(at[2], at[3], rec(1)),
    ]
    # The damaged record itself starts with the signature: not where to resume.
    cut = packed(0)[:-1] + b"\xc1"
    data, at = v1(cut, packed(1))
    pieces = split(records.split_v1, data, 0)
    assert pieces[-1] == Record(at[1], at[2], rec(1))
    assert isinstance(pieces[0], Damaged) and pieces[0].offset == 0
    assert pieces[0].resume_at == at[1]


# -- properties ----------------------------------------------------------------------------------

RECORDS = [packed(i, pad) for i, pad in enumerate((0, 40, 3))]


@settings(max_examples=60)
@given(st.sampled_from([1, 2]), st.data())
def test_a_cut_anywhere_keeps_the_records_before_it(version: int, data: st.DataObject) -> None:
    """Cutting a file anywhere: the complete records before the cut, then Torn at the next
    record's start unless the cut falls on a boundary."""
    whole, at = (v2 if version == 2 else v1)(*RECORDS)
    cut = data.draw(st.integers(0, len(whole)))
    splitter = records.split_v2 if version == 2 else records.split_v1
    pieces = split(splitter, whole[:cut], 0)
    complete = sum(1 for end in at[1:] if end <= cut)
    expected: list[object] = [
        Record(at[i], at[i + 1], rec(i, (0, 40, 3)[i])) for i in range(complete)
    ]
    if cut not in at:
        expected.append(Torn(at[complete]))
    assert pieces == expected


@settings(max_examples=80)
@given(st.data())
def test_v2_a_flipped_bit_never_yields_a_wrong_record(data: st.DataObject) -> None:
    """Any single flipped bit in a v2 file: the pieces cover the file in order, and every
    Record is an original record at its original place (the checks catch the rest)."""
    whole, at = v2(*RECORDS)
    i = data.draw(st.integers(0, len(whole) - 1))
    bit = data.draw(st.integers(0, 7))
    flipped = bytearray(whole)
    flipped[i] ^= 1 << bit
    pieces = split(records.split_v2, bytes(flipped), 0)
    pos = 0
    for p in pieces:
        assert p.offset == pos
        if isinstance(p, Record):
            k = at.index(p.offset)
            assert (p.end, p.value) == (at[k + 1], msgpack.unpackb(RECORDS[k]))
            pos = p.end
        elif isinstance(p, Damaged):
            assert p.resume_at > p.offset
            pos = p.resume_at
        else:
            pos = len(flipped)
    assert pos == len(flipped)


# -- resynchronising -----------------------------------------------------------------------------


def test_v2_resync_resumes_at_the_first_intact_frame_after_the_damage() -> None:
    """After damage the scan resumes at the *first* intact frame (one byte after the damaged
    start, here), not a later one; bad markers before it are passed over in order."""
    data, at = v2(packed(1), packed(2))
    junk = b"\x00"
    assert split(records.split_v2, junk + data, 0) == [
        Damaged(0, 1, "not a record frame (marker or type bytes wrong)"),
        Record(1, 1 + at[1], rec(1)),
        Record(1 + at[1], 1 + at[2], rec(2)),
    ]
    bad = b"\xff" + MARKER + b"\x00" * 20
    assert split(records.split_v2, bad + data, 0) == [
        Damaged(0, len(bad), "not a record frame (marker or type bytes wrong)"),
        Record(len(bad), len(bad) + at[1], rec(1)),
        Record(len(bad) + at[1], len(bad) + at[2], rec(2)),
    ]


def test_v1_resync_resumes_at_the_first_intact_record_after_the_damage() -> None:
    """v1: a record starting one byte after the damaged start is the one resumed at; a
    signature that starts no intact record is passed over for the first intact one, not a
    later one; records before the damage are never resumed at."""
    data, at = v1(packed(1), packed(2))
    assert split(records.split_v1, b"\xc1" + data, 0) == [
        Damaged(0, 1, "corrupt record (FormatError)"),
        Record(1, 1 + at[1], rec(1)),
        Record(1 + at[1], 1 + at[2], rec(2)),
    ]
    fake = b"\xc1\x82\xa4type\xabinteraction\xc1"
    assert split(records.split_v1, fake + data, 0) == [
        Damaged(0, len(fake), "corrupt record (FormatError)"),
        Record(len(fake), len(fake) + at[1], rec(1)),
        Record(len(fake) + at[1], len(fake) + at[2], rec(2)),
    ]
    before, b_at = v1(packed(0), b"\xc1", packed(1))
    assert split(records.split_v1, before, 0)[1] == Damaged(
        b_at[1], b_at[2], "corrupt record (FormatError)"
    )
