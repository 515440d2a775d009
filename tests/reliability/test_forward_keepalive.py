"""Keepalive faults never starve other clients (issue 28, item 9): with ``--fault
keepalive:every=0.01`` on 200 concurrent streams, an unrelated recorded request is answered in
well under a second, in base-URL mode (the engine) and in forward mode (mitmproxy).

Real CLI subprocesses, real sockets on 127.0.0.1, a generous bound (1 s against the issue's
50 ms target; ``benchmarks/bench_forward.py`` prints the measured figures). The 200 streams
are read by one thread here that discards what it reads, as fast as it can.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from replayproxy import store
from replayproxy.testing import cassette, interaction, sse_frames
from tests.reliability.test_connection_hygiene import MODELS, _replay_cli

STREAMS = 200
BOUND_S = 1.0
# 40 events 50 ms apart: 2 s of stream, each gap filled with 4 keepalives (10 ms apart).
CHAT = interaction(sse_frames(40), head_ms=20, gap_ms=50)
CHAT_HEAD = (
    b"POST {target} HTTP/1.1\r\nHost: api.openai.invalid\r\n"
    b"Content-Type: application/json\r\nContent-Length: 27\r\n\r\n"
    b'{"model":"m","stream":true}'
)


def _read_all(socks: list[socket.socket], stop: threading.Event) -> None:
    """Read every socket until it closes or the terminating chunk arrives (discarding)."""
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, b"")
    while sel.get_map() and not stop.is_set():
        for key, _ in sel.select(0.5):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            tail = (key.data + data)[-5:]
            if not data or tail == b"0\r\n\r\n":
                sel.unregister(sock)
            else:
                sel.modify(sock, selectors.EVENT_READ, tail)
    sel.close()


@pytest.mark.parametrize(
    "forward",
    [
        pytest.param(False, id="base-url"),
        pytest.param(
            True,
            id="forward",
            marks=pytest.mark.xfail(
                strict=True,
                reason="issue 28 item 9, not fixed: mitmproxy's loop relays every keepalive "
                "chunk (200 x 100/s) and saturates a core; see docs in benchmarks/README.md",
            ),
        ),
    ],
)
def test_an_unrelated_request_is_answered_while_200_streams_get_keepalives(
    tmp_path: Path, forward: bool
) -> None:
    """200 streams under keepalive:every=0.01 leave GET /v1/models answered in < 1 s."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(CHAT, MODELS))
    args = ["--allow-repeats", "--fault", "keepalive:every=0.01", "--confdir", str(tmp_path)]
    with _replay_cli(path, *args, forward=forward) as (url, _proc, stderr):
        port = int(url.rsplit(":", 1)[1])
        prefix = "http://api.openai.invalid" if forward else ""
        head = CHAT_HEAD.replace(b"{target}", f"{prefix}/v1/chat/completions".encode())
        socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(STREAMS)]
        stop = threading.Event()
        reader = threading.Thread(target=_read_all, args=(socks, stop), daemon=True)
        try:
            for s in socks:
                s.sendall(head)
            reader.start()
            time.sleep(0.8)  # every stream is in its keepalive-filled gaps by now
            client = httpx.Client(proxy=url if forward else None, trust_env=False, timeout=30)
            with client:
                started = time.monotonic()
                answer = client.get(f"{prefix or url}/v1/models")
                took = time.monotonic() - started
            assert answer.text == '{"data": []}', answer.text
            assert took < BOUND_S, f"the unrelated request took {took:.2f} s"
            reader.join(60)
            assert not reader.is_alive(), "the 200 streams did not finish in 60 s"
        finally:
            stop.set()
            for s in socks:
                s.close()
        assert "Traceback" not in "".join(stderr)
