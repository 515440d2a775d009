"""What the replay origin puts in HTTP/2 frames, on ``h2``'s sans-IO connection (no I/O here).

- :func:`request_of`: the :class:`~replayproxy._core.cassette.model.Request` an HTTP/2 request
  stream carries (its pseudo-header fields become the method and URL, as mitmproxy shows an
  HTTP/2 request: ``http_version`` ``HTTP/2.0``, no pseudo-headers among the headers);
- :func:`response_headers`: a recorded (or explained) response head as HTTP/2 allows it:
  ``:status`` first, lower-case names, no connection-specific fields (RFC 9113 §8.2.2);
- :func:`send_some`: DATA frames for one recorded write, as many as the peer's flow-control
  window lets through now, none larger than the peer's ``SETTINGS_MAX_FRAME_SIZE``. A write is
  never joined with the next one, and split only where the window or the frame size forces it,
  so the client reads the recorded byte splits, as it reads HTTP/1.1 chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replayproxy._core.cassette.model import Header, Request

__all__ = ["request_of", "response_headers", "send_some"]

# RFC 9113 §8.2.2: connection-specific fields are malformed in HTTP/2 (h2 refuses to send
# them). ``content-length`` goes too for scheduled bodies: the DATA frames frame the body, and
# a fault may cut or change it (the HTTP/1.1 origin drops it for the same reason).
_CONNECTION_SPECIFIC = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
    b"te",
}


def response_headers(
    status: int, headers: Sequence[Header], *, keep_length: bool = False
) -> list[Header]:
    """``:status`` and ``headers`` as an HTTP/2 HEADERS frame carries them (``keep_length``:
    keep ``content-length``, for a body sent whole)."""
    out: list[Header] = [(b":status", b"%d" % status)]
    for name, value in headers:
        low = name.strip().lower()
        if not low or low.startswith(b":") or low in _CONNECTION_SPECIFIC:
            continue
        if low == b"content-length" and not keep_length:
            continue
        out.append((low, value.strip()))
    return out


def request_of(fields: Sequence[Header], body: bytes) -> Request:
    """The request a stream's header ``fields`` and ``body`` make, as mitmproxy records an
    HTTP/2 request: method and URL from the pseudo-headers, the rest as headers."""
    pseudo: dict[bytes, bytes] = {}
    headers: list[Header] = []
    for name, value in fields:
        if name.startswith(b":"):
            pseudo[name] = value
        else:
            headers.append((name, value))
    method = pseudo.get(b":method", b"GET").decode("latin-1")
    scheme = pseudo.get(b":scheme", b"http").decode("latin-1")
    host = pseudo.get(b":authority") or dict(headers).get(b"host", b"127.0.0.1")
    path = pseudo.get(b":path", b"/").decode("latin-1")
    url = f"{scheme}://{host.decode('latin-1')}{path}"
    return Request(method, url, "HTTP/2.0", tuple(headers), body)


def send_some(conn: Any, stream_id: int, data: memoryview, limit: int) -> int:
    """Queue DATA frames on ``conn`` (an ``h2`` connection) for the start of ``data``: no more
    than the stream's and the connection's flow-control windows allow, each frame at most the
    peer's maximum frame size, and no new frame once ``limit`` bytes are queued (the caller
    drains the socket between calls; ``limit`` never cuts a frame short, so it adds no split).
    Returns the bytes queued (0: the window is closed; wait for a WINDOW_UPDATE)."""
    sent = 0
    while sent < len(data) and sent < limit:
        n = min(
            conn.local_flow_control_window(stream_id),
            conn.max_outbound_frame_size,
            len(data) - sent,
        )
        if n <= 0:
            break
        conn.send_data(stream_id, bytes(data[sent : sent + n]))
        sent += n
    return sent
