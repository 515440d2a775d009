"""engine/http1_reader.py, property-tested: a head reads the same with CRLF or bare-LF line
ends, fed at once or split anywhere; Content-Length values that agree are one length, any that
differ are a 400; only ``chunked`` alone is a transfer coding it reads."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Request
from replayproxy._engine.http1_reader import MAX_HEAD, BadRequest, read_request


async def _feed(pieces: list[bytes]) -> Request | BadRequest | None:
    """Read one request while ``pieces`` arrive one loop turn apart (then EOF)."""
    reader = asyncio.StreamReader(limit=MAX_HEAD)
    task = asyncio.create_task(read_request(reader, _NullWriter()))  # type: ignore[arg-type]
    for piece in pieces:
        await asyncio.sleep(0)
        reader.feed_data(piece)
    await asyncio.sleep(0)
    reader.feed_eof()
    try:
        return await task
    except BadRequest as e:
        return e


class _NullWriter:
    def write(self, data: bytes) -> None:
        pass


def _splits(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12).filter(
    lambda n: n not in ("content-length", "transfer-encoding", "expect")
)
_values = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 /.=", max_size=20).map(str.strip)


@given(
    st.lists(st.tuples(_names, _values), max_size=6),
    st.binary(max_size=40),
    st.lists(st.integers(min_value=0), max_size=5),
    st.booleans(),
)
def test_crlf_and_bare_lf_heads_read_the_same_at_any_split(
    headers: list[tuple[str, str]], body: bytes, cuts: list[int], bare_lf: bool
) -> None:
    """The Request read is the same for either line end, whatever the reads' boundaries."""
    end = "\n" if bare_lf else "\r\n"
    lines = ["POST /v1/x?a=1 HTTP/1.1", "host: h", *(f"{k}: {v}" for k, v in headers)]
    lines.append(f"content-length: {len(body)}")
    data = (end.join(lines) + end + end).encode() + body
    got = asyncio.run(_feed(_splits(data, cuts)))
    assert isinstance(got, Request), got
    assert (got.method, got.url, got.body) == ("POST", "http://h/v1/x?a=1", body)
    assert got.headers[1:-1] == tuple((k.encode(), v.encode()) for k, v in headers)


@given(st.lists(st.integers(min_value=0, max_value=99), min_size=1, max_size=4))
def test_content_length_values_must_agree(lengths: list[int]) -> None:
    """Several Content-Length headers: one length if they agree, else a 400 naming them."""
    head = "".join(f"content-length: {n}\r\n" for n in lengths)
    body = b"x" * max(lengths)
    got = asyncio.run(_feed([f"POST / HTTP/1.1\r\nhost: h\r\n{head}\r\n".encode() + body]))
    if len(set(lengths)) == 1:
        assert isinstance(got, Request) and got.body == b"x" * lengths[0]
    else:
        assert isinstance(got, BadRequest) and got.status == 400
        assert str(got).startswith("conflicting Content-Length headers")


@given(st.lists(st.sampled_from(["chunked", "gzip", "xchunked", "identity", "br"]), min_size=1))
def test_only_chunked_alone_is_read(codings: list[str]) -> None:
    """Transfer-Encoding ``chunked`` alone reads; any other list is a 501."""
    te = ", ".join(codings)
    data = f"POST / HTTP/1.1\r\nhost: h\r\ntransfer-encoding: {te}\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    got = asyncio.run(_feed([data.encode()]))
    if codings == ["chunked"]:
        assert isinstance(got, Request) and got.body == b"abc"
    else:
        assert isinstance(got, BadRequest) and got.status == 501
