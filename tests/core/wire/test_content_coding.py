"""Content-Encoding undone incrementally: every coding decodes, any split of the encoded bytes
gives the same decoded bytes, bad data and unknown codings are named."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.wire import content_coding as decoding
from replayproxy._core.wire.content_coding import BodyDecoder, DecodeError, encodings, unsupported
from replayproxy._errors import UsageError

BODY = "".join(f'event: delta\ndata: {{"n":{i},"text":"wörd {i}"}}\n\n' for i in range(40)).encode()


def _deflate(data: bytes, wbits: int) -> bytes:
    c = zlib.compressobj(wbits=wbits)
    return c.compress(data) + c.flush()


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return bytes(zstandard.ZstdCompressor().compress(data))


ENCODED = {
    "gzip": lambda b: gzip.compress(b),
    "x-gzip": lambda b: gzip.compress(b),
    "deflate": lambda b: _deflate(b, 15),
    "deflate (raw)": lambda b: _deflate(b, -15),
    "br": lambda b: bytes(brotli.compress(b)),
    "zstd": _zstd,
    "gzip, br": lambda b: bytes(brotli.compress(gzip.compress(b))),
    "identity": lambda b: b,
}


def _header(name: str) -> str:
    return name.removesuffix(" (raw)")


def _decode(name: str, chunks: list[bytes]) -> tuple[bytes, bool]:
    decoder = BodyDecoder(_header(name))
    out = b"".join(decoder.feed(c) for c in chunks) + decoder.close()
    return out, decoder.complete


@pytest.mark.parametrize("name", sorted(ENCODED))
def test_each_coding_decodes_whole_and_byte_by_byte(name: str) -> None:
    """The whole encoded body, and the same body one byte at a time, decode to the original."""
    encoded = ENCODED[name](BODY)
    assert _decode(name, [encoded]) == (BODY, True)
    assert _decode(name, [encoded[i : i + 1] for i in range(len(encoded))]) == (BODY, True)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(ENCODED)), cuts=st.lists(st.integers(0, 10_000), max_size=30))
def test_any_split_decodes_to_the_same_bytes(name: str, cuts: list[int]) -> None:
    """Property: any split of the encoded bytes decodes to the original body."""
    encoded = ENCODED[name](BODY)
    points = sorted({c % (len(encoded) + 1) for c in cuts})
    chunks = [encoded[a:b] for a, b in zip([0, *points], [*points, len(encoded)], strict=True)]
    assert _decode(name, chunks) == (BODY, True)


@pytest.mark.parametrize("name", ["gzip", "zstd"])
def test_two_members_decode_as_one_body_at_every_cut(name: str) -> None:
    """A second gzip member or zstd frame after the first (a compressor restarted) is decoded
    too, wherever the frames split the bytes."""
    encoded = ENCODED[name](BODY[:100]) + ENCODED[name](BODY[100:])
    for cut in range(0, len(encoded) + 1, 7):
        assert _decode(name, [encoded[:cut], encoded[cut:]]) == (BODY, True)


def test_a_cut_body_decodes_its_prefix_and_is_not_complete() -> None:
    """A body cut before the coding's end marker yields what it holds, and says it is cut."""
    encoded = gzip.compress(BODY)
    out, complete = _decode("gzip", [encoded[: len(encoded) // 2]])
    assert BODY.startswith(out) and 0 < len(out) < len(BODY) and not complete


@pytest.mark.parametrize("name", ["gzip", "deflate", "br"])
def test_bad_data_is_a_decode_error_naming_the_coding(name: str) -> None:
    """Bytes that are not data of their coding raise DecodeError naming the coding."""
    with pytest.raises(DecodeError, match=f"^{name} data does not decode"):
        _decode(name, [b"\x00\x01\x02\x03 this is not compressed at all" * 3])


def test_encodings_lists_the_codings_in_applied_order() -> None:
    """The header's codings, lower-cased, aliases resolved, identity dropped."""
    assert encodings("GZIP, identity ,br") == ("gzip", "br")
    assert encodings("x-gzip") == ("gzip",)
    assert encodings(None) == encodings("") == encodings("identity") == ()


def test_unknown_codings_and_missing_modules_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``compress`` cannot be decoded; zstd without the zstandard module says how to get it."""
    assert unsupported("gzip, br") is None
    assert "'compress' is not one the checker can decode" in (unsupported("compress") or "")
    with pytest.raises(UsageError, match="'compress'"):
        BodyDecoder("compress")
    real = decoding.find_spec
    monkeypatch.setattr(  # none of the modules that decode zstd (mitmproxy 11's or 12's)
        decoding, "find_spec", lambda name: None if "zst" in name else real(name)
    )
    assert unsupported("zstd") == (
        "content-encoding 'zstd' needs the 'zstandard' module, which is not installed "
        "(pip install zstandard)"
    )
