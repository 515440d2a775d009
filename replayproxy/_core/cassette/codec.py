"""Cassette <-> bytes: the msgpack codec for cassette format v2 and v1
(docs/reference/cassette-format.md).

A cassette file is a *stream* of msgpack objects, not one object, so that a recorder can append
one interaction at a time and a crash loses at most the interaction being written:

    header record   {"format": "replayproxy-cassette", "version": 2, "meta": {...}}
    record          {"type": "interaction", ...}      (zero or more, in recorded order)

Version 2 wraps each record in a frame with CRC-32 checks
(:mod:`replayproxy._core.cassette.records`); version 1 files stay readable, and records appended to
one stay version 1. Every decoded record goes through the type checks here and the range checks of
:mod:`replayproxy._core.cassette.validate`.

Decoding never raises anything but :class:`CassetteError` subclasses. A final record that
stops mid-object (a torn tail) is not an error: it is reported in :attr:`Decoded.torn_at` and
everything before it is kept. Damage anywhere else is an error for :func:`decode`, and is
stepped over by :func:`salvage`, which keeps every intact record. Bytes are never re-encoded:
frame data goes to msgpack ``bin`` as is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from replayproxy._core.cassette import records, validate
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.websocket import WsFormatError, decode_session, encode_session
from replayproxy._errors import CassetteFormatError, CassetteVersionError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "READABLE_VERSIONS",
    "Damage",
    "Decoded",
    "Salvaged",
    "decode",
    "encode",
    "encode_header",
    "encode_interaction",
    "salvage",
]

FORMAT_NAME = "replayproxy-cassette"
FORMAT_VERSION = 2
"""The version written to new files."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded cassette, where a torn tail began (``None`` if the file ended cleanly), and
    the file's format version (appends to a file keep its version)."""

    cassette: Cassette
    torn_at: int | None = None
    version: int = FORMAT_VERSION


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes ``offset``..``end`` held no intact record (``reason`` says what was wrong)."""

    offset: int
    end: int
    reason: str


@dataclass(frozen=True, slots=True)
class Salvaged:
    """What :func:`salvage` kept: every intact record, and what it stepped over."""

    decoded: Decoded
    damage: tuple[Damage, ...]


# -- encoding ------------------------------------------------------------------------------


def _pack(obj: object) -> bytes:
    # use_bin_type: bytes -> bin, str -> str; the distinction is part of the format.
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def _check_version(version: int) -> None:
    if version not in _RECORD_DECODERS:
        raise ValueError(f"cannot write cassette format version {version!r}")


def encode_header(meta: Iterable[tuple[str, str]] = (), *, version: int = FORMAT_VERSION) -> bytes:
    """The header record that starts every cassette file."""
    _check_version(version)
    return _pack({"format": FORMAT_NAME, "version": version, "meta": dict(meta)})


def _headers_out(headers: tuple[Header, ...]) -> list[list[bytes]]:
    return [[k, v] for k, v in headers]


def encode_interaction(interaction: Interaction, *, version: int = FORMAT_VERSION) -> bytes:
    """One interaction record, ready to append to a file of format ``version``.

    The interaction is checked first (:func:`validate.check_interaction`): what is written can
    always be read back. A problem is a one-line :class:`CassetteFormatError`.
    """
    _check_version(version)
    try:
        validate.check_interaction(interaction)
    except validate.InvalidField as e:
        raise CassetteFormatError(f"cannot write interaction: {e}") from None
    req = interaction.request
    resp = interaction.response
    end = interaction.end
    record: dict[str, Any] = {
        "type": "interaction",
        "request": {
            "method": req.method,
            "url": req.url,
            "http_version": req.http_version,
            "headers": _headers_out(req.headers),
            "body": req.body,
        },
        "response": None
        if resp is None
        else {
            "status": resp.status,
            "reason": resp.reason,
            "http_version": resp.http_version,
            "headers": _headers_out(resp.headers),
            "head_offset_ns": resp.head_offset_ns,
            "frames": [[f.offset_ns, f.data] for f in resp.frames],
        },
        "end": {"kind": end.kind.value, "offset_ns": end.offset_ns, "message": end.message},
        "faults": list(interaction.faults),
    }
    if interaction.recorded_at is not None:
        record["recorded_at"] = interaction.recorded_at
    if interaction.websocket is not None:
        record["websocket"] = encode_session(interaction.websocket)
    payload = _pack(record)
    return records.frame(payload) if version >= 2 else payload


def encode(cassette: Cassette, *, version: int = FORMAT_VERSION) -> bytes:
    """A whole cassette file."""
    try:
        validate.check_meta(cassette.meta)
    except validate.InvalidField as e:
        raise CassetteFormatError(f"cannot write header: {e}") from None
    parts = [encode_header(cassette.meta, version=version)]
    parts.extend(encode_interaction(i, version=version) for i in cassette.interactions)
    return b"".join(parts)


# -- decoding one record: type checks ----------------------------------------------------------


class _Bad(Exception):
    """Structural problem inside one record; turned into CassetteFormatError with an offset."""


def _get(m: Mapping[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if key not in m:
        raise _Bad(f"{where} has no {key!r}")
    value = m[key]
    # bool is an int subclass; a bool where an int belongs is still a structural error.
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is int):
        raise _Bad(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def _headers_in(value: Any, where: str) -> tuple[Header, ...]:
    out: list[Header] = []
    for i, pair in enumerate(value):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], bytes)
            or not isinstance(pair[1], bytes)
        ):
            raise _Bad(f"{where}[{i}] is not a [name, value] pair of bytes")
        out.append((pair[0], pair[1]))
    return tuple(out)


def _request_v1(rq: Mapping[str, Any]) -> Request:
    return Request(
        method=_get(rq, "method", str, "request"),
        url=_get(rq, "url", str, "request"),
        http_version=_get(rq, "http_version", str, "request"),
        headers=_headers_in(_get(rq, "headers", list, "request"), "request.headers"),
        body=_get(rq, "body", bytes, "request"),
    )


def _frames_v1(value: list[Any]) -> tuple[Frame, ...]:
    frames: list[Frame] = []
    for i, f in enumerate(value):
        if (
            not isinstance(f, list)
            or len(f) != 2
            or not isinstance(f[0], int)
            or isinstance(f[0], bool)
            or not isinstance(f[1], bytes)
        ):
            raise _Bad(f"response.frames[{i}] is not [offset_ns, bytes]")
        frames.append(Frame(f[0], f[1]))
    return tuple(frames)


def _response_v1(rec: Mapping[str, Any]) -> Response | None:
    # Required, but nil when no response head arrived (end.kind no_response).
    if "response" not in rec:
        raise _Bad("interaction has no 'response'")
    rs = rec["response"]
    if rs is None:
        return None
    if not isinstance(rs, dict):
        raise _Bad("interaction.response is neither a map nor nil")
    return Response(
        status=_get(rs, "status", int, "response"),
        reason=_get(rs, "reason", str, "response"),
        http_version=_get(rs, "http_version", str, "response"),
        headers=_headers_in(_get(rs, "headers", list, "response"), "response.headers"),
        head_offset_ns=_get(rs, "head_offset_ns", int, "response"),
        frames=_frames_v1(_get(rs, "frames", list, "response")),
    )


def _end_v1(en: Mapping[str, Any]) -> Ending:
    kind_s = _get(en, "kind", str, "end")
    try:
        kind = EndKind(kind_s)
    except ValueError:
        valid = ", ".join(k.value for k in EndKind)
        raise _Bad(f"end.kind {kind_s[:20]!r} is not one of: {valid}") from None
    return Ending(kind, _get(en, "offset_ns", int, "end"), _get(en, "message", str, "end"))


def _interaction_v1(rec: Mapping[str, Any]) -> Interaction:
    request = _request_v1(_get(rec, "request", dict, "interaction"))
    response = _response_v1(rec)
    end = _end_v1(_get(rec, "end", dict, "interaction"))
    faults = _get(rec, "faults", list, "interaction")
    if not all(isinstance(s, str) for s in faults):
        raise _Bad("interaction.faults holds a non-string")
    recorded_at = rec.get("recorded_at")
    if recorded_at is not None and (
        isinstance(recorded_at, bool) or not isinstance(recorded_at, int | float)
    ):
        raise _Bad("interaction.recorded_at is not a number")
    # msgpack ints stop at 2**64, far inside float range: float() cannot overflow here.
    at = None if recorded_at is None else float(recorded_at)
    websocket = None
    if rec.get("websocket") is not None:
        try:
            websocket = decode_session(rec["websocket"])
        except WsFormatError as e:
            raise _Bad(str(e)) from None
    return Interaction(
        request=request,
        response=response,
        end=end,
        faults=tuple(faults),
        recorded_at=at,
        websocket=websocket,
    )


_Splitter = Callable[[bytes, int], Iterator[records.Piece]]

# One decoder per version: how the file splits into records, and how a record map becomes an
# Interaction. A v2 record's payload is exactly a v1 record map; v2 adds the checked frame.
# A future version adds its pair here; older ones stay, so old cassettes keep loading.
_RECORD_DECODERS: dict[int, Callable[[Mapping[str, Any]], Interaction]] = {
    1: _interaction_v1,
    2: _interaction_v1,
}
_SPLITTERS: dict[int, _Splitter] = {1: records.split_v1, 2: records.split_v2}
READABLE_VERSIONS = tuple(sorted(_RECORD_DECODERS))


def _record(version: int, index: int, piece: records.Record) -> Interaction:
    """One record map -> a checked Interaction, or CassetteFormatError naming it."""
    where = f"interaction {index}"
    try:
        interaction = _RECORD_DECODERS[version](piece.value)
        validate.check_interaction(interaction)
    except (_Bad, validate.InvalidField) as e:
        raise CassetteFormatError(f"{where}: {e}", offset=piece.offset) from None
    return interaction


# -- decoding the file ---------------------------------------------------------------------------


def _header(data: bytes) -> tuple[int, tuple[tuple[str, str], ...], int]:
    """(version, meta, offset after the header record), or a one-line error at byte 0."""
    if not data:
        raise CassetteFormatError("empty file, not a cassette", offset=0)
    try:
        head, end = records.unpack_one(data)
    except msgpack.OutOfData:
        raise CassetteFormatError("file ends inside the header record", offset=0) from None
    except ValueError:
        head, end = None, 0
    if not isinstance(head, dict) or head.get("format") != FORMAT_NAME:
        raise CassetteFormatError(
            f"not a replayproxy cassette (no {FORMAT_NAME!r} header)", offset=0
        )
    version = head.get("version")
    # Exactly an int: True and 1.0 hash like 1, and a list is unhashable.
    if type(version) is not int or version not in _SPLITTERS:
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        shown = repr(version) if len(repr(version)) <= 40 else repr(version)[:37] + "..."
        raise CassetteVersionError(
            f"unknown cassette format version {shown} (this replayproxy reads versions {readable})",
            offset=0,
        )
    meta_raw = head.get("meta", {})
    if not isinstance(meta_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta_raw.items()
    ):
        raise CassetteFormatError("header meta is not a map of strings", offset=0)
    meta = tuple(meta_raw.items())
    try:
        validate.check_meta(meta)
    except validate.InvalidField as e:
        raise CassetteFormatError(f"header {e}", offset=0) from None
    return version, meta, end


def _damage_message(piece: records.Damaged, index: int, size: int) -> str:
    after = "intact records follow it" if piece.resume_at < size else "nothing intact follows it"
    return (
        f"damaged record (interaction {index}): {piece.reason}; {after}; "
        f"`replayproxy cassette repair` keeps every intact record"
    )


def decode(data: bytes) -> Decoded:
    """Decode a cassette file's bytes. Raises CassetteFormatError / CassetteVersionError.

    A torn tail is reported in the result; damage anywhere else is an error naming its offset.
    """
    version, meta, start = _header(data)
    interactions: list[Interaction] = []
    for piece in _SPLITTERS[version](data, start):
        if isinstance(piece, records.Torn):
            return Decoded(Cassette(tuple(interactions), meta), piece.offset, version)
        if isinstance(piece, records.Damaged):
            message = _damage_message(piece, len(interactions), len(data))
            raise CassetteFormatError(message, offset=piece.offset)
        interactions.append(_record(version, len(interactions), piece))
    return Decoded(Cassette(tuple(interactions), meta), None, version)


def salvage(data: bytes) -> Salvaged:
    """Every intact, valid record of a damaged file, and the byte ranges stepped over.

    The header must be intact (without it nothing says how to read the rest). A record whose
    frame is intact but whose content breaks a rule counts as damage too.
    """
    version, meta, start = _header(data)
    interactions: list[Interaction] = []
    damage: list[Damage] = []
    torn_at = None
    for piece in _SPLITTERS[version](data, start):
        if isinstance(piece, records.Torn):
            torn_at = piece.offset
        elif isinstance(piece, records.Damaged):
            damage.append(Damage(piece.offset, piece.resume_at, piece.reason))
        else:
            try:
                interactions.append(_record(version, len(interactions), piece))
            except CassetteFormatError as e:
                damage.append(Damage(piece.offset, piece.end, e.reason))
    decoded = Decoded(Cassette(tuple(interactions), meta), torn_at, version)
    return Salvaged(decoded, tuple(damage))
