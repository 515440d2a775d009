"""Forward-mode replay against its floor, three client shapes, and keepalive starvation.

Section 1: ``replayproxy replay`` as a forward proxy (no ``--upstream``: the engine alone,
CONNECT and TLS included) against the floor of plain ``mitmdump`` (regular mode, streaming)
in front of ``_floor_server.py`` serving the same recorded streams, at 1 / 50 / 200
concurrent streams, with three client shapes in one run: raw sockets over two processes
(``_client.py``, absolute-form ``http://`` requests), httpx streaming clients in one asyncio
process (``_httpx_client.py``, ``proxy=``, ``http://`` URLs), and the same httpx clients with
``https://`` URLs (``httpx-tls``: CONNECT, then TLS verified against the proxies' CA;
mitmdump intercepts it and talks TLS to an HTTPS floor server, the replay answers it). Paths
alternate within each round (floor, replay, floor, replay, ...) and rounds are pooled. Per
row: gap error p50/p99 (inter-chunk gaps vs recorded), first-event offset error, peak RSS of
the proxy's process tree (summed ``VmRSS``, sampled), and the ratios of p99 and first-event
max to the floor.

Section 2: keepalive starvation. With ``--fault keepalive:every=0.01`` on N concurrent
streams, how long an unrelated request (a miss: ``GET /v1/models``, not recorded) takes to be
answered, in forward mode and base-URL mode side by side, and through plain mitmdump relaying
the same keepalive frames baked into the floor server's streams (what mitmproxy's relay alone
costs at that chunk rate).

Usage::

    python benchmarks/bench_forward.py            # full run (~3 min on 2 cores)
    python benchmarks/bench_forward.py --quick    # tiny configuration (smoke test)
    python benchmarks/bench_forward.py --rounds 3 --keepalive-streams 300

Prints tables and a Targets table (met / NOT met / NOT MEASURED) and exits 0. Loopback only;
every server is stopped by PID on exit.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _httpx_client
import _targets as T
import trustme
from _bench import _make_ca
from _client import StreamResult
from _config import FLOOR_TOLERANCE_MS, FLOOR_TOLERANCE_REL
from _harness import Clients, servers
from _proc_tree import TreeRss
from _stats import StreamStats, analyse, fmt_ms, percentile, print_table
from _streams import PATH, BenchStream, chat_stream, request_bytes, write_cassette

RSS_TARGET_MIB = 150.0
UNRELATED_TARGET_MS = 50.0
FLOOR, FWD = "floor", "forward"
LABELS = {FLOOR: "mitmdump passthrough (floor)", FWD: "replayproxy replay (forward)"}
SHAPES = ("raw", "httpx", "httpx-tls")
HEADERS = ["streams", "client", "path", "1st p50", "1st max", "gap p50", "gap p99", "gap max",
           "RSS MiB", "ratio", "errors"]  # fmt: skip


def keepalive_stream(s: BenchStream, every_ns: int = 10_000_000) -> BenchStream:
    """``s`` with what ``--fault keepalive:every=0.01`` adds baked in as recorded frames (an
    SSE comment every 10 ms of every wait), named ``ka-NAME``: the floor server serves it, so
    plain mitmdump relays as many chunks per second as the faulted replay does."""
    frames: list[tuple[int, bytes]] = []
    prev = s.head_ns
    for at, data in s.frames:
        t = prev + every_ns
        while t < at:
            frames.append((t, b": keepalive\n\n"))
            t += every_ns
        frames.append((at, data))
        prev = at
    return BenchStream(f"ka-{s.name}", s.body, s.head_ns, tuple(frames))


@dataclass(frozen=True)
class Tls:
    """The ``httpx-tls`` shape: ``https://`` URLs on the TLS floor server, through CONNECT,
    verified against the proxies' CA (mitmdump intercepts them; the replay answers them)."""

    prefix: str
    ca: str


