"""The command ``replay --isolate`` wraps in tests/reliability/test_isolate.py (run as a script).

``python isolate_probe.py HOST PORT`` tries to reach a listener at HOST:PORT (outside loopback)
three ways a socket patch cannot stop: a socket of the C type ``_socket.socket`` (what a C
extension uses), a subprocess (``curl`` when installed, and another Python), and a raw ICMP
socket (an echo request to HOST). It also asks the replay proxy (``REPLAYPROXY_URL``) for the
recorded answer, and prints one JSON line of what happened.
"""

from __future__ import annotations

import _socket
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

import httpx


def _c_socket(host: str, port: int) -> str:
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((host, port))
    except OSError as e:
        return f"errno {e.errno}"
    finally:
        s.close()
    return "connected"


def _subprocesses(host: str, port: int) -> dict[str, int]:
    connect = f"import socket; socket.create_connection(({host!r}, {port}), timeout=3).close()"
    out = {
        "python": subprocess.run([sys.executable, "-c", connect], capture_output=True).returncode
    }
    curl = shutil.which("curl")
    if curl is not None:  # exit status 7: could not connect; 52: connected, empty reply
        url = f"http://{host}:{port}/"
        run = subprocess.run([curl, "-s", "-o", os.devnull, "--max-time", "3", url])
        out["curl"] = run.returncode
    return out


def _checksum(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF


def _icmp_echo(host: str) -> str:
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    except PermissionError:
        return "no raw sockets"
    with s:
        s.settimeout(3)
        body = b"replayproxy-isolate!"
        head = struct.pack("!BBHHH", 8, 0, 0, 0x2828, 1)
        packet = struct.pack("!BBHHH", 8, 0, _checksum(head + body), 0x2828, 1) + body
        try:
            s.sendto(packet, (host, 0))
        except OSError as e:
            return f"errno {e.errno}"
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:  # the raw socket also sees our own request
            try:
                data, (source, _) = s.recvfrom(2048)
            except TimeoutError:
                break
            icmp = data[(data[0] & 0x0F) * 4 :]
            if source == host and icmp[:1] == b"\x00" and body in icmp:
                return "reply"
        return "no reply"


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    replayed = httpx.post(
        os.environ["REPLAYPROXY_URL"] + "/v1/chat/completions",
        json={"model": "m", "stream": True},
        timeout=20,
    )
    result = {
        "interfaces": [name for _, name in socket.if_nameindex()],
        "c_socket": _c_socket(host, port),
        "subprocess": _subprocesses(host, port),
        "raw_socket": _icmp_echo(host),
        "replayed": replayed.status_code,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
