"""A fake "real upstream" on 127.0.0.1 that counts every connection it gets.

It answers any request with ``200 REAL UPSTREAM`` (so a fail-open would show as a real answer
at the client) and keeps the request heads it saw (so a test can show the Authorization header
never left). Replay must never make ``connections`` move from 0.
"""

from __future__ import annotations

import socket
import threading

__all__ = ["FakeUpstream"]


class FakeUpstream:
    """A listening socket on 127.0.0.1:PORT; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self.heads: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-upstream", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    self.heads.append(conn.recv(65536))
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\nconnection: close\r\n\r\n"
                        b"REAL UPSTREAM"
                    )
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()