def _run_row(
    clients: Clients,
    target: T.Target,
    shape: str,
    picked: list[BenchStream],
    by_name: dict[str, BenchStream],
    tls: Tls,
) -> tuple[StreamStats, float, str]:
    """One run of ``len(picked)`` concurrent streams: its stats, peak tree RSS (MiB) and how
    that peak split between the processes ("mitmproxy+origin child")."""
    prefix = tls.prefix if shape == "httpx-tls" else target.absolute or ""
    host = prefix.removeprefix("http://")
    at = time.monotonic_ns() + 200_000_000
    spread = 100_000_000
    n = len(picked)
    timeout = 30 + n * 0.05
    with TreeRss(target.main.pid) as mem:
        if shape == "raw":
            jobs = [(s.name, None, request_bytes(s, host, prefix), at + k * spread // n)
                    for k, s in enumerate(picked)]  # fmt: skip
            results = clients.streams(target.host, target.port, jobs, timeout)
        else:
            hjobs = [(s.name, f"{prefix}{PATH}?{s.query}", s.body, at + k * spread // n)
                     for k, s in enumerate(picked)]  # fmt: skip
            proxy = f"http://{target.host}:{target.port}"
            ca = tls.ca if shape == "httpx-tls" else None
            fut = clients.pool.submit(_httpx_client.run_streams, proxy, hjobs, timeout, ca)
            results = fut.result(timeout + 60)
    split = "+".join(f"{m:.0f}" for m in mem.split_mib)
    return analyse(by_name, results), mem.peak_mib, split


def _unrelated(host: str, port: int, target: str, hosthdr: str) -> float:
    """Milliseconds from connect to the end of the answer to one unrelated request."""
    t0 = time.monotonic_ns()
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {hosthdr}\r\nConnection: close\r\n\r\n".encode())
        while s.recv(65536):
            pass
    return (time.monotonic_ns() - t0) / 1e6


def _keepalive(
    clients: Clients, target: T.Target, picked: list[BenchStream], probes: int
) -> tuple[list[float], int]:
    """Probe an unrelated request ``probes`` times while ``picked`` stream with keepalives;
    returns the probe times (ms) and how many streams failed."""
    prefix = target.absolute or ""
    host = prefix.removeprefix("http://") or f"{target.host}:{target.port}"
    at = time.monotonic_ns() + 200_000_000
    jobs = [(s.name, None, request_bytes(s, host, prefix), at + k * 100_000_000 // len(picked))
            for k, s in enumerate(picked)]  # fmt: skip
    out: list[StreamResult] = []
    th = threading.Thread(
        target=lambda: out.extend(clients.streams(target.host, target.port, jobs, 120)),
        daemon=True,
    )
    th.start()
    # Probes from 0.6 s after the start (every stream is streaming keepalives by then).
    time.sleep(0.8)
    times = []
    for _ in range(probes):
        times.append(_unrelated(target.host, target.port, f"{prefix}/v1/models", host))
        time.sleep(0.15)
    th.join(180)
    return times, sum(1 for r in out if r.error)


def _verdict(ok: bool | None) -> str:
    return "NOT MEASURED" if ok is None else ("met" if ok else "NOT met")


def _within(value: float, floor: float) -> bool | None:
    if math.isnan(value) or math.isnan(floor):
        return None
    return value <= floor * (1 + FLOOR_TOLERANCE_REL) + FLOOR_TOLERANCE_MS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny configuration (seconds)")
    ap.add_argument("--streams", type=int, nargs="+", default=None)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 2)")
    ap.add_argument("--events", type=int, default=None, help="events per stream (default 60)")
    ap.add_argument("--keepalive-streams", type=int, default=None, help="default 200")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    q = args.quick
    counts = args.streams or ([1, 5] if q else [1, 50, 200])
    rounds = args.rounds or (1 if q else 2)
    events = args.events or (8 if q else 60)
    ka_n = args.keepalive_streams or (5 if q else 200)
    t_start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="bench-forward-"))
    print(f"forward replay benchmark ({'quick' if q else 'full'}); python "
          f"{sys.version.split()[0]}; {os.cpu_count()} CPUs; load avg {os.getloadavg()[0]:.2f}; "
          f"{rounds} rounds; streams {counts}; keepalive streams {ka_n}")  # fmt: skip
    variants = [chat_stream(f"chat-{i}", events, seed=i) for i in range(8)]
    by_name = {s.name: s for s in variants}
    cassette = work / "forward.cassette"
    write_cassette(cassette, variants, "https://api.openai.com")
    ka_variants = [keepalive_stream(s) for s in variants]
    ka_cassette = work / "keepalive.cassette"
    write_cassette(ka_cassette, ka_variants, "https://api.openai.com")
    conf = work / "conf"
    _make_ca(conf)
    floor_cert = work / "floor.pem"
    trustme.CA().issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(floor_cert)
    clients = Clients(2)
    stats: dict[tuple[int, str, str], StreamStats] = {}
    rss: dict[tuple[int, str, str], tuple[float, str]] = {}
    ka: dict[str, tuple[list[float], int]] = {}
    try:
        with servers() as running:
            floor_srv = T.floor("floor asyncio", cassette, 1.0, work)
            running.extend(floor_srv.servers)
            ka_floor = T.floor("floor asyncio keepalive", ka_cassette, 1.0, work)
            running.extend(ka_floor.servers)
            tls_floor = T.floor("floor asyncio tls", cassette, 1.0, work, floor_cert)
            running.extend(tls_floor.servers)
            for f in (floor_srv, ka_floor, tls_floor):
                f.wait(60)
            tls = Tls(f"https://127.0.0.1:{tls_floor.port}", str(conf / "mitmproxy-ca-cert.pem"))
            # ssl_insecure: mitmdump does not know the floor's test CA (upstream TLS only).
            mitm = T._mitmdump("mitmdump regular", ["--set", "ssl_insecure=true"], work, True, conf)
            paths = {
                FLOOR: T.Target("mitmdump", 0, [mitm], f"http://127.0.0.1:{floor_srv.port}"),
                FWD: T.replay_cli("forward", cassette, 1.0, work, conf, forward=True),
            }
            fault = ["--fault", "keepalive:every=0.01"]
            ka_paths = {
                # The same mitmdump, relaying the keepalive frames from the floor server.
                "mitmdump (floor)": T.Target(
                    "mitmdump ka", 0, [mitm], f"http://127.0.0.1:{ka_floor.port}"
                ),
                "forward": T.replay_cli("forward ka", cassette, 1.0, work, conf, fault, None, True),
                "base URL": T.replay_cli("base ka", cassette, 1.0, work, conf, fault),
            }
            for t in [*paths.values(), *list(ka_paths.values())[1:]]:
                running.extend(t.servers)
            for t in [*paths.values(), *ka_paths.values()]:
                t.wait(60)
            # Warm-up, discarded: the first httpx client in a process pays its lazy imports
            # and the first flow through a proxy its own first-use costs.
            for shape in SHAPES:
                for key in (FLOOR, FWD):
                    _run_row(clients, paths[key], shape, variants[:1], by_name, tls)
            for _ in range(rounds):
                for n in counts:
                    picked = [variants[i % len(variants)] for i in range(n)]
                    for shape in SHAPES:
                        for key in (FLOOR, FWD):
                            st, peak, split = _run_row(
                                clients, paths[key], shape, picked, by_name, tls
                            )
                            k = (n, shape, key)
                            stats[k] = stats[k].merge(st) if k in stats else st
                            if peak > rss.get(k, (0.0, ""))[0]:
                                rss[k] = (peak, split)
            for name, t in ka_paths.items():
                pool = ka_variants if name.startswith("mitmdump") else variants
                ka_picked = [pool[i % len(pool)] for i in range(ka_n)]
                ka[name] = _keepalive(clients, t, ka_picked, 3 if q else 8)
    finally:
        clients.close()
        shutil.rmtree(work, ignore_errors=True)
    verdicts = _report(counts, rounds, events, stats, rss, ka, ka_n)
    print_table("Targets", ["target", "figure", "verdict"], verdicts)
    print(f"\ntotal {time.monotonic() - t_start:.0f} s; load avg at end {os.getloadavg()[0]:.2f}")
    return 0


