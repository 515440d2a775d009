"""Turning what the recorder observed into an :class:`Interaction` (pure).

The recording addon (``replayproxy/_mitm/addons/recorder.py``) reads the clock and mitmproxy's flow;
this module decides what that means: how a response ended (:func:`classify_end`, from
mitmproxy's error message) and how the pieces become a redacted, immutable
:class:`Interaction` (:func:`build_interaction`). Offsets are integer nanoseconds from the
moment the request was sent upstream.

mitmproxy's error messages this maps (11.0.2 and 12.x, ``proxy/layers/http/``):

=======================================================  ============================
message (examples)                                       :class:`EndKind`
=======================================================  ============================
no response head at all (refused, DNS, closed early)      ``NO_RESPONSE``
``Client disconnected.``, ``stream reset ... (CANCEL)``   ``CLIENT_GONE``
``stream reset by client (INTERNAL_ERROR)`` (h2 upstream) ``RESET``
the upstream socket saw ``ECONNRESET`` (see below)        ``RESET``
``... incomplete chunked read``,                          ``INCOMPLETE``
``... received 87 bytes, expected 145``,
``peer closed connection``, ``server closed connection``
anything else (``Connection killed.``, size limits, ...)  ``ERROR`` (message kept)
=======================================================  ============================

mitmproxy handles an upstream TCP RST exactly like EOF for HTTP/1 (``except OSError: break``),
so the message alone cannot tell a reset from a FIN: the addon looks at the upstream socket
and passes ``connection_reset=True`` when it saw ``ECONNRESET``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from replayproxy._core.cassette.model import (
    Ending,
    EndKind,
    Frame,
    Header,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.redaction.secrets import Redactor

__all__ = [
    "ResponseHead",
    "build_interaction",
    "classify_end",
    "ending_from_error",
    "is_tls_verification_failure",
]

_INCOMPLETE = re.compile(
    r"incomplete chunked read|received \d+ bytes, expected \d+|peer closed connection"
    r"|server closed connection|connection closed by peer",
    re.IGNORECASE,
)
_RESET = re.compile(r"stream reset|connection reset|econnreset|errno 104\b", re.IGNORECASE)
_CLIENT_GONE = re.compile(r"client disconnected|\(CANCEL\)", re.IGNORECASE)
# mitmproxy 11/12: "Server TLS handshake failed. Certificate verify failed: unable to get local
# issuer certificate" (the flow's error), OpenSSL's "CERTIFICATE_VERIFY_FAILED".
_TLS_VERIFY = re.compile(r"certificate verify failed|certificate_verify_failed", re.IGNORECASE)


def is_tls_verification_failure(message: str) -> bool:
    """Whether an error means the upstream's certificate was not trusted: a setup problem of
    the recording (``--upstream-ca``), not something the API did, so not an interaction."""
    return bool(_TLS_VERIFY.search(message))


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """A response head as it arrived, ``offset_ns`` after the request was sent."""

    status: int
    reason: str
    http_version: str
    headers: tuple[Header, ...]
    offset_ns: int


def classify_end(message: str, *, got_response: bool, connection_reset: bool = False) -> EndKind:
    """How a response that mitmproxy reported as failed with ``message`` ended.

    ``got_response``: a response head had arrived. ``connection_reset``: the upstream socket
    was reset (TCP RST), which mitmproxy's message does not say for HTTP/1.
    """
    if not got_response:
        return EndKind.NO_RESPONSE
    if _CLIENT_GONE.search(message):
        return EndKind.CLIENT_GONE
    if connection_reset or _RESET.search(message):
        return EndKind.RESET
    if _INCOMPLETE.search(message):
        return EndKind.INCOMPLETE
    return EndKind.ERROR


def ending_from_error(
    message: str, offset_ns: int, *, got_response: bool, connection_reset: bool = False
) -> Ending:
    """The :class:`Ending` for an error reported ``offset_ns`` after the request was sent."""
    kind = classify_end(message, got_response=got_response, connection_reset=connection_reset)
    return Ending(kind, max(0, offset_ns), message)


def build_interaction(
    request: Request,
    head: ResponseHead | None,
    frames: Iterable[tuple[int, bytes]],
    end: Ending,
    *,
    recorded_at: float | None,
    redactor: Redactor,
) -> Interaction:
    """Assemble and redact one interaction. Empty chunks are dropped (they carry no bytes)."""
    response = None
    if head is not None:
        response = Response(
            status=head.status,
            reason=head.reason,
            http_version=head.http_version,
            headers=head.headers,
            head_offset_ns=max(0, head.offset_ns),
            frames=tuple(Frame(max(0, t), bytes(d)) for t, d in frames if d),
        )
    interaction = Interaction(request, response, end, recorded_at=recorded_at)
    return redactor.interaction(interaction)
