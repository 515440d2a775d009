"""Body fields redacted through Content-Encoding (core/redaction/encoded.py): gzip, deflate,
br and zstd bodies, requests and streamed responses, stored decoded when a field was redacted."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec
from typing import Any

import brotli  # type: ignore[import-untyped]
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Frame, Request, Response
from replayproxy._core.redaction.encoded import content_coding, decoded_frames
from replayproxy._core.redaction.secrets import Redactor
from replayproxy.testing.strategies import splits


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-15)
    return c.compress(data) + c.flush()


def _zstd_compress() -> Callable[[bytes], bytes]:
    """zstd as mitmproxy 11 (``zstandard``) or mitmproxy 12 (``backports.zstd``) installs it."""
    if find_spec("zstandard") is not None:
        zstandard: Any = import_module("zstandard")
        return lambda d: bytes(zstandard.ZstdCompressor().compress(d))
    zstd: Any = import_module("backports.zstd")
    return lambda d: bytes(zstd.compress(d))


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "raw-deflate": _raw_deflate,  # sent as "deflate" (some servers do): see _coding()
    "br": brotli.compress,
    "zstd": _zstd_compress(),
}


def _coding(name: str) -> str:
    return "deflate" if name == "raw-deflate" else name


SECRET = "sk-SECRET-9f8e7d"
REDACTOR = Redactor.with_extra(body_fields=["/access_token", "/api_key"])


def _response(body: bytes, coding: str, parts: list[bytes]) -> Response:
    frames = tuple(Frame(i * 1000, p) for i, p in enumerate(parts))
    headers = ((b"Content-Type", b"application/json"), (b"Content-Encoding", coding.encode()))
    headers += ((b"Content-Length", str(len(body)).encode()),)
    return Response(200, headers=headers, frames=frames)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(
    rest=st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    coding=st.sampled_from(sorted(ENCODERS)),
    data=st.data(),
)
def test_any_encoded_response_loses_the_field_and_keeps_the_rest(
    rest: dict[str, Any], coding: str, data: st.DataObject
) -> None:
    """Any JSON body, any coding, any split into frames: the stored body has no secret, is
    decoded (no Content-Encoding, Content-Length its length) and equals the original elsewhere."""
    rest.pop("access_token", None)
    doc = {**rest, "access_token": SECRET}
    plain = json.dumps(doc).encode()
    body = ENCODERS[coding](plain)
    parts = data.draw(splits(body))
    stored = REDACTOR.response(_response(body, _coding(coding), parts))
    assert SECRET.encode() not in stored.body
    assert stored.header("content-encoding") is None
    assert stored.header("content-length") == str(len(stored.body))
    assert json.loads(stored.body) == {**rest, "access_token": "<redacted>"}
    offsets = [f.offset_ns for f in stored.frames]
    assert offsets == sorted(offsets) and set(offsets) <= {i * 1000 for i in range(len(parts))}


@given(coding=st.sampled_from(sorted(ENCODERS)), data=st.data())
def test_a_streamed_encoded_event_stream_is_redacted_per_data_line(
    coding: str, data: st.DataObject
) -> None:
    """A gzip'd (br, zstd, ...) SSE stream: each ``data:`` line's field is redacted and the
    events are otherwise as sent."""
    events = [{"n": i, "access_token": f"{SECRET}{i}"} for i in range(3)]
    plain = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    body = ENCODERS[coding](plain)
    stored = REDACTOR.response(_response(body, _coding(coding), data.draw(splits(body))))
    assert SECRET.encode() not in stored.body
    lines = [line for line in stored.body.split(b"\n") if line]
    assert [json.loads(line[6:]) for line in lines] == [
        {"n": i, "access_token": "<redacted>"} for i in range(3)
    ]


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_an_encoded_request_body_is_stored_decoded_and_redacted(coding: str) -> None:
    """A request sent with ``Content-Encoding``: the secret field is gone, the header too."""
    plain = json.dumps({"api_key": SECRET, "model": "m"}).encode()
    body = ENCODERS[coding](plain)
    request = Request(
        "POST",
        "https://api.example/v1/x",
        headers=(
            (b"content-encoding", _coding(coding).encode()),
            (b"content-length", b"%d" % len(body)),
        ),
        body=body,
    )
    stored = REDACTOR.request(request)
    assert json.loads(stored.body) == {"api_key": "<redacted>", "model": "m"}
    assert stored.headers == ((b"content-length", b"%d" % len(stored.body)),)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_an_encoded_body_with_nothing_to_redact_is_kept_byte_for_byte(coding: str) -> None:
    """No field to redact: the encoded bytes, frames and headers stay as received."""
    body = ENCODERS[coding](b'{"model": "m"}')
    response = _response(body, _coding(coding), [body[:3], body[3:]])
    assert REDACTOR.response(response) == response
    request = Request(
        "POST", "http://h/", headers=((b"content-encoding", _coding(coding).encode()),)
    )
    request = Request(request.method, request.url, headers=request.headers, body=body)
    assert REDACTOR.request(request) == request


def test_an_unknown_coding_is_kept_as_recorded() -> None:
    """``compress`` (or anything not decodable here) is left as it arrived."""
    response = _response(b"\x1f\x9d junk", "compress", [b"\x1f\x9d junk"])
    assert REDACTOR.response(response) == response
    assert decoded_frames(response.frames, "compress") is None


def test_bytes_that_stop_decoding_end_the_redacted_body() -> None:
    """gzip whose tail is garbage: the readable part is redacted and stored, the rest dropped."""
    good = gzip.compress(json.dumps({"access_token": SECRET}).encode())
    body = good + b"\x1f\x8bnot gzip at all"
    stored = REDACTOR.response(_response(body, "gzip", [good, body[len(good) :]]))
    assert stored.body == b'{"access_token":"<redacted>"}'


def test_an_identity_body_gets_its_new_content_length() -> None:
    """Without a coding, redaction that changes the length updates ``Content-Length``."""
    plain = json.dumps({"access_token": "x"}).encode()
    stored = REDACTOR.response(_response(plain, "identity", [plain]))
    assert stored.header("content-length") == str(len(stored.body)) != str(len(plain))


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ((), None),
        (((b"Content-Encoding", b"identity"),), None),
        (((b"Content-Encoding", b"gzip"),), "gzip"),
        (((b"content-encoding", b"gzip"), (b"Content-Encoding", b"br")), "gzip, br"),
    ],
)
def test_content_coding_joins_fields_and_ignores_identity(
    headers: tuple[tuple[bytes, bytes], ...], expected: str | None
) -> None:
    """The coding is read from every ``Content-Encoding`` field, identity meaning none."""
    assert content_coding(headers) == expected


def test_two_codings_are_undone_in_reverse() -> None:
    """``gzip, br``: br was applied last, so it is undone first."""
    plain = json.dumps({"access_token": SECRET}).encode()
    body = brotli.compress(gzip.compress(plain))
    stored = REDACTOR.response(_response(body, "gzip, br", [body]))
    assert json.loads(stored.body) == {"access_token": "<redacted>"}