def _report(
    counts: list[int],
    rounds: int,
    events: int,
    stats: dict[tuple[int, str, str], StreamStats],
    rss: dict[tuple[int, str, str], tuple[float, str]],
    ka: dict[str, tuple[list[float], int]],
    ka_n: int,
) -> list[list[str]]:
    rows, verdicts = [], []
    for n in counts:
        for shape in SHAPES:
            _, f99, _ = stats[n, shape, FLOOR].summary()
            _, ffirst = stats[n, shape, FLOOR].first()
            for key in (FLOOR, FWD):
                st = stats[n, shape, key]
                peak, split = rss[n, shape, key]
                p50, p99, worst = st.summary()
                first50, first_max = st.first()
                ratio = "-" if key == FLOOR else f"{p99 / f99:.2f}x / {first_max / ffirst:.2f}x"
                rows.append([f"{n}", shape, LABELS[key], fmt_ms(first50), fmt_ms(first_max),
                             fmt_ms(p50), fmt_ms(p99), fmt_ms(worst), f"{peak:.0f} ({split})",
                             ratio, f"{len(st.errors)}"])  # fmt: skip
            fwd = stats[n, shape, FWD]
            _, p99 = fwd.summary()[:2]
            _, first_max = fwd.first()
            clean = not fwd.errors
            verdicts.append([f"{n} streams, {shape}: gap p99 <= floor",
                             f"{fmt_ms(p99)} vs {fmt_ms(f99)} ms",
                             _verdict(_within(p99, f99) and clean)])  # fmt: skip
            verdicts.append([f"{n} streams, {shape}: first-event offset <= floor",
                             f"max {fmt_ms(first_max)} vs {fmt_ms(ffirst)} ms",
                             _verdict(_within(first_max, ffirst) and clean)])  # fmt: skip
            peak = rss[n, shape, FWD][0]
            verdicts.append([f"{n} streams, {shape}: peak RSS <= {RSS_TARGET_MIB:.0f} MB",
                             f"{peak:.0f} MiB", _verdict(peak <= RSS_TARGET_MIB)])  # fmt: skip
    print_table(
        f"1. Forward replay vs mitmdump passthrough, ms ({rounds} rounds pooled, {events}-event "
        f"chat streams; RSS: peak summed VmRSS of the proxy's process tree, MiB, and per "
        f"process at that peak; ratio: gap p99 / first-event max, to the floor)",
        HEADERS,
        rows,
    )
    ka_rows = []
    for name, (times, failed) in ka.items():
        ka_rows.append([name, f"{ka_n}", f"{len(times)}", fmt_ms(percentile(times, 50), 1),
                        fmt_ms(max(times), 1), f"{failed}"])  # fmt: skip
        if name.startswith("mitmdump"):
            continue  # the floor: context for the replay rows, not a target
        verdicts.append([f"{name}: unrelated request under keepalive:every=0.01 x {ka_n}",
                         f"max {fmt_ms(max(times), 1)} ms",
                         _verdict(max(times) < UNRELATED_TARGET_MS)])  # fmt: skip
    print_table(
        "2. Keepalive starvation: an unrelated request (a miss) while N streams run "
        "--fault keepalive:every=0.01, ms from connect to the end of its answer",
        ["mode", "streams", "probes", "p50", "max", "streams failed"],
        ka_rows,
    )
    return verdicts


if __name__ == "__main__":
    sys.exit(main())
