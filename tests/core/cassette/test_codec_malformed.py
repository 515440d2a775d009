"""Malformed cassette records: one exact one-line error per field, and nothing else lost.

Table-driven: each case takes a valid record map, breaks one field (drops it, gives it the
wrong type, puts it out of range) and names the exact error ``decode`` must raise. The broken
record is the second of three, so the error must name interaction 1 and its byte offset, and
:func:`codec.salvage` must keep the other two.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import msgpack
import pytest

from replayproxy._core.cassette import codec, records
from replayproxy._core.cassette.model import Cassette, EndKind
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._errors import CassetteError, CassetteFormatError

_KINDS = ", ".join(k.value for k in EndKind)


def _record() -> dict[str, Any]:
    """A valid record map, every optional key present."""
    return {
        "type": "interaction",
        "request": {
            "method": "POST",
            "url": "https://api.example.test/v1/chat",
            "http_version": "HTTP/1.1",
            "headers": [[b"content-type", b"application/json"], [b"x-a", b"1"]],
            "body": b"{}",
        },
        "response": {
            "status": 200,
            "reason": "OK",
            "http_version": "HTTP/1.1",
            "headers": [[b"content-type", b"text/event-stream"], [b"x-b", b"2"]],
            "head_offset_ns": 5,
            "frames": [[10, b"data: 1\n\n"], [20, b"data: 2\n\n"]],
        },
        "end": {"kind": "complete", "offset_ns": 25, "message": ""},
        "faults": ["drop:after=1"],
        "recorded_at": 1790000000.25,
    }


_MISSING = object()


def _at(path: str, value: Any = _MISSING) -> Callable[[dict[str, Any]], None]:
    """A mutation of a record: set the field at dotted ``path`` (a digit indexes a list),
    or drop it when no value is given."""

    def mutate(rec: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = rec
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        if value is _MISSING:
            del node[last]
        elif last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _pack(rec: dict[str, Any], version: int) -> bytes:
    payload: bytes = msgpack.packb(rec, use_bin_type=True)
    return records.frame(payload) if version >= 2 else payload


def _file(bad: dict[str, Any], version: int) -> tuple[bytes, int]:
    """A cassette of a good record, ``bad``, and a good record; and the offset of ``bad``."""
    head = codec.encode_header(version=version)
    good = _pack(_record(), version)
    return head + good + _pack(bad, version) + good, len(head) + len(good)


# (what is wrong, the mutation, the exact error after "interaction 1: ")
CASES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    # -- the record map
    ("no request", _at("request"), "interaction has no 'request'"),
    ("request not a map", _at("request", 5), "interaction.request has the wrong type (int)"),
    ("request nil", _at("request", None), "interaction.request has the wrong type (NoneType)"),
    ("no response", _at("response"), "interaction has no 'response'"),
    ("response a list", _at("response", [1]), "interaction.response is neither a map nor nil"),
    ("response a string", _at("response", "x"), "interaction.response is neither a map nor nil"),
    ("no end", _at("end"), "interaction has no 'end'"),
    ("end a string", _at("end", "complete"), "interaction.end has the wrong type (str)"),
    ("no faults", _at("faults"), "interaction has no 'faults'"),
    ("faults a string", _at("faults", "drop"), "interaction.faults has the wrong type (str)"),
    ("faults nil", _at("faults", None), "interaction.faults has the wrong type (NoneType)"),
    ("a fault not text", _at("faults", ["drop", 1]), "interaction.faults holds a non-string"),
    ("a fault as bytes", _at("faults", [b"drop"]), "interaction.faults holds a non-string"),
    ("a fault with CR", _at("faults", ["a", "b\rc"]), "faults[1] contains CR (header injection)"),
    ("recorded_at text", _at("recorded_at", "x"), "interaction.recorded_at is not a number"),
    ("recorded_at bool", _at("recorded_at", True), "interaction.recorded_at is not a number"),
    ("recorded_at list", _at("recorded_at", [1]), "interaction.recorded_at is not a number"),
    (
        "recorded_at NaN",
        _at("recorded_at", float("nan")),
        "recorded_at is not a finite number (nan)",
    ),
    (
        "recorded_at infinite",
        _at("recorded_at", float("-inf")),
        "recorded_at is not a finite number (-inf)",
    ),
    ("websocket not a map", _at("websocket", 5), "interaction.websocket is not a map"),
    ("websocket empty", _at("websocket", {}), "websocket.messages is not a list"),
    # -- request
    ("no method", _at("request.method"), "request has no 'method'"),
    ("method bytes", _at("request.method", b"GET"), "request.method has the wrong type (bytes)"),
    (
        "method a space",
        _at("request.method", "GE T"),
        "request.method 'GE T' is not an HTTP method",
    ),
    ("no url", _at("request.url"), "request has no 'url'"),
    ("url an int", _at("request.url", 1), "request.url has the wrong type (int)"),
    ("url with a space", _at("request.url", "http://a/ b"), "request.url contains a space"),
    ("no request version", _at("request.http_version"), "request has no 'http_version'"),
    (
        "request version nil",
        _at("request.http_version", None),
        "request.http_version has the wrong type (NoneType)",
    ),
    (
        "request version not HTTP",
        _at("request.http_version", "SPDY/3"),
        "request.http_version 'SPDY/3' is not an HTTP version (HTTP/1.1, HTTP/2.0)",
    ),
    ("no request headers", _at("request.headers"), "request has no 'headers'"),
    (
        "request headers a map",
        _at("request.headers", {"a": "b"}),
        "request.headers has the wrong type (dict)",
    ),
    (
        "request header of one",
        _at("request.headers.0", [b"a"]),
        "request.headers[0] is not a [name, value] pair of bytes",
    ),
    (
        "request header of three",
        _at("request.headers.1", [b"a", b"b", b"c"]),
        "request.headers[1] is not a [name, value] pair of bytes",
    ),
    (
        "request header name text",
        _at("request.headers.1", ["a", b"b"]),
        "request.headers[1] is not a [name, value] pair of bytes",
    ),
    (
        "request header value text",
        _at("request.headers.1", [b"a", "b"]),
        "request.headers[1] is not a [name, value] pair of bytes",
    ),
    (
        "request header not a list",
        _at("request.headers.0", b"a: b"),
        "request.headers[0] is not a [name, value] pair of bytes",
    ),
    (
        "request header value with LF",
        _at("request.headers.1", [b"a", b"b\nc"]),
        "request.headers[1].value contains LF (header injection)",
    ),
    ("no body", _at("request.body"), "request has no 'body'"),
    ("body text", _at("request.body", "{}"), "request.body has the wrong type (str)"),
    # -- response
    ("no status", _at("response.status"), "response has no 'status'"),
    ("status text", _at("response.status", "200"), "response.status has the wrong type (str)"),
    ("status a bool", _at("response.status", True), "response.status has the wrong type (bool)"),
    ("status a float", _at("response.status", 200.0), "response.status has the wrong type (float)"),
    ("status 99", _at("response.status", 99), "response.status 99 is not an HTTP status (100-599)"),
    (
        "status 600",
        _at("response.status", 600),
        "response.status 600 is not an HTTP status (100-599)",
    ),
    ("no reason", _at("response.reason"), "response has no 'reason'"),
    ("reason bytes", _at("response.reason", b"OK"), "response.reason has the wrong type (bytes)"),
    (
        "reason with LF",
        _at("response.reason", "O\nK"),
        "response.reason contains LF (header injection)",
    ),
    ("no response version", _at("response.http_version"), "response has no 'http_version'"),
    (
        "response version an int",
        _at("response.http_version", 11),
        "response.http_version has the wrong type (int)",
    ),
    ("no response headers", _at("response.headers"), "response has no 'headers'"),
    (
        "response headers nil",
        _at("response.headers", None),
        "response.headers has the wrong type (NoneType)",
    ),
    (
        "response header of one",
        _at("response.headers.1", [b"a"]),
        "response.headers[1] is not a [name, value] pair of bytes",
    ),
    (
        "response header name with ':'",
        _at("response.headers.0", [b"a:b", b"c"]),
        "response.headers[0].name contains ':'",
    ),
    ("no head offset", _at("response.head_offset_ns"), "response has no 'head_offset_ns'"),
    (
        "head offset text",
        _at("response.head_offset_ns", "5"),
        "response.head_offset_ns has the wrong type (str)",
    ),
    (
        "head offset a bool",
        _at("response.head_offset_ns", False),
        "response.head_offset_ns has the wrong type (bool)",
    ),
    (
        "head offset negative",
        _at("response.head_offset_ns", -1),
        "response.head_offset_ns is negative (-1)",
    ),
    (
        "head offset past 2**53",
        _at("response.head_offset_ns", 2**53 + 1),
        f"response.head_offset_ns is out of range ({2**53 + 1} > {2**53} ns)",
    ),
    ("no frames", _at("response.frames"), "response has no 'frames'"),
    ("frames a map", _at("response.frames", {}), "response.frames has the wrong type (dict)"),
    (
        "frame of one",
        _at("response.frames.1", [30]),
        "response.frames[1] is not [offset_ns, bytes]",
    ),
    (
        "frame of three",
        _at("response.frames.0", [1, b"a", b"b"]),
        "response.frames[0] is not [offset_ns, bytes]",
    ),
    (
        "frame offset text",
        _at("response.frames.0", ["1", b"a"]),
        "response.frames[0] is not [offset_ns, bytes]",
    ),
    (
        "frame offset a bool",
        _at("response.frames.0", [True, b"a"]),
        "response.frames[0] is not [offset_ns, bytes]",
    ),
    (
        "frame data text",
        _at("response.frames.1", [30, "a"]),
        "response.frames[1] is not [offset_ns, bytes]",
    ),
    (
        "frame not a list",
        _at("response.frames.0", b"data"),
        "response.frames[0] is not [offset_ns, bytes]",
    ),
    (
        "frame offset negative",
        _at("response.frames.0", [-3, b"a"]),
        "response.frames[0].offset_ns is negative (-3)",
    ),
    (
        "frames going backwards",
        _at("response.frames.1", [9, b"a"]),
        "response.frames[1].offset_ns goes backwards (9 after 10); offsets never decrease",
    ),
    # -- end
    ("no end kind", _at("end.kind"), "end has no 'kind'"),
    ("end kind an int", _at("end.kind", 0), "end.kind has the wrong type (int)"),
    (
        "end kind unknown",
        _at("end.kind", "exploded"),
        f"end.kind 'exploded' is not one of: {_KINDS}",
    ),
    (
        "end kind long",
        _at("end.kind", "x" * 30),
        f"end.kind {'x' * 20!r} is not one of: {_KINDS}",
    ),
    (
        "end kind upper case",
        _at("end.kind", "COMPLETE"),
        f"end.kind 'COMPLETE' is not one of: {_KINDS}",
    ),
    ("no end offset", _at("end.offset_ns"), "end has no 'offset_ns'"),
    ("end offset a float", _at("end.offset_ns", 2.5), "end.offset_ns has the wrong type (float)"),
    ("end offset negative", _at("end.offset_ns", -7), "end.offset_ns is negative (-7)"),
    ("no end message", _at("end.message"), "end has no 'message'"),
    ("end message bytes", _at("end.message", b""), "end.message has the wrong type (bytes)"),
]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_record_is_one_exact_line(
    mutate: Callable[[dict[str, Any]], None], message: str, version: int
) -> None:
    """Each broken field is an exact one-line CassetteFormatError naming the interaction's
    index, its byte offset and the field; salvage keeps the records around it."""
    bad = _record()
    mutate(bad)
    data, offset = _file(bad, version)
    with pytest.raises(CassetteFormatError) as info:
        codec.decode(data)
    error = info.value
    assert str(error) == f"cassette at byte {offset}: interaction 1: {message}"
    assert error.offset == offset
    kept = codec.salvage(data)
    assert len(kept.decoded.cassette.interactions) == 2
    assert kept.decoded.cassette.interactions[0] == kept.decoded.cassette.interactions[1]
    assert [(d.offset, d.end, d.reason) for d in kept.damage] == [
        (offset, offset + len(_pack(bad, version)), f"interaction 1: {message}")
    ]


def test_the_valid_record_loads_field_for_field() -> None:
    """The record the table breaks is valid, and every field arrives where it belongs (so each
    case above fails for its own reason)."""
    data, _ = _file(_record(), 2)
    decoded = codec.decode(data)
    assert decoded.torn_at is None and decoded.version == 2
    interactions = decoded.cassette.interactions
    assert len(interactions) == 3
    i = interactions[1]
    assert (i.request.method, i.request.url, i.request.http_version) == (
        "POST",
        "https://api.example.test/v1/chat",
        "HTTP/1.1",
    )
    assert i.request.headers == ((b"content-type", b"application/json"), (b"x-a", b"1"))
    assert i.request.body == b"{}"
    assert i.response is not None
    assert (i.response.status, i.response.reason, i.response.http_version) == (
        200,
        "OK",
        "HTTP/1.1",
    )
    assert i.response.headers == ((b"content-type", b"text/event-stream"), (b"x-b", b"2"))
    assert i.response.head_offset_ns == 5
    assert [(f.offset_ns, f.data) for f in i.response.frames] == [
        (10, b"data: 1\n\n"),
        (20, b"data: 2\n\n"),
    ]
    assert (i.end.kind, i.end.offset_ns, i.end.message) == (EndKind.COMPLETE, 25, "")
    assert i.faults == ("drop:after=1",)
    assert i.recorded_at == 1790000000.25
    assert i.websocket is None


@pytest.mark.parametrize(
    ("mutate", "check"),
    [
        (_at("response", None), lambda i: i.response is None),
        (_at("recorded_at"), lambda i: i.recorded_at is None),
        (_at("recorded_at", None), lambda i: i.recorded_at is None),
        (_at("recorded_at", 7), lambda i: i.recorded_at == 7.0 and type(i.recorded_at) is float),
        (_at("websocket", None), lambda i: i.websocket is None),
        (_at("faults", []), lambda i: i.faults == ()),
        (_at("response.frames", []), lambda i: i.response.frames == ()),
        (_at("request.headers", []), lambda i: i.request.headers == ()),
        (_at("response.frames.1", [10, b""]), lambda i: i.response.frames[1].data == b""),
        (_at("end.kind", "no_response"), lambda i: i.end.kind is EndKind.NO_RESPONSE),
    ],
    ids=[
        "response nil",
        "no recorded_at",
        "recorded_at nil",
        "recorded_at an int",
        "websocket nil",
        "no faults",
        "no frames",
        "no request headers",
        "empty frame at the same offset",
        "every end kind by name",
    ],
)
def test_what_the_format_allows_loads(
    mutate: Callable[[dict[str, Any]], None], check: Callable[[Any], bool]
) -> None:
    """Optional and empty values the format allows load as what they mean."""
    rec = copy.deepcopy(_record())
    mutate(rec)
    data, _ = _file(rec, 2)
    assert check(codec.decode(data).cassette.interactions[1])


def test_a_websocket_session_round_trips() -> None:
    """An interaction with a WebSocket session encodes it under `websocket` and decodes it
    back equal (v1 and v2)."""
    ws = WebSocketSession(
        (WsMessage(1_000, True, True, b"hi"), WsMessage(2_000, False, False, b"\x00\x01")),
        WsClose(3_000, WsCloseKind.CLOSE, 1000, "bye", True),
    )
    base = codec.decode(_file(_record(), 2)[0]).cassette.interactions[0]
    it = replace(base, websocket=ws)
    for version in (1, 2):
        record = codec.encode_interaction(it, version=version)
        payload = record[records.HEAD_SIZE :] if version >= 2 else record
        assert msgpack.unpackb(payload, raw=False)["websocket"]["close"]["reason"] == "bye"
        data = codec.encode_header(version=version) + record
        assert codec.decode(data).cassette.interactions == (it,)


def test_what_cannot_be_read_back_is_not_written() -> None:
    """Writing an interaction or a header that would not load is a one-line error naming
    what and which field."""
    base = codec.decode(_file(_record(), 2)[0]).cassette.interactions[0]
    bad = replace(base, end=replace(base.end, offset_ns=-1))
    with pytest.raises(CassetteFormatError) as info:
        codec.encode_interaction(bad)
    assert str(info.value) == "cassette: cannot write interaction: end.offset_ns is negative (-1)"
    with pytest.raises(CassetteFormatError) as info:
        codec.encode(Cassette((base,), (("k", "\udc80"),)))
    assert str(info.value) == "cassette: cannot write header: meta['k'] is not valid UTF-8 text"
    with pytest.raises(ValueError, match=r"^cannot write cassette format version 3$"):
        codec.encode_header(version=3)


# -- whole files --------------------------------------------------------------------------------

_READS = "(this replayproxy reads versions 1 and 2)"
_FOREIGN = "not a replayproxy cassette (no 'replayproxy-cassette' header)"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file, not a cassette"),
        (codec.encode_header()[:-1], "file ends inside the header record"),
        (b"\xc1", _FOREIGN),
        (msgpack.packb({"format": "other"}), _FOREIGN),
        (msgpack.packb([1, 2]), _FOREIGN),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": 7}),
            "unknown cassette format version 7 (this replayproxy reads versions 1 and 2)",
        ),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": "a" * 38}),
            f"unknown cassette format version {'a' * 38!r} {_READS}",
        ),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": "a" * 39}),
            "unknown cassette format version '" + "a" * 36 + f"... {_READS}",
        ),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": 2, "meta": {"k": 1}}),
            "header meta is not a map of strings",
        ),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": 2, "meta": {b"k": "v"}}),
            "header meta is not a map of strings",
        ),
        (
            msgpack.packb({"format": codec.FORMAT_NAME, "version": 2, "meta": [["k", "v"]]}),
            "header meta is not a map of strings",
        ),
    ],
    ids=[
        "empty",
        "torn header",
        "not msgpack",
        "another format",
        "not a map",
        "future",
        "version shown whole up to 40 characters",
        "longer version cut",
        "meta value not text",
        "meta key not text",
        "meta a list",
    ],
)  # fmt: skip
def test_a_bad_header_is_one_exact_line_at_byte_0(data: bytes, message: str) -> None:
    """What is wrong with the header record, exactly, at byte 0; salvage refuses it the same
    way (without the header nothing says how to read the rest)."""
    for read in (codec.decode, codec.salvage):
        with pytest.raises(CassetteError) as info:
            read(data)
        assert (str(info.value), info.value.offset) == (f"cassette at byte 0: {message}", 0)


def _damaged(which: int, version: int = 2) -> tuple[bytes, int, int]:
    """Three records with one byte flipped inside record ``which``; and its start and end."""
    head = codec.encode_header((("k", "v"),), version=version)
    record = _pack(_record(), version)
    data = bytearray(head + record * 3)
    start = len(head) + which * len(record)
    data[start + 40] ^= 0xFF
    return bytes(data), start, start + len(record)


def test_a_damaged_record_is_named_and_says_what_follows_it() -> None:
    """decode stops at a damaged record, naming its index, its offset, why, and whether intact
    records follow it (so `cassette repair` is worth running)."""
    tail = "; `replayproxy cassette repair` keeps every intact record"
    data, start, _ = _damaged(1)
    with pytest.raises(CassetteFormatError) as info:
        codec.decode(data)
    assert str(info.value) == (
        f"cassette at byte {start}: damaged record (interaction 1): record bytes fail their "
        f"CRC-32 check; intact records follow it{tail}"
    )
    data, start, _ = _damaged(2)
    with pytest.raises(CassetteFormatError) as info:
        codec.decode(data)
    assert str(info.value) == (
        f"cassette at byte {start}: damaged record (interaction 2): record bytes fail their "
        f"CRC-32 check; nothing intact follows it{tail}"
    )


@pytest.mark.parametrize("version", [1, 2])
def test_salvage_keeps_every_intact_record_and_says_what_it_stepped_over(version: int) -> None:
    """salvage keeps the header's meta and version and the intact records, and lists the
    damaged bytes with the reason; a torn tail is reported as such, not as damage."""
    good = codec.decode(_file(_record(), version)[0]).cassette.interactions[0]
    data, start, end = _damaged(1, version)
    kept = codec.salvage(data)
    assert kept.decoded == codec.Decoded(Cassette((good, good), (("k", "v"),)), None, version)
    reason = (
        "record bytes fail their CRC-32 check"
        if version == 2  # v1 has no checksum: the flipped byte is found by its effect
        else "corrupt record ('utf-8' codec can't decode byte 0x8a in position 0: invalid "
        "start byte)"
    )
    assert kept.damage == (codec.Damage(start, end, reason),)
    whole, second = _file(_record(), version)
    third = second + len(_pack(_record(), version))
    torn = codec.salvage(whole[:-3])
    assert torn.decoded == codec.Decoded(Cassette((good, good), ()), third, version)
    assert torn.damage == ()


@pytest.mark.parametrize("version", [1, 2])
def test_a_torn_tail_keeps_the_header_and_the_records_before_it(version: int) -> None:
    """decode of a file whose last record is cut short: the header's meta and version, every
    record before it, and where the torn tail began."""
    head = codec.encode_header((("k", "v"),), version=version)
    record = _pack(_record(), version)
    decoded = codec.decode((head + record * 2)[:-1])
    good = codec.decode(_file(_record(), version)[0]).cassette.interactions[0]
    assert decoded == codec.Decoded(
        Cassette((good,), (("k", "v"),)), len(head) + len(record), version
    )


def test_a_header_without_meta_loads_with_none() -> None:
    """`meta` is optional in the header: without it the cassette has no meta."""
    data = msgpack.packb({"format": codec.FORMAT_NAME, "version": 2})
    assert codec.decode(data) == codec.Decoded(Cassette((), ()), None, 2)
