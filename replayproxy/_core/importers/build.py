"""One recovered exchange into an :class:`Interaction`: frames per event, offsets, losses (pure).

An importer fills an :class:`Exchange` with what its format kept (bytes exactly as recorded,
and a head/last-byte time when it has one). :func:`build` splits the body into one frame per
SSE event (the spans of :mod:`replayproxy._core.wire.sse`) or NDJSON line, gives the frames
offsets, and returns the interaction with the list of what could not be recovered. A streaming
response whose body is empty, or whose bytes hold no event, is an :class:`ImportFailed` naming
the interaction, never an empty stream. Secrets (the recorder's default header and query
names) are redacted as in a recording.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from replayproxy._core.cassette import validate
from replayproxy._core.cassette.model import (
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
    header_value,
)
from replayproxy._core.importers.timing import TimingModel, offsets, spread
from replayproxy._core.redaction.secrets import Redactor
from replayproxy._core.wire.eventstream import EventStreamMessage, decode_all
from replayproxy._core.wire.sse import parse_events
from replayproxy._errors import UsageError

__all__ = ["Built", "Exchange", "ImportFailed", "build", "drop_decoded_encoding", "split_events"]

_SSE = "text/event-stream"
_REDACTOR = Redactor()  # the recorder's defaults: secrets never reach a cassette
_NDJSON = ("application/x-ndjson", "application/jsonl", "application/json-seq")
_EVENTSTREAM = "application/vnd.amazon.eventstream"
_STREAMS = (_SSE, _EVENTSTREAM, *_NDJSON)


class ImportFailed(UsageError):
    """A file, or one interaction in it, cannot be imported; the message names which."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """What a source format kept of one request and its response (``None``: no response).

    ``head_ns``/``last_ns``: the response head's and the last body byte's offsets from the
    request being sent, when the source recorded them (HAR ``timings``, mitmproxy timestamps).
    """

    where: str  # "FILE: interaction N (METHOD URL)", for messages
    request: Request
    status: int | None = None
    reason: str = ""
    http_version: str = "HTTP/1.1"
    headers: tuple[Header, ...] = ()
    body: bytes = b""
    head_ns: int | None = None
    last_ns: int | None = None
    recorded_at: float | None = None


@dataclass(frozen=True, slots=True)
class Built:
    interaction: Interaction
    losses: tuple[str, ...]


def _media(headers: tuple[Header, ...]) -> str:
    return (header_value(headers, "content-type") or "").split(";")[0].strip().lower()


def split_events(body: bytes, media: str) -> list[bytes] | None:
    """One chunk per SSE event, AWS event-stream message or NDJSON line; ``None`` if the body
    is not a stream type.

    Bytes before the first event (comments) go with it and bytes after the last (a trailing
    comment, an unterminated block) with the last, so the chunks join to ``body`` exactly.
    """
    if media == _SSE:
        cuts = [e.end for e in parse_events(body)]
    elif media == _EVENTSTREAM:
        cuts = [m.end for m in decode_all(body) if isinstance(m, EventStreamMessage)]
    elif media in _NDJSON:
        cuts = [i + 1 for i, b in enumerate(body) if b == 0x0A]
    else:
        return None
    if not cuts:
        return []
    if cuts[-1] != len(body):
        cuts[-1] = len(body)
    starts = [0, *cuts[:-1]]
    return [body[a:b] for a, b in zip(starts, cuts, strict=True)]


def _carries(encoding: str, body: bytes) -> bool:
    """Whether ``body`` can be ``encoding``-compressed bytes (by its magic where it has one).

    Brotli has no magic number: a body whose start is printable UTF-8 text is taken as plain.
    """
    coding = encoding.strip().lower()
    if not body or coding in ("identity", ""):
        return True
    if coding in ("gzip", "x-gzip"):
        return body.startswith(b"\x1f\x8b")
    if coding == "deflate":
        return len(body) > 1 and body[0] & 0x0F == 8 and (body[0] * 256 + body[1]) % 31 == 0
    if coding == "zstd":
        return body.startswith(b"\x28\xb5\x2f\xfd")
    head = body[:64]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not all(c.isprintable() or c in "\r\n\t" for c in text)


def drop_decoded_encoding(
    headers: tuple[Header, ...], body: bytes
) -> tuple[tuple[Header, ...], list[str]]:
    """Drop a ``content-encoding`` the bytes do not carry (and say so).

    Browsers' HAR files and old VCR.py httpx cassettes store the *decoded* body but keep the
    header; replayed as is, a client would try to gunzip plain text.
    """
    kept, notes = [], []
    for key, value in headers:
        text = value.decode("latin-1")
        if key.lower() == b"content-encoding" and not _carries(text, body):
            notes.append(f"content-encoding {text} (the file holds the decoded body)")
            continue
        kept.append((key, value))
    return tuple(kept), notes


def _asked_to_stream(body: bytes) -> bool:
    """A JSON request body with ``"stream": true`` (OpenAI, Anthropic and their peers)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("stream") is True


def _frames(x: Exchange, model: TimingModel, losses: list[str]) -> tuple[int, tuple[Frame, ...]]:
    media = _media(x.headers)
    encoding = (header_value(x.headers, "content-encoding") or "identity").strip().lower()
    chunks = split_events(x.body, media) if encoding == "identity" else None
    if media in _STREAMS:
        if not x.body:
            raise ImportFailed(f"{x.where}: the {media} response body is empty")
        if chunks == []:
            raise ImportFailed(f"{x.where}: the {media} response body holds no event")
        if chunks is None:
            losses.append(f"frame boundaries ({encoding} body kept as one frame)")
        else:
            losses.append("frame boundaries (one frame per event)")
    elif not x.body and 200 <= (x.status or 0) < 300 and _asked_to_stream(x.request.body):
        raise ImportFailed(f"{x.where}: the request asked to stream, the response body is empty")
    if chunks is None:
        chunks = [x.body] if x.body else []
    if x.head_ns is not None:
        head = x.head_ns
        last = head if x.last_ns is None else max(head, x.last_ns)
        first = head if len(chunks) < 2 else min(last, head + (last - head) // len(chunks))
        times = spread(first, last, len(chunks))
        if len(chunks) > 1:
            losses.append("per-event timing (spread evenly between first and last byte)")
    else:
        head, times = offsets(model, chunks)
        losses.append(f"timing (--timing {model})")
    return head, tuple(Frame(t, c) for t, c in zip(times, chunks, strict=True))


def build(x: Exchange, model: TimingModel) -> Built:
    """The interaction for ``x`` and what was lost; ImportFailed names ``x.where``."""
    try:
        validate.check_request(x.request)
    except validate.InvalidField as e:
        raise ImportFailed(f"{x.where}: {e}") from None
    if x.status is None:
        end = Ending(EndKind.NO_RESPONSE, 0, "no response recorded")
        bare = Interaction(x.request, None, end, recorded_at=x.recorded_at)
        return Built(_REDACTOR.interaction(bare), ())
    status = x.status
    headers, losses = drop_decoded_encoding(x.headers, x.body)
    x = replace(x, headers=headers)
    head, frames = _frames(x, model, losses)
    response = Response(status, x.reason, x.http_version, headers, head, frames)
    try:
        validate.check_response(response)
    except validate.InvalidField as e:
        raise ImportFailed(f"{x.where}: {e}") from None
    end_at = frames[-1].offset_ns if frames else head
    losses.append("end state (assumed complete)")
    ending = Ending(EndKind.COMPLETE, end_at)
    done = Interaction(x.request, response, ending, recorded_at=x.recorded_at)
    return Built(_REDACTOR.interaction(done), tuple(losses))
