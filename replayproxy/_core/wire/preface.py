"""What a connection speaks, from its first bytes: HTTP/1.x, HTTP/2 with prior knowledge, or TLS.

The replay engine listens on plain TCP and reads the first bytes a client sends before
choosing how to read the rest (:mod:`replayproxy._engine.http2.dispatch`):

- :attr:`Preface.H2`: the 24-byte client connection preface of HTTP/2 "with prior knowledge"
  (RFC 9113 §3.4), :data:`H2_PREFACE`, as ``curl --http2-prior-knowledge`` and httpx with
  ``http1=False, http2=True`` send it on a plain connection;
- :attr:`Preface.TLS`: a TLS record of type handshake (``0x16``) with major version 3 (RFC 8446
  §5.1: every ClientHello, TLS 1.0 to 1.3, starts ``16 03``): a client that was given an
  ``https://`` URL for a plain-HTTP listener;
- :attr:`Preface.HTTP1`: anything else (an HTTP/1.x request line, or bytes the HTTP/1.1 reader
  will reject with its 400);
- :attr:`Preface.NEED_MORE`: the bytes so far are a proper prefix of the HTTP/2 preface or of a
  TLS record (``b"P"`` may still be ``POST`` or ``PRI``), so the answer needs more of them.

:func:`classify` is pure and looks at no more than the first 24 bytes; any split of the same
bytes into reads gives the same answer once it is not NEED_MORE.
"""

from __future__ import annotations

import enum

__all__ = ["H2_PREFACE", "Preface", "classify"]

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""The HTTP/2 client connection preface (RFC 9113 §3.4)."""

_TLS_HANDSHAKE = 0x16
_TLS_MAJOR = 0x03


class Preface(enum.StrEnum):
    """What the first bytes of a connection say it speaks."""

    HTTP1 = "http1"
    H2 = "h2"
    TLS = "tls"
    NEED_MORE = "need-more"


def classify(seen: bytes) -> Preface:
    """What a connection whose first bytes are ``seen`` speaks (NEED_MORE: not decided yet)."""
    if not seen:
        return Preface.NEED_MORE
    if seen[0] == _TLS_HANDSHAKE:
        if len(seen) == 1:
            return Preface.NEED_MORE
        return Preface.TLS if seen[1] == _TLS_MAJOR else Preface.HTTP1
    head = seen[: len(H2_PREFACE)]
    if H2_PREFACE.startswith(head):
        return Preface.H2 if len(head) == len(H2_PREFACE) else Preface.NEED_MORE
    return Preface.HTTP1
