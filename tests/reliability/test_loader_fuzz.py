"""The cassette loader under attack: only replayproxy's own errors escape, whatever the bytes.

Byte level: mutations (bit flips, cut, inserted and deleted ranges) of real v2 and v1 files.
Structure level: well-formed MessagePack with every field given the wrong type or range.
A cassette that loads must also be safe for everything downstream (re-encoding, the text form,
matching, planning, the checker), so the fuzz tests use what they load.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy import checking
from replayproxy._core import faults as faults_mod
from replayproxy._core.cassette import codec, records, textform, textload
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.matcher import Matcher
from replayproxy._core.tools.inspect import interaction_rows
from replayproxy._errors import CassetteFormatError, CassetteVersionError, ReplayProxyError

EXAMPLES = Path(__file__).resolve().parents[2] / "cassettes"
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _sample() -> Cassette:
    """Two examples, a no-response and a reset interaction: every part of a record."""
    a = store.load(EXAMPLES / "anthropic-text.cassette").interactions[0]
    b = store.load(EXAMPLES / "gemini-text.cassette").interactions[0]
    none = Interaction(
        Request("POST", "http://[::1]:9/v1", headers=((b"x", b"1"),)),
        None,
        Ending(EndKind.NO_RESPONSE, 7, "refused"),
    )
    reset = replace(b, end=Ending(EndKind.RESET, 10**9, "reset"), faults=("reset:events=1",))
    return Cassette((a, none, b, reset), meta=(("recorded-by", "test"),))


V2 = codec.encode(_sample())
V1 = codec.encode(_sample(), version=1)


def _use(cassette: Cassette) -> None:
    """Everything downstream of the loader, on what it loaded: only our own errors may escape."""
    assert codec.decode(codec.encode(cassette)).cassette == cassette
    assert textload.loads(textform.dumps(cassette)) == cassette
    matcher = Matcher(cassette.interactions, MatchOptions())
    for i, x in enumerate(cassette.interactions):
        matcher.match(x.request)
        with contextlib.suppress(ReplayProxyError):
            faults_mod.plan(x, i)
    interaction_rows(cassette)
    # The checker applies stored faults: an unknown one (a flipped letter in "reset") is a
    # one-line FaultSpecError, ours, as `replayproxy check` reports it (found by this fuzzing).
    with contextlib.suppress(ReplayProxyError):
        checking.check_cassette(cassette)


def _load_or_refuse(data: bytes) -> None:
    try:
        decoded = codec.decode(data)
    except (CassetteFormatError, CassetteVersionError):
        pass
    else:
        _use(decoded.cassette)
    try:
        salvaged = codec.salvage(data)
    except (CassetteFormatError, CassetteVersionError):
        return
    _use(salvaged.decoded.cassette)


@st.composite
def mutated(draw: st.DrawFn, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "byte", "cut", "insert", "delete"]))
        if action == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "byte":
            data[at] = draw(st.sampled_from([0x00, 0xC1, 0xFF, 0xDD, 0xDF, 0xC6, 0x94, 0x0D]))
        elif action == "cut":
            del data[at:]
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=12))
        else:
            del data[at : at + draw(st.integers(1, 40))]
    return bytes(data)


@SLOW
@given(mutated(V2))
def test_mutated_v2_files_load_or_fail_with_our_errors(data: bytes) -> None:
    """Any mutation of a v2 file: a CassetteError or a cassette every consumer can use."""
    _load_or_refuse(data)


@SLOW
@given(mutated(V1))
def test_mutated_v1_files_load_or_fail_with_our_errors(data: bytes) -> None:
    """Any mutation of a v1 file: a CassetteError or a cassette every consumer can use."""
    _load_or_refuse(data)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_after_a_header_fail_with_our_errors(tail: bytes) -> None:
    """Random bytes where records belong (v1 and v2): only our own errors."""
    for version in (1, 2):
        _load_or_refuse(codec.encode_header(version=version) + tail)


def test_every_single_bit_flip_in_a_v2_record_is_detected() -> None:
    """A flipped bit anywhere in any v2 record (head, checks, length, body) never loads
    silently: every one of them is a CassetteFormatError."""
    head = len(codec.encode_header(_sample().meta))
    cassette = Cassette(_sample().interactions[1:3], _sample().meta)  # small: every bit, fast
    data = codec.encode(cassette)
    assert len(data) - head > 500
    for at in range(head, len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[at] ^= 1 << bit
            with pytest.raises(CassetteFormatError):
                codec.decode(bytes(damaged))


def test_a_flipped_body_bit_in_v1_loads_silently_but_v2_refuses() -> None:
    """Why v2 exists: v1 has no check on frame bytes; v2's CRC-32 catches the same flip."""
    body = _sample().interactions[0].frames[0].data
    for version, data in ((1, V1), (2, V2)):
        at = data.index(body) + 3
        damaged = bytearray(data)
        damaged[at] ^= 0x04
        if version == 1:
            assert codec.decode(bytes(damaged)).cassette != _sample()
        else:
            with pytest.raises(CassetteFormatError, match="CRC-32"):
                codec.decode(bytes(damaged))


