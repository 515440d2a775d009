"""The loopback server the oracle's clients read from: each request is answered with one
stream's exact body bytes, with the headers its provider sends.

The stream is named per request by the ``x-oracle-stream`` header (every SDK can add a header
to one call), so one server and one client per SDK serve every stream. Bodies go out framed by
``Content-Length`` (a close-delimited body would make a cut look like a clean end). The
project's provider simulator (``replayproxy.testing.simulator``) routes by API path to its own
canned streams, so it cannot serve an arbitrary corpus body; this is the few lines that can.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["HEADER", "Body", "StreamServer"]

HEADER = "x-oracle-stream"


@dataclass(frozen=True, slots=True)
class Body:
    content_type: str
    data: bytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per client for all streams
    server: _Server

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        body = self.server.bodies.get(self.headers.get(HEADER) or "")
        if body is None:
            self.send_response(404)
            self.send_header("content-type", "application/json")
            data = b'{"error":{"message":"no such oracle stream","type":"not_found"}}'
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", body.content_type)
        self.send_header("content-length", str(len(body.data)))
        self.send_header("x-amzn-requestid", "00000000-0000-0000-0000-000000000000")
        self.end_headers()
        self.wfile.write(body.data)

    do_POST = _answer
    do_GET = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass  # the test output is the outcomes, not an access log


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    bodies: dict[str, Body]

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up mid-body (a stream it gave up on) is its outcome, not ours


class StreamServer:
    """``StreamServer(bodies)`` listens on 127.0.0.1:PORT until ``close()`` (or ``with``)."""

    def __init__(self, bodies: dict[str, Body]) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.bodies = bodies
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="oracle-server", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> StreamServer:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
