"""Body-field redaction through ``Content-Encoding``: gzip, deflate, br, zstd (pure).

httpx, requests and most SDKs send ``Accept-Encoding: gzip``, so a token endpoint's
``{"access_token": ...}`` usually arrives gzip'd, and the recorder keeps the bytes as they
crossed the wire: redacting the JSON means decoding it first. When a body has a coding and
``--redact-body-field`` is set, the body is decoded (incrementally, frame by frame, with the
checker's :class:`~replayproxy._core.wire.content_coding.BodyDecoder`), and:

- if a field was redacted, the **decoded** body is stored: ``Content-Encoding`` is removed,
  ``Content-Length`` (if any) is set to the new length. Each response frame keeps its offset
  and holds the bytes its encoded chunk decoded to (a chunk that completed no decoded byte, a
  gzip header say, leaves no frame). Re-encoding instead would store bytes no upstream sent and
  could not keep the frame boundaries of a streamed body; a replayed client that asked for gzip
  and gets an identity body decodes nothing, which every HTTP client accepts (RFC 9110 §8.4).
- if nothing was redacted, the body is kept byte for byte, still encoded.

A coding that cannot be decoded here (``compress``, or ``br``/``zstd`` without the
``brotli``/``zstandard`` module mitmproxy installs) leaves the body as recorded. Bytes that stop
decoding part-way are cut there when a field before them was redacted: what follows cannot be
read, so cannot be checked for secrets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from replayproxy._core.cassette.model import Frame, Header, Request, Response
from replayproxy._core.redaction.body_fields import Pointer, redact_body, redact_frames
from replayproxy._core.wire.content_coding import BodyDecoder, DecodeError, encodings, unsupported

__all__ = ["content_coding", "decoded_frames", "redact_request_body", "redact_response_body"]


def content_coding(headers: Sequence[Header]) -> str | None:
    """The ``Content-Encoding`` of these headers (several fields joined, as RFC 9110 §5.3
    says), or ``None`` when there is none or only ``identity``."""
    values = [v.decode("latin-1") for k, v in headers if k.lower() == b"content-encoding"]
    joined = ", ".join(values)
    return joined if encodings(joined) else None


def decoded_frames(frames: Sequence[Frame], coding: str) -> tuple[Frame, ...] | None:
    """``frames`` decoded, each at its own offset (empty ones dropped), or ``None`` when this
    coding cannot be decoded here. Bytes that do not decode end the body there."""
    if unsupported(coding) is not None:
        return None
    decoder = BodyDecoder(coding)
    out: list[Frame] = []
    try:
        for frame in frames:
            out.append(Frame(frame.offset_ns, decoder.feed(frame.data)))
        tail = decoder.close()
    except DecodeError:
        tail = b""
    if tail and out:
        out[-1] = Frame(out[-1].offset_ns, out[-1].data + tail)
    return tuple(f for f in out if f.data)


def _decoded_headers(headers: Sequence[Header], length: int) -> tuple[Header, ...]:
    """The headers of a body stored decoded: no ``Content-Encoding``, the new length."""
    out = []
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-encoding":
            continue
        if lower == b"content-length":
            value = str(length).encode()
        out.append((name, value))
    return tuple(out)


def _with_length(headers: Sequence[Header], old: int, new: int) -> tuple[Header, ...]:
    """An identity body's headers after redaction changed its length (``old`` -> ``new``)."""
    if old == new:
        return tuple(headers)
    return tuple(
        (k, str(new).encode()) if k.lower() == b"content-length" else (k, v) for k, v in headers
    )


def redact_request_body(
    request: Request, pointers: Sequence[Pointer], values: Sequence[Any]
) -> Request:
    """``request`` with the body fields at ``pointers`` redacted, through its coding."""
    if not pointers or not request.body:
        return request
    coding = content_coding(request.headers)
    if coding is None:
        body = redact_body(request.body, pointers, values)
        headers = _with_length(request.headers, len(request.body), len(body))
        return replace(request, body=body, headers=headers)
    frames = decoded_frames((Frame(0, request.body),), coding)
    if frames is None:
        return request
    decoded = b"".join(f.data for f in frames)
    body = redact_body(decoded, pointers, values)
    if body == decoded:
        return request  # nothing to redact: keep the bytes as sent
    return replace(request, body=body, headers=_decoded_headers(request.headers, len(body)))


def redact_response_body(
    response: Response, pointers: Sequence[Pointer], values: Sequence[Any]
) -> Response:
    """``response`` with the body fields at ``pointers`` redacted, through its coding."""
    if not pointers or not response.frames:
        return response
    coding = content_coding(response.headers)
    if coding is None:
        frames = redact_frames(response.frames, pointers, values)
        old, new = len(response.body), sum(len(f.data) for f in frames)
        return replace(response, frames=frames, headers=_with_length(response.headers, old, new))
    decoded = decoded_frames(response.frames, coding)
    if decoded is None:
        return response
    frames = redact_frames(decoded, pointers, values)
    if frames == decoded:
        return response  # nothing to redact: keep the bytes as received
    length = sum(len(f.data) for f in frames)
    return replace(response, frames=frames, headers=_decoded_headers(response.headers, length))