# -- structure level ----------------------------------------------------------------------------

NASTY: list[Any] = [
    None, True, False, 0, -1, 2**63, 2**64 - 1, -(2**63), 1.5, float("nan"), float("inf"),
    "", "x", "a\r\nInjected: 1", "\x00", b"", b"\r\n", b"x", [], [1, 2], {}, {"k": 1},
    [[b"n", b"v"]], [[0, b"x"]], [[True, b"x"]], [[-1, b"x"]], "http://[::1", "http://h:99999/",
]  # fmt: skip
nasty = st.sampled_from(NASTY)


def _record_map() -> dict[str, Any]:
    """The record map (a v2 frame's payload) of a real interaction, to be spoilt."""
    packed = codec.encode_interaction(_sample().interactions[0])
    record: dict[str, Any] = msgpack.unpackb(packed[records.HEAD_SIZE :])
    return record


PATHS = [
    ("type",), ("request",), ("request", "method"), ("request", "url"),
    ("request", "http_version"), ("request", "headers"), ("request", "body"), ("response",),
    ("response", "status"), ("response", "reason"), ("response", "http_version"),
    ("response", "headers"), ("response", "head_offset_ns"), ("response", "frames"), ("end",),
    ("end", "kind"), ("end", "offset_ns"), ("end", "message"), ("faults",), ("recorded_at",),
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), nasty), min_size=1, max_size=3), st.booleans())
def test_any_field_with_any_value_fails_with_our_errors(
    changes: list[tuple[tuple[str, ...], Any]], v1: bool
) -> None:
    """Well-formed MessagePack with wrong types and ranges in any field: only our errors."""
    record = _record_map()
    for path, value in changes:
        target = record
        for key in path[:-1]:
            if not isinstance(target.get(key), dict):
                break
            target = target[key]
        else:
            # A copy: NASTY's dicts and lists are shared by every example, and assigning one
            # into another would make a structure that contains itself.
            target[path[-1]] = copy.deepcopy(value)
    payload = msgpack.packb(record, use_bin_type=True)
    version = 1 if v1 else 2
    data = codec.encode_header(version=version) + (payload if v1 else records.frame(payload))
    _load_or_refuse(data)


@settings(max_examples=100, deadline=None)
@given(nasty, nasty)
def test_any_header_fails_with_our_errors(version: Any, meta: Any) -> None:
    """A header with any version (0, None, "1", [1], floats, bools) or meta: only our errors."""
    data = msgpack.packb({"format": codec.FORMAT_NAME, "version": version, "meta": meta})
    _load_or_refuse(data + codec.encode_interaction(_sample().interactions[0]))


