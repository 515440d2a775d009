"""HTTP/2 peers for the HTTP-version tests, on the ``h2`` library (installed with mitmproxy):

- :class:`H2Upstream`: a TLS server on 127.0.0.1 (trustme certificate) that offers only h2 in
  ALPN and answers every request with a head and ``frames`` DATA frames, each sent in its own
  write after a pause: what a recording over HTTP/2 should keep, one frame per recorded write.
- :func:`h2_get_through_proxy`: a client of our own that reaches a host through an HTTP proxy
  (CONNECT, TLS with ALPN h2) and reports each DATA frame it received, so frames can be counted
  exactly (httpx and curl hide them).
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions

__all__ = ["H2Reply", "H2Upstream", "h2_get_through_proxy"]

FRAMES = tuple(f'data: {{"n": {i}}}\n\n'.encode() for i in range(6))


class H2Upstream:
    """A threaded HTTP/2-only TLS server sending ``frames`` with ``pause`` seconds between."""

    def __init__(self, ca: Any, frames: Sequence[bytes] = FRAMES, pause: float = 0.03) -> None:
        self.frames = tuple(frames)
        self.pause = pause
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        context.set_alpn_protocols(["h2"])
        self._tls = context
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.alpn: list[str | None] = []  # what each connection negotiated
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def __enter__(self) -> H2Upstream:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._sock.close()
        self._accepting.join(5)
        for t in self._threads:
            t.join(5)

    def _accept(self) -> None:
        while not self._closed:
            try:
                raw, _ = self._sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(raw,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            with self._tls.wrap_socket(raw, server_side=True) as tls:
                self.alpn.append(tls.selected_alpn_protocol())
                self._h2(tls)
        except (OSError, ssl.SSLError):
            pass  # the peer went away: nothing to serve

    def _h2(self, tls: ssl.SSLSocket) -> None:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        tls.sendall(conn.data_to_send())
        tls.settimeout(10)
        while True:
            data = tls.recv(65536)
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.StreamEnded):
                    self._answer(tls, conn, event.stream_id)
            tls.sendall(conn.data_to_send())

    def _answer(self, tls: ssl.SSLSocket, conn: h2.connection.H2Connection, stream: int) -> None:
        head = [(":status", "200"), ("content-type", "text/event-stream")]
        conn.send_headers(stream, head)
        tls.sendall(conn.data_to_send())
        for frame in self.frames:
            time.sleep(self.pause)
            conn.send_data(stream, frame)
            tls.sendall(conn.data_to_send())  # one write, one DATA frame
        conn.end_stream(stream)
        tls.sendall(conn.data_to_send())


@dataclass
class H2Reply:
    """What :func:`h2_get_through_proxy` received: the status and each DATA frame's payload."""

    alpn: str | None
    status: int = 0
    frames: list[bytes] = field(default_factory=list)
    reset: int | None = None  # RST_STREAM error code
    goaway: int | None = None  # GOAWAY error code
    after: str = ""  # with ping_after: "open" (PING answered), "goaway N" or "closed"

    @property
    def body(self) -> bytes:
        return b"".join(self.frames)


def h2_get_through_proxy(
    proxy_port: int,
    host: str,
    ca_file: str,
    path: str = "/v1/stream",
    *,
    post: bytes = b"",
    offers: Sequence[str] = ("h2", "http/1.1"),
    ping_after: bool = False,
) -> H2Reply:
    """``GET`` (or ``POST`` with ``post``) ``https://host/path`` through the HTTP proxy on
    127.0.0.1:``proxy_port``, offering ``offers`` in ALPN; reads HTTP/2 frames if h2 was chosen
    (else returns the ALPN alone). ``ping_after``: then send a PING to learn whether the
    connection outlived the stream (:attr:`H2Reply.after`)."""
    raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = raw.recv(4096)
        if not chunk:
            raise ConnectionError(f"proxy closed during CONNECT: {answer!r}")
        answer += chunk
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(list(offers))
    with context.wrap_socket(raw, server_hostname=host) as tls:
        reply = H2Reply(tls.selected_alpn_protocol())
        if reply.alpn != "h2":
            return reply
        conn = _h2_exchange(tls, host, path, post, reply)
        if ping_after and reply.goaway is None:
            reply.after = _ping(tls, conn)
        return reply


def _ping(tls: ssl.SSLSocket, conn: h2.connection.H2Connection) -> str:
    """Whether the connection still answers a PING."""
    try:
        conn.ping(b"replay!!")
        tls.sendall(conn.data_to_send())
        tls.settimeout(3)
        while data := tls.recv(65536):
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.PingAckReceived):
                    return "open"
                if isinstance(event, h2.events.ConnectionTerminated):
                    return f"goaway {int(event.error_code)}"
    except (OSError, h2.exceptions.ProtocolError):
        pass
    return "closed"


def _h2_exchange(
    tls: ssl.SSLSocket, host: str, path: str, post: bytes, reply: H2Reply
) -> h2.connection.H2Connection:
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    method = "POST" if post else "GET"
    head = [(":method", method), (":scheme", "https"), (":authority", host), (":path", path)]
    if post:
        head.append(("content-type", "application/json"))
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, head, end_stream=not post)
    if post:
        conn.send_data(stream, post, end_stream=True)
    tls.sendall(conn.data_to_send())
    while True:
        data = tls.recv(65536)
        if not data:
            return conn
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                reply.status = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.DataReceived):
                if event.data:  # not the empty frame that carries END_STREAM
                    reply.frames.append(event.data)
                conn.acknowledge_received_data(event.flow_controlled_length, stream)
            elif isinstance(event, h2.events.StreamReset):
                reply.reset = int(event.error_code)
                return conn
            elif isinstance(event, h2.events.ConnectionTerminated):
                reply.goaway = int(event.error_code)
                return conn
            elif isinstance(event, h2.events.StreamEnded):
                return conn
        tls.sendall(conn.data_to_send())
