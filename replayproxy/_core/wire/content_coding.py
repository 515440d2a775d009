"""Content-encoded response bodies, decoded incrementally (for the checker and the redaction).

A recorded frame holds the bytes as they crossed the wire, content-encoding untouched (the
cassette format never re-encodes). An application endpoint behind gzip middleware therefore
records gzip bytes, and checking them as SSE reports invalid UTF-8 and a missing terminal
event instead of the real problem. :class:`BodyDecoder` undoes ``Content-Encoding`` (RFC 9110
§8.4: codings are listed in the order they were applied, so they are undone in reverse) one
frame at a time: any split of the encoded body yields the same decoded bytes, as zlib, Brotli
and zstd decompressors all keep their state between calls.

Codings: ``gzip`` (and its alias ``x-gzip``), ``deflate`` (the zlib format of RFC 1950, and the
raw RFC 1951 stream some servers send, which browsers and httpx accept too), ``br`` (the
``brotli`` module, installed with mitmproxy) and ``zstd`` (the ``zstandard`` module that
mitmproxy 11 installs, or the ``backports.zstd`` one that mitmproxy 12 installs instead, or
Python 3.14's ``compression.zstd``). ``identity`` is no coding. Anything else, or a module that
is not installed, is named by :func:`unsupported`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec
from typing import Any, Protocol

from replayproxy._errors import UsageError

__all__ = ["BodyDecoder", "DecodeError", "encodings", "unsupported"]

_ALIASES = {"x-gzip": "gzip"}
# Codings that need an optional module: any one of these.
_MODULES = {"br": ("brotli",), "zstd": ("zstandard", "compression.zstd", "backports.zstd")}


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package of a dotted name is missing
        return False


class DecodeError(ValueError):
    """The body is not valid data of its content coding (the message says which and why)."""


def encodings(value: str | None) -> tuple[str, ...]:
    """The codings of a ``Content-Encoding`` value, in the order they were applied
    (lower-cased, aliases resolved, ``identity`` and empty entries dropped)."""
    if not value:
        return ()
    out = []
    for token in value.split(","):
        coding = token.strip().lower()
        if coding and coding != "identity":
            out.append(_ALIASES.get(coding, coding))
    return tuple(out)


def unsupported(value: str | None) -> str | None:
    """Why a body of this ``Content-Encoding`` cannot be decoded here, or ``None``."""
    for coding in encodings(value):
        if coding not in ("gzip", "deflate", "br", "zstd"):
            return (
                f"content-encoding {coding!r} is not one the checker can decode "
                "(gzip, deflate, br, zstd)"
            )
        modules = _MODULES.get(coding, ())
        if modules and not any(_installed(m) for m in modules):
            return (
                f"content-encoding {coding!r} needs the {modules[0]!r} module, which is not "
                f"installed (pip install {modules[0]})"
            )
    return None


class _Stage(Protocol):
    def feed(self, data: bytes) -> bytes: ...
    def close(self) -> bytes: ...
    @property
    def finished(self) -> bool: ...


class _Zlib:
    """gzip (``wbits=31``) or deflate; a second gzip member after the first is decoded too."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._obj: Any = zlib.decompressobj(31) if coding == "gzip" else None
        self._head = b""  # deflate: bytes held until the zlib header can be told from raw

    def _deflate(self, data: bytes) -> bytes:
        self._head += data
        if len(self._head) < 2:
            return b""
        cmf, flg = self._head[0], self._head[1]
        # RFC 1950 §2.2: CM = 8 and the 16-bit header a multiple of 31; otherwise a raw stream.
        wrapped = cmf & 0x0F == 8 and (cmf * 256 + flg) % 31 == 0
        self._obj = zlib.decompressobj(15 if wrapped else -15)
        data, self._head = self._head, b""
        return self._run(data)

    def _run(self, data: bytes) -> bytes:
        try:
            out = self._obj.decompress(data)
            while self._obj.eof and self._obj.unused_data and self.coding == "gzip":
                rest = self._obj.unused_data
                self._obj = zlib.decompressobj(31)
                out += self._obj.decompress(rest)
        except zlib.error as e:
            raise DecodeError(f"{self.coding} data does not decode ({e})") from None
        return bytes(out)

    def feed(self, data: bytes) -> bytes:
        if self._obj is None:
            return self._deflate(data)
        return self._run(data)

    def close(self) -> bytes:
        if self._obj is None:
            return b""
        try:
            return bytes(self._obj.flush())
        except zlib.error as e:
            raise DecodeError(f"{self.coding} data does not decode ({e})") from None

    @property
    def finished(self) -> bool:
        return self._obj is not None and bool(self._obj.eof)


