"""h2c against HTTP/1.1 in base-URL mode: the same streams from one ``replayproxy replay
--upstream`` process, side by side in one run.

HTTP/1.1: one connection per stream (``_client.run_streams``, one timestamp per ``recv``).
h2c: every stream on ONE HTTP/2 connection with prior knowledge (a raw ``h2`` client below,
one timestamp per ``recv``, each DATA frame one read), as ``httpx.Client(http1=False)`` would
multiplex them. Rounds are interleaved (http1, h2c, http1, h2c, ...) and pooled. Prints the
first-event offset error, the gap error p50/p99/max, and the share of reads that were exactly
one recorded frame (HTTP/1.1: per ``recv``; h2c: per DATA frame).

Usage::

    python benchmarks/bench_h2c.py [--streams 1 50 200] [--rounds 2] [--events 60]

Loopback only; the replay server is stopped by PID on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _targets as T
from _client import StreamResult, run_streams
from _harness import servers
from _stats import StreamStats, analyse, fmt_ms, print_table
from _streams import PATH, BenchStream, chat_stream, request_bytes, write_cassette

HOST = "127.0.0.1"
WINDOW = (1 << 31) - 1


async def _h2_streams(port: int, streams: list[BenchStream], timeout: float) -> list[StreamResult]:
    reader, writer = await asyncio.open_connection(HOST, port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.local_settings = h2.settings.Settings(
        client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW}
    )
    conn.initiate_connection()
    conn.increment_flow_control_window(WINDOW - 65535)
    results: dict[int, StreamResult] = {}
    for s in streams:
        sid = conn.get_next_available_stream_id()
        fields = [(":method", "POST"), (":path", f"{PATH}?{s.query}"), (":scheme", "http"),
                  (":authority", HOST), ("content-type", "application/json"),
                  ("accept", "text/event-stream")]  # fmt: skip
        conn.send_headers(sid, fields)
        conn.send_data(sid, s.body, end_stream=True)
        results[sid] = StreamResult(s.name, None)
    # Sent now, all in one write: the client's own framing of the requests is not counted.
    t_send = time.monotonic_ns()
    for r in results.values():
        r.t_send = t_send
    writer.write(conn.data_to_send())
    done: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(done) < len(results) and time.monotonic() < deadline:
            data = await asyncio.wait_for(reader.read(65536), deadline - time.monotonic())
            if not data:
                break
            now = time.monotonic_ns()
            for ev in conn.receive_data(data):
                r = results.get(getattr(ev, "stream_id", 0))
                if r is None:
                    continue
                if isinstance(ev, h2.events.ResponseReceived):
                    r.status, r.t_head = int(dict(ev.headers)[b":status"]), now
                elif isinstance(ev, h2.events.DataReceived):
                    if ev.data:
                        r.reads.append((now, len(ev.data)))
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded | h2.events.StreamReset):
                    done.add(ev.stream_id)
            writer.write(conn.data_to_send())
    except TimeoutError:
        pass
    finally:
        writer.close()
    for sid, r in results.items():
        if sid not in done:
            r.error = "not finished"
        elif r.status != 200:
            r.error = f"HTTP {r.status}"
    return list(results.values())


def run_h2(port: int, streams: list[BenchStream], timeout: float) -> list[StreamResult]:
    gc.collect()
    gc.disable()  # as run_streams: a client pause is charged to the server
    try:
        return asyncio.run(_h2_streams(port, streams, timeout))
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, nargs="+", default=[1, 50, 200])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--events", type=int, default=60)
    args = ap.parse_args()
    variants = [chat_stream(f"c{i}", args.events, seed=i) for i in range(8)]
    by_name = {s.name: s for s in variants}
    work = Path(tempfile.mkdtemp(prefix="bench-h2c-"))
    cassette = work / "h2c.cassette"
    write_cassette(cassette, variants, "https://api.openai.com")
    stats: dict[tuple[int, str], StreamStats] = {}
    started = time.monotonic()
    with servers() as running:
        target = T.replay_cli("replayproxy replay --upstream", cassette, 1, work, work / "conf")
        running.extend(target.servers)
        port = target.servers[0].wait()
        for n in args.streams:
            picked = [variants[i % len(variants)] for i in range(n)]
            timeout = 30 + n * 0.05
            for _ in range(args.rounds):
                at = time.monotonic_ns() + 50_000_000
                jobs = [(s.name, None, request_bytes(s, HOST), at) for s in picked]
                one = analyse(by_name, run_streams(HOST, port, jobs, timeout))
                stats[n, "http1"] = stats[n, "http1"].merge(one) if (n, "http1") in stats else one
                one = analyse(by_name, run_h2(port, picked, timeout))
                stats[n, "h2c"] = stats[n, "h2c"].merge(one) if (n, "h2c") in stats else one
    rows = []
    for (n, path), st in sorted(stats.items()):
        p50, p99, worst = st.summary()
        first50, first_max = st.first()
        rows.append([f"{n}", path, fmt_ms(first50), fmt_ms(first_max), fmt_ms(p50), fmt_ms(p99),
                     fmt_ms(worst), f"{st.fidelity:.1%}", f"{len(st.errors)}"])  # fmt: skip
    print_table(
        f"Base-URL mode, h2c (one connection) vs HTTP/1.1 (one connection per stream), ms "
        f"({args.rounds} rounds pooled, {args.events}-event chat streams)",
        [
            "streams",
            "protocol",
            "1st p50",
            "1st max",
            "gap p50",
            "gap p99",
            "gap max",
            "split fid.",
            "errors",
        ],
        rows,
    )
    print(f"total {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
