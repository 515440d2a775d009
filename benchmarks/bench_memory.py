"""Memory under hostile load: what a replay server holds for slow readers, big bodies, keepalives.

Each case starts a fresh replay server in its own process (the direct engine,
``ReplayServer``, or ``replayproxy replay`` through mitmproxy), loads it on 127.0.0.1, and
prints the server's resident memory (``VmRSS`` from ``/proc``) before, during and after, and its
peak (``VmHWM``). A script, not a test: it prints a table and exits 0 whatever the figures.

    python benchmarks/bench_memory.py            # every case, about a minute
    python benchmarks/bench_memory.py --quick    # smaller sizes

Cases (sizes for the full run):

- ``slow-readers``: 5 clients request a 50 MB stream at ``--speed 0`` and never read;
- ``unmatched-1MB``: 500 unmatched 1 MB JSON requests, one after another;
- ``big-request``: one unmatched 50 MB JSON request body;
- ``keepalive``: ``--fault keepalive:every=0.01`` over a recorded 30-minute gap (180,000
  keepalives planned and sent while the client reads the first bytes and leaves), and over
  a 300-day gap (refused before anything is built).

Linux only (``/proc``). Servers are stopped by PID in ``finally`` blocks.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replayproxy import _store as store  # noqa: E402
from replayproxy._core.cassette.model import (  # noqa: E402
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)

MiB = 2**20
URL = "https://api.openai.invalid/v1/chat/completions"
BODY = b'{"model":"m","stream":true}'
SSE = ((b"content-type", b"text/event-stream"),)

_ENGINE = """
import sys, time
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._engine.server import ReplayServer
faults = sys.argv[2:]
with ReplayServer(sys.argv[1], speed=0 if not faults else 1, faults=faults,
                  options=MatchOptions(allow_repeats=True), on_miss=lambda m: None) as s:
    print(s.port, flush=True)
    sys.stdin.read()
"""


def rss(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def stream_cassette(path: Path, size: int) -> None:
    chunk = 64 * 1024
    data = b"data: " + b"y" * size + b"\n\n"
    frames = tuple(Frame(i // chunk, data[i : i + chunk]) for i in range(0, len(data), chunk))
    it = Interaction(
        Request("POST", URL, body=BODY),
        Response(200, "OK", headers=SSE, head_offset_ns=0, frames=frames),
        Ending(EndKind.COMPLETE, frames[-1].offset_ns),
    )
    store.save(path, Cassette((it,)))


def gap_cassette(path: Path, gap_s: float) -> None:
    gap = int(gap_s * 1e9)
    frames = (Frame(1_000_000, b"data: 1\n\n"), Frame(gap, b"data: 2\n\n"))
    it = Interaction(
        Request("POST", URL, body=BODY),
        Response(200, "OK", headers=SSE, head_offset_ns=0, frames=frames),
        Ending(EndKind.COMPLETE, gap + 1),
    )
    store.save(path, Cassette((it,)))


@contextmanager
def server(kind: str, cassette: Path, faults: list[str], work: Path) -> Iterator[tuple[int, int]]:
    """(pid, port) of a replay server of ``kind`` ("direct" or "proxy")."""
    if kind == "direct":
        cmd = [sys.executable, "-c", _ENGINE, str(cassette), *faults]
    else:
        exe = str(Path(sys.executable).with_name("replayproxy"))
        cmd = [exe, "replay", str(cassette), "--upstream", "https://api.openai.invalid",
               "--listen", "127.0.0.1:0", "--confdir", str(work / "conf"), "--allow-repeats",
               "--speed", "0" if not faults else "1"]  # fmt: skip
        for f in faults:
            cmd += ["--fault", f]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.strip().rsplit(":", 1)[-1])
        yield proc.pid, port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def request_bytes(body: bytes) -> bytes:
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_response(sock: socket.socket) -> None:
    """Read until the end of one response with content-length, or until the peer closes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n")
         if line.lower().startswith(b"content-length")), None,
    )  # fmt: skip
    while length is not None and len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return
        rest += chunk


def case_slow_readers(pid: int, port: int, n: int) -> float:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        s.sendall(request_bytes(BODY))
        socks.append(s)
    time.sleep(3)
    during = rss(pid)[0]
    for s in socks:
        s.close()
    return during


def case_unmatched(port: int, count: int, size: int) -> None:
    for i in range(count):
        body = json.dumps({"model": "other", "n": i, "pad": "x" * size}).encode()
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(request_bytes(body))
            read_response(s)


def case_keepalive(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(request_bytes(BODY))
        s.settimeout(10)
        s.recv(65536)
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    big = (10 if args.quick else 50) * MiB
    unmatched = (50, MiB) if args.quick else (500, MiB)
    rows: list[tuple[str, str, float, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        work = Path(tmp)
        stream = work / "stream.cassette"
        stream_cassette(stream, big)
        small = work / "small.cassette"
        stream_cassette(small, 1000)
        gap = work / "gap.cassette"
        gap_cassette(gap, 1800)
        huge_gap = work / "huge-gap.cassette"
        gap_cassette(huge_gap, 300 * 86400)
        for kind in ("direct", "proxy"):
            with server(kind, stream, [], work) as (pid, port):
                before = rss(pid)[0]
                during = case_slow_readers(pid, port, 5)
                time.sleep(1)
                rows.append((kind, f"5 slow readers of {big // MiB} MB", before, during, *rss(pid)))
            with server(kind, small, [], work) as (pid, port):
                before = rss(pid)[0]
                case_unmatched(port, *unmatched)
                time.sleep(2.5)  # let the server finish with the last connection (and collect)
                after = rss(pid)
                label = f"{unmatched[0]} unmatched {unmatched[1] // MiB} MB requests"
                rows.append((kind, label, before, after[0], *after))
            with server(kind, small, [], work) as (pid, port):
                before = rss(pid)[0]
                case_unmatched(port, 1, big)
                time.sleep(2.5)
                after = rss(pid)
                rows.append((kind, f"one {big // MiB} MB request", before, after[0], *after))
            for cassette, label in ((gap, "30 min gap"), (huge_gap, "300 day gap")):
                with server(kind, cassette, ["keepalive:every=0.01"], work) as (pid, port):
                    before = rss(pid)[0]
                    case_keepalive(port)
                    after = rss(pid)
                    rows.append((kind, f"keepalive:every=0.01, {label}", before, after[0], *after))
    print(f"{'path':<7} {'case':<36} {'before':>8} {'during':>8} {'after':>8} {'peak':>8}  (MiB)")
    for kind, label, before, during, after, peak in rows:
        print(f"{kind:<7} {label:<36} {before:8.0f} {during:8.0f} {after:8.0f} {peak:8.0f}")


if __name__ == "__main__":
    main()