class _Brotli:
    def __init__(self) -> None:
        import brotli  # type: ignore[import-untyped]  # optional, installed with mitmproxy

        self._error: type[Exception] = brotli.error
        self._obj: Any = brotli.Decompressor()

    def feed(self, data: bytes) -> bytes:
        try:
            return bytes(self._obj.process(data))
        except self._error as e:
            raise DecodeError(f"br data does not decode ({e})") from None

    def close(self) -> bytes:
        return b""

    @property
    def finished(self) -> bool:
        return bool(self._obj.is_finished())


class _Zstd:
    """zstd; a frame after the first (RFC 8878 allows several) is decoded too."""

    def __init__(self) -> None:
        self._new: Callable[[], Any]
        if _installed("zstandard"):  # mitmproxy 11
            zstandard: Any = import_module("zstandard")
            self._error: type[Exception] = zstandard.ZstdError
            self._new = lambda: zstandard.ZstdDecompressor().decompressobj()
        else:  # mitmproxy 12 installs backports.zstd, PEP 784's module before Python 3.14
            name = "compression.zstd" if _installed("compression.zstd") else "backports.zstd"
            zstd: Any = import_module(name)
            self._error = zstd.ZstdError
            self._new = zstd.ZstdDecompressor  # already a decompressobj (eof, unused_data)
        self._obj = self._new()

    def feed(self, data: bytes) -> bytes:
        out = b""
        try:
            while data:
                if self._obj.eof:  # a finished decompressobj takes no more input
                    self._obj = self._new()
                out += self._obj.decompress(data)
                data = self._obj.unused_data if self._obj.eof else b""
        except self._error as e:
            raise DecodeError(f"zstd data does not decode ({e})") from None
        return out

    def close(self) -> bytes:
        return b""

    @property
    def finished(self) -> bool:
        return bool(self._obj.eof)


_STAGES: dict[str, Callable[[], _Stage]] = {
    "gzip": lambda: _Zlib("gzip"),
    "deflate": lambda: _Zlib("deflate"),
    "br": _Brotli,
    "zstd": _Zstd,
}


class BodyDecoder:
    """Undo a ``Content-Encoding`` incrementally: ``feed`` encoded bytes (any split), get the
    decoded bytes they complete; ``close`` at the end of the body. Raises :class:`UsageError`
    for a coding that cannot be decoded here (see :func:`unsupported`) and
    :class:`DecodeError` for bytes that are not valid data of their coding."""

    def __init__(self, content_encoding: str) -> None:
        reason = unsupported(content_encoding)
        if reason is not None:
            raise UsageError(reason)
        self.codings = encodings(content_encoding)
        # Applied in header order, so undone last-applied first.
        self._stages = [_STAGES[c]() for c in reversed(self.codings)]

    def feed(self, data: bytes) -> bytes:
        for stage in self._stages:
            data = stage.feed(data)
        return data

    def close(self) -> bytes:
        """The decoded bytes still held (zlib's flush), passed through the later stages."""
        out = b""
        for stage in self._stages:
            out = (stage.feed(out) if out else b"") + stage.close()
        return out

    @property
    def complete(self) -> bool:
        """Whether every coding reached its end marker (a cut body has not)."""
        return all(stage.finished for stage in self._stages)
