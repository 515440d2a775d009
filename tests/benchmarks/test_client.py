"""The benchmark client: what it reads, and that its own collector stays out of the timing."""

from __future__ import annotations

import gc
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _client import run_streams

FRAMES = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"]


def _serve_one(sock: socket.socket, seen: list[bool]) -> None:
    """Answer one request with FRAMES, 20 ms apart, noting whether the process's cyclic
    collector was enabled at each write (the client runs in this same process)."""
    conn, _ = sock.accept()
    with conn:
        while b"\r\n\r\n" not in conn.recv(65536):
            pass
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for frame in FRAMES:
            time.sleep(0.02)
            seen.append(gc.isenabled())
            conn.sendall(b"%x\r\n%s\r\n" % (len(frame), frame))
        conn.sendall(b"0\r\n\r\n")


def test_streams_are_read_with_the_collector_off_and_it_is_back_on_after() -> None:
    """run_streams reads every frame, keeps the cyclic collector off while streams run (a
    collection would be a client pause charged to the server timed) and turns it back on."""
    assert gc.isenabled()
    seen: list[bool] = []
    with socket.create_server(("127.0.0.1", 0)) as sock:
        server = threading.Thread(target=_serve_one, args=(sock, seen), daemon=True)
        server.start()
        request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
        results = run_streams(
            "127.0.0.1", sock.getsockname()[1], [("s", None, request, 0)], 10, keep=True
        )
        server.join(10)
    assert (results[0].error, results[0].status) == ("", 200)
    assert results[0].body == b"".join(FRAMES)
    assert sum(n for _, n in results[0].reads) == len(results[0].body)
    assert seen == [False] * len(FRAMES)
    assert gc.isenabled()
