"""Cassette <-> bytes: the msgpack codec for cassette format v1 (see docs/cassette-format.md).

A cassette file is a *stream* of msgpack objects, not one object, so that a recorder can append
one interaction at a time and a crash loses at most the interaction being written:

    header record   {"format": "replayproxy-cassette", "version": 1, "meta": {...}}
    record          {"type": "interaction", ...}      (zero or more, in recorded order)

Decoding never raises anything but :class:`CassetteError` subclasses. A final record that
stops mid-object (a torn tail) is not an error: it is reported in :attr:`Decoded.torn_at` and
everything before it is kept. Bytes are never re-encoded: frame data goes to msgpack ``bin``
as is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from replayproxy.core.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
)
from replayproxy.errors import CassetteFormatError, CassetteVersionError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Decoded",
    "decode",
    "encode",
    "encode_header",
    "encode_interaction",
]

FORMAT_NAME = "replayproxy-cassette"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded cassette, and where a torn tail began (``None`` if the file ended cleanly)."""

    cassette: Cassette
    torn_at: int | None = None


# -- encoding ------------------------------------------------------------------------------


def _pack(obj: object) -> bytes:
    # use_bin_type: bytes -> bin, str -> str; the distinction is part of the format.
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def encode_header(meta: Iterable[tuple[str, str]] = ()) -> bytes:
    """The header record that starts every cassette file."""
    return _pack({"format": FORMAT_NAME, "version": FORMAT_VERSION, "meta": dict(meta)})


def _headers_out(headers: tuple[Header, ...]) -> list[list[bytes]]:
    return [[k, v] for k, v in headers]


def encode_interaction(interaction: Interaction) -> bytes:
    """One interaction record, ready to append to a cassette file."""
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
    return _pack(record)


def encode(cassette: Cassette) -> bytes:
    """A whole cassette file."""
    parts = [encode_header(cassette.meta)]
    parts.extend(encode_interaction(i) for i in cassette.interactions)
    return b"".join(parts)


# -- decoding ------------------------------------------------------------------------------


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
    if not isinstance(value, list):
        raise _Bad(f"{where} is not a list")
    out: list[Header] = []
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], bytes)
            or not isinstance(pair[1], bytes)
        ):
            raise _Bad(f"{where} holds an entry that is not a [name, value] pair of bytes")
        out.append((pair[0], pair[1]))
    return tuple(out)


def _interaction_v1(rec: Mapping[str, Any]) -> Interaction:
    rq = _get(rec, "request", dict, "interaction")
    request = Request(
        method=_get(rq, "method", str, "request"),
        url=_get(rq, "url", str, "request"),
        http_version=_get(rq, "http_version", str, "request"),
        headers=_headers_in(_get(rq, "headers", list, "request"), "request.headers"),
        body=_get(rq, "body", bytes, "request"),
    )
    rs = rec.get("response")
    response: Response | None = None
    if rs is not None:
        if not isinstance(rs, dict):
            raise _Bad("interaction.response is neither a map nor nil")
        frames: list[Frame] = []
        for f in _get(rs, "frames", list, "response"):
            if (
                not isinstance(f, list)
                or len(f) != 2
                or not isinstance(f[0], int)
                or not isinstance(f[1], bytes)
            ):
                raise _Bad("response.frames holds an entry that is not [offset_ns, bytes]")
            frames.append(Frame(f[0], f[1]))
        response = Response(
            status=_get(rs, "status", int, "response"),
            reason=_get(rs, "reason", str, "response"),
            http_version=_get(rs, "http_version", str, "response"),
            headers=_headers_in(_get(rs, "headers", list, "response"), "response.headers"),
            head_offset_ns=_get(rs, "head_offset_ns", int, "response"),
            frames=tuple(frames),
        )
    en = _get(rec, "end", dict, "interaction")
    kind_s = _get(en, "kind", str, "end")
    try:
        kind = EndKind(kind_s)
    except ValueError:
        valid = ", ".join(k.value for k in EndKind)
        raise _Bad(f"end.kind {kind_s!r} is not one of: {valid}") from None
    end = Ending(kind, _get(en, "offset_ns", int, "end"), _get(en, "message", str, "end"))
    faults = _get(rec, "faults", list, "interaction")
    if not all(isinstance(s, str) for s in faults):
        raise _Bad("interaction.faults holds a non-string")
    recorded_at = rec.get("recorded_at")
    if recorded_at is not None and not isinstance(recorded_at, int | float):
        raise _Bad("interaction.recorded_at is not a number")
    return Interaction(
        request=request,
        response=response,
        end=end,
        faults=tuple(faults),
        recorded_at=None if recorded_at is None else float(recorded_at),
    )


# One decoder per version. A future v2 adds its reader here; older readers stay, so old
# cassettes keep loading (decoding migrates them to the current model).
_RECORD_DECODERS: dict[int, Callable[[Mapping[str, Any]], Interaction]] = {1: _interaction_v1}


def decode(data: bytes) -> Decoded:
    """Decode a cassette file's bytes. Raises CassetteFormatError / CassetteVersionError."""
    if not data:
        raise CassetteFormatError("empty file, not a cassette", offset=0)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True, max_buffer_size=0)
    unpacker.feed(data)

    def next_record(offset: int) -> Any:
        try:
            return unpacker.unpack()
        except msgpack.OutOfData:
            raise
        except (ValueError, TypeError, msgpack.UnpackException, UnicodeDecodeError) as e:
            raise CassetteFormatError(f"corrupt record ({e})", offset=offset) from None

    try:
        head = next_record(0)
    except msgpack.OutOfData:
        raise CassetteFormatError("file ends inside the header record", offset=0) from None
    if not isinstance(head, dict) or head.get("format") != FORMAT_NAME:
        raise CassetteFormatError(
            f"not a replayproxy cassette (no {FORMAT_NAME!r} header)", offset=0
        )
    version = head.get("version")
    # Exactly an int: True and 1.0 hash like 1, and a list is unhashable.
    if type(version) is not int or version not in _RECORD_DECODERS:
        readable = ", ".join(str(v) for v in sorted(_RECORD_DECODERS))
        raise CassetteVersionError(
            f"unknown cassette format version {version!r} "
            f"(this replayproxy reads version {readable})",
            offset=0,
        )
    meta_raw = head.get("meta", {})
    if not isinstance(meta_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta_raw.items()
    ):
        raise CassetteFormatError("header meta is not a map of strings", offset=0)
    decode_record = _RECORD_DECODERS[version]

    interactions: list[Interaction] = []
    offset = unpacker.tell()
    while offset < len(data):
        try:
            rec = next_record(offset)
        except msgpack.OutOfData:
            # The last record stops mid-object: the writer died while appending it.
            return Decoded(Cassette(tuple(interactions), tuple(meta_raw.items())), torn_at=offset)
        if not isinstance(rec, dict) or rec.get("type") != "interaction":
            raise CassetteFormatError("corrupt record (not an interaction map)", offset=offset)
        try:
            interactions.append(decode_record(rec))
        except _Bad as e:
            raise CassetteFormatError(f"corrupt record: {e}", offset=offset) from None
        offset = unpacker.tell()
    return Decoded(Cassette(tuple(interactions), tuple(meta_raw.items())))