# -- each bad input of issue 9, with the field it names ------------------------------------------


def _with(path: tuple[str | int, ...], value: Any) -> bytes:
    record = _record_map()
    target: Any = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return codec.encode_header() + records.frame(msgpack.packb(record, use_bin_type=True))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("response", "status"), 99, r"response.status 99 is not an HTTP status \(100-599\)"),
        (("response", "status"), 600, r"response.status 600 is not an HTTP status"),
        (("response", "status"), True, r"response.status has the wrong type \(bool\)"),
        (("response", "reason"), "OK\r\nSet-Cookie: x=1", r"response.reason contains CR"),
        (("response", "headers"), [[b"x", b"1\r\nInjected: 1"]], r"headers\[0\].value contains CR"),
        (("response", "headers"), [[b"a\nb", b"1"]], r"headers\[0\].name contains LF"),
        (("response", "headers"), [[b"x", b"\x00"]], r"headers\[0\].value contains NUL"),
        (("request", "headers"), [[b"x: y", b"1"]], r"request.headers\[0\].name contains"),
        (("response", "head_offset_ns"), -5, r"response.head_offset_ns is negative"),
        (("response", "head_offset_ns"), False, r"head_offset_ns has the wrong type \(bool\)"),
        (("response", "head_offset_ns"), 2**64 - 1, r"head_offset_ns is out of range"),
        (("response", "frames"), [[5, b"a"], [3, b"b"]], r"frames\[1\].offset_ns goes backwards"),
        (("response", "frames"), [[True, b"a"]], r"response.frames\[0\] is not \[offset_ns"),
        (("response", "frames"), [[-1, b"a"]], r"frames\[0\].offset_ns is negative"),
        (("end", "offset_ns"), -1, r"end.offset_ns is negative"),
        (("request", "url"), "http://[::1", r"request.url 'http://\[::1' does not parse"),
        (("request", "url"), "http://h:99999/", r"request.url .* does not parse"),
        (("request", "url"), "ftp://h/x", r"request.url .* neither an absolute http"),
        (("request", "method"), "GET /x HTTP/1.1\r\n", r"request.method .* is not an HTTP method"),
        (("recorded_at",), float("nan"), r"recorded_at is not a finite number"),
        (("faults",), ["reset\r\nx"], r"faults\[0\] contains CR"),
    ],
)
def test_bad_field_is_one_line_naming_interaction_and_field(
    path: tuple[str, ...], value: Any, message: str
) -> None:
    """Each bad field: one-line CassetteFormatError naming the interaction and the field."""
    with pytest.raises(CassetteFormatError, match=rf"interaction 0: .*{message}") as info:
        codec.decode(_with(path, value))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("version", [0, None, "1", [1], 1.0, True, 2**64 - 1, {"v": 1}])
def test_bad_version_is_one_line(version: Any) -> None:
    """Any version that is not a known int: CassetteVersionError naming it (never a KeyError)."""
    data = msgpack.packb({"format": codec.FORMAT_NAME, "version": version, "meta": {}})
    with pytest.raises(CassetteVersionError, match="unknown cassette format version") as info:
        codec.decode(data)
    assert "\n" not in str(info.value)


def test_writer_refuses_what_the_loader_would_refuse(tmp_path: Path) -> None:
    """What is written can be read back: an out-of-range field is refused before writing."""
    bad = replace(_sample().interactions[0], response=Response(700, frames=(Frame(0, b"x"),)))
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path, "new") as writer:
        writer.append(_sample().interactions[0])
        before = path.read_bytes()
        with pytest.raises(CassetteFormatError, match=r"response.status 700"):
            writer.append(bad)
    assert path.read_bytes() == before
    with pytest.raises(CassetteFormatError, match=r"cannot write interaction: response.status"):
        store.save(tmp_path / "d.cassette", Cassette((bad,)))
    assert not (tmp_path / "d.cassette").exists()
