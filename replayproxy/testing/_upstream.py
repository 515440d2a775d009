"""A stand-in "real upstream" on 127.0.0.1 that counts every connection and request it gets.

For fail-closed tests: point a replay at :attr:`CountingUpstream.url` as the host it stands in
for, and assert ``connections == 0`` afterwards. Every TCP accept is counted (a TLS client or
a bare connect counts as much as an HTTP request), every request head kept in :attr:`heads`
(so a test can show a header never left), and each request answered ``200 REAL UPSTREAM``,
so a fail-open shows at the client as a real answer, not as an error a test might accept.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

__all__ = ["REAL_UPSTREAM_BODY", "CountingUpstream"]

REAL_UPSTREAM_BODY = b"REAL UPSTREAM"
_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(REAL_UPSTREAM_BODY)
    + REAL_UPSTREAM_BODY
)


class CountingUpstream:
    """A listening socket on 127.0.0.1:PORT, started on creation; ``close()`` (or ``with``)
    stops it. Counts are only ever read by tests, after the fact, so no lock is needed for
    them beyond the GIL; the heads list is appended to whole."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)  # how often the accept loop looks at the stop flag
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        """TCP connections accepted."""
        self.heads: list[bytes] = []
        """The first read of each connection that sent anything: its request head."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="counting-upstream", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> int:
        """Connections that sent a request (any bytes) before closing or going quiet."""
        return len(self.heads)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            # One thread per connection: a client that connects and sends nothing must not
            # keep the next connection from being accepted (and counted).
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            try:
                head = conn.recv(65536)
                if head:
                    self.heads.append(head)
                    conn.sendall(_ANSWER)
            except OSError:
                pass

    def close(self) -> None:
        """Stop accepting and close the listening socket."""
        self._stop.set()
        self._thread.join(2)
        self.sock.close()

    def __enter__(self) -> CountingUpstream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
