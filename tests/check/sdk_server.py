"""A loopback HTTP server that answers every request with one fixed body, for feeding a real
SDK client the exact bytes the checker reads (tests/check/test_sdk_helpers.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["serving"]


@contextmanager
def serving(
    body: bytes, content_type: str = "text/event-stream"
) -> Iterator[tuple[str, list[str]]]:
    """Serve ``body`` on 127.0.0.1; yields the base URL (``http://127.0.0.1:PORT/v1``) and the
    list the request lines served are appended to."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            seen.append(f"{self.command} {self.path}")
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
