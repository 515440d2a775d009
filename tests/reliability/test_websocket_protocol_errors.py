"""Base-URL mode: a WebSocket client that breaks the protocol gets the close code RFC 6455 §7.4
names (1002 protocol error, 1007 invalid payload, 1009 too big), and the engine logs a line and
counts it (issue 28: it closed with no close frame, no line, no count). Raw frames over a real
loopback socket, so every malformation can be sent."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replayproxy._engine import websocket as ws_mod
from replayproxy._engine.failsafe import ReplayFailure
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import cassette, realtime_turns, ws_interaction

UPGRADE = (
    b"GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\n"
    b"connection: Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    b"sec-websocket-version: 13\r\n\r\n"
)


def _masked(first: int, payload: bytes, *, length: bytes | None = None) -> bytes:
    """A client frame: first byte ``first`` (FIN, RSV, opcode), masked ``payload``."""
    key = os.urandom(4)
    n = len(payload)
    if length is None:
        if n < 126:
            length = bytes([0x80 | n])
        elif n < 65536:
            length = b"\xfe" + struct.pack("!H", n)
        else:
            length = b"\xff" + struct.pack("!Q", n)
    body = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return bytes([first]) + length + key + body


def _close_code(sock: socket.socket) -> tuple[int, bytes] | None:
    """Read server frames until a close frame: its code and reason; None if the connection
    ended without one."""
    data = b""
    while True:
        while len(data) >= 2:
            op, n = data[0] & 0x0F, data[1] & 0x7F
            start = 2
            if n == 126:
                n, start = struct.unpack("!H", data[2:4])[0], 4
            elif n == 127:
                n, start = struct.unpack("!Q", data[2:10])[0], 10
            if len(data) < start + n:
                break
            payload, data = data[start : start + n], data[start + n :]
            if op == 0x8:
                return struct.unpack("!H", payload[:2])[0], payload[2:]
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk


def _upgrade(sock: socket.socket) -> None:
    sock.sendall(UPGRADE)
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101 ")


CASES = [
    pytest.param(_masked(0x81, b"\xff\xfe"), 1007, id="invalid-utf8"),
    pytest.param(b"\x81\x02hi", 1002, id="unmasked"),
    pytest.param(_masked(0xC1, b"hi"), 1002, id="rsv1"),
    pytest.param(_masked(0x83, b"hi"), 1002, id="opcode-3"),
    pytest.param(_masked(0x88, struct.pack("!H", 999)), 1002, id="bad-close-code"),
    pytest.param(_masked(0x82, b"", length=b"\xff" + b"\xff" * 8), 1002, id="2^64-length"),
]


@pytest.mark.parametrize(("frame", "code"), CASES)
def test_a_protocol_error_is_closed_with_its_code_logged_and_counted(
    frame: bytes, code: int
) -> None:
    """Each malformed client frame: a close frame with the RFC's code, one failure line
    (on_error) and one error in the summary."""
    failures: list[ReplayFailure] = []
    recorded = cassette(ws_interaction(realtime_turns()))
    with ReplayServer(recorded, speed=0, on_error=failures.append) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            _upgrade(sock)
            sock.sendall(frame)
            closed = _close_code(sock)
        assert closed is not None and closed[0] == code, closed
        assert server.summary().errors == 1
    (failure,) = failures
    line = failure.one_line()
    assert "WebSocket protocol error from the client" in line and f"(closed {code})" in line


def test_a_message_past_the_maximum_is_closed_with_1009(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client message longer than MAX_MESSAGE (here lowered to 1 MiB), across fragments:
    1009, named in the reason; the engine never holds more than that for it."""
    monkeypatch.setattr(ws_mod, "MAX_MESSAGE", 2**20)
    failures: list[ReplayFailure] = []
    recorded = cassette(ws_interaction(realtime_turns()))
    with ReplayServer(recorded, speed=0, on_error=failures.append) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            _upgrade(sock)
            half = b"x" * (2**19 + 1)
            sock.sendall(_masked(0x02, half))  # first fragment, binary, not final
            sock.sendall(_masked(0x80, half))  # continuation, final: 1 MiB + 2 in all
            closed = _close_code(sock)
        assert closed is not None and closed[0] == 1009, closed
        assert b"message larger than 1 MiB" in closed[1]
    assert len(failures) == 1 and "(closed 1009)" in failures[0].one_line()


_SERVER = """
import time
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import cassette, realtime_turns, ws_interaction
with ReplayServer(cassette(ws_interaction(realtime_turns())), speed=0) as server:
    print(server.port, flush=True)
    time.sleep(60)
"""


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_big_message_memory_is_given_back() -> None:
    """A 60 MiB client message (under the maximum) on a fresh server process: a moment after
    it, with the connection still open, the process's RSS is back within 20 MiB of before
    (it kept the message referenced while waiting for the next one: +61 MiB measured)."""
    proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        time.sleep(0.5)
        before = _rss_kib(proc.pid)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            _upgrade(sock)
            size = 60 * 2**20
            sock.sendall(b"\x82\xff" + struct.pack("!Q", size) + b"\0\0\0\0")  # zero mask
            for _ in range(60):
                sock.sendall(b"x" * 2**20)
            deadline = time.monotonic() + 15  # the release comes a moment after the message
            while _rss_kib(proc.pid) - before > 20 * 1024 and time.monotonic() < deadline:
                time.sleep(0.25)
            after = _rss_kib(proc.pid)
        assert after - before < 20 * 1024, f"RSS {before} KiB before, {after} KiB after"
    finally:
        proc.kill()
        proc.wait(10)
