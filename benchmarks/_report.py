"""The benchmark's sequence of measurements, its tables, and the verdict on each target.

Each section prints its table as soon as it is measured. A path that could not be started
(its part missing from this checkout, or it failed to start) shows as ``not measured`` with
the reason, and every target that depends on it is reported as not measured, never as met.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import _config as C
import _verdicts
from _bench import Throughput, err_cell, missing
from _peer_tools import Peers
from _peers import PeerStats, Seen, measure
from _stats import Stats, StreamStats, fmt_ms, percentile, print_table
from _targets import Unavailable

if TYPE_CHECKING:
    from _bench import Bench
    from _harness import Clients, Server
    from _streams import BenchStream

T = TypeVar("T")


class Report:
    def __init__(
        self, b: Bench, clients: Clients, started: list[Server], peers: Peers | None = None
    ) -> None:
        self.b = b
        self.clients = clients
        self.started = started
        self.peers = peers
        self.mem: dict[str, int | None] = {}
        self.record_check = ""
        self.record_ok: bool | None = None

    def run(self) -> None:
        timing = _timed(self.timing)
        split = _timed(self.split_fidelity)
        tp = _timed(self.throughput)
        rec = _timed(self.recording)
        self.memory()
        peers = _timed(self.peer_comparison)
        figures = _verdicts.Figures(
            self.b.cfg, timing, split, tp, rec, self.record_check, self.record_ok, peers
        )
        for key, t in self.b.targets.items():
            figures.mem[key] = self.mem.get(t.main.name)
        print_table("Targets", ["target", "measured", "verdict"], _verdicts.judge(figures))

    # -- sections -----------------------------------------------------------------------

    def _sweep(
        self, streams: list[BenchStream], ns: tuple[int, ...], keys: list[str], log: bool = False
    ) -> Stats:
        """Run every (streams, path) pair; interleave paths, repeat rounds, pool the samples.

        Interleaving means a burst of background load hits the paths evenly instead of
        deciding one path's figures; a single stream is run several times because one run
        of it yields only a few dozen gaps.
        """
        cfg = self.b.cfg
        out: Stats = {}
        for _ in range(cfg.rounds):
            for n in ns:
                for key in keys:
                    for _ in range(cfg.single_repeats if n == 1 else 1):
                        st = self.b.run_streams(self.clients, key, streams, n, log=log)
                        prev = out.get((n, key))
                        out[(n, key)] = st if prev is None or st is None else prev.merge(st)
        return out

    def _stream_rows(self, stats: Stats, ns: tuple[int, ...]) -> list[list[str]]:
        rows = []
        for n in ns:
            for key, label, _ in C.TIMED_PATHS:
                st = stats.get((n, key))
                if st is None:
                    rows.append([str(n), label, *["-"] * 7, missing(self.b, key)])
                    continue
                p50, p99, mx = st.summary()
                f50, fmax = st.first()
                rows.append(
                    [
                        str(n),
                        label,
                        fmt_ms(f50),
                        fmt_ms(fmax),
                        fmt_ms(p50),
                        fmt_ms(p99),
                        fmt_ms(mx),
                        fmt_ms(100 * st.fidelity, 1) + "%",
                        str(st.frames),
                        err_cell(st),
                    ]
                )
        return rows

    def timing(self) -> Stats:
        cfg = self.b.cfg
        out = self._sweep(self.b.chat, cfg.timing_streams, [k for k, _, _ in C.TIMED_PATHS])
        print_table(
            f"1. Timing error at the client, ms: first event's offset from the request "
            f"(1st), and |observed gap - recorded gap| (OpenAI chat stream, "
            f"{cfg.chat_events} events, gaps 10-60 ms, {cfg.chat_variants} timing variants)",
            _STREAM_HEADERS,
            self._stream_rows(out, cfg.timing_streams),
        )
        return out

    def memory(self) -> None:
        """Peak RSS of every server process over the whole run (VmHWM is a high-water mark)."""
        rows = []
        for key, t in self.b.targets.items():
            for srv in t.servers:
                kib = self.mem.get(srv.name) if srv.proc.poll() is not None else srv.vm_hwm_kib()
                self.mem[srv.name] = kib
                mib = "n/a" if kib is None else f"{kib / 1024:.1f}"
                rows.append([srv.name, key, str(srv.pid), mib, srv.crashed()[:120]])
        n = max(self.b.cfg.timing_streams)
        print_table(
            f"5. Peak memory (VmHWM from /proc/PID/status) of each server process over the run; "
            f"speed-1 servers peaked at {n} concurrent streams",
            ["process", "role", "pid", "VmHWM MiB", "crashed?"],
            rows,
        )

    def split_fidelity(self) -> Stats:
        cfg = self.b.cfg
        out = self._sweep(self.b.split, cfg.split_streams, [k for k, _, _ in C.TIMED_PATHS])
        print_table(
            f"2. Split fidelity: share of client reads holding exactly one recorded frame "
            f"(OpenAI Responses stream, {cfg.split_frames} frames cut mid-event and mid-UTF-8, "
            f"gaps 5-7 ms); timing error in ms",
            _STREAM_HEADERS,
            self._stream_rows(out, cfg.split_streams),
        )
        return out

    def throughput(self) -> dict[str, Throughput | None]:
        paths = [
            ("tp-base", "base URL: replayproxy replay --speed 0 (engine)"),
            ("tp-rp", "proxy: replayproxy replay --speed 0 (forward)"),
            ("tp-rp-co", "proxy: replayproxy replay --speed 0 --fault coalesce"),
            ("tp-mitm", "proxy: mitmdump --server-replay (same flows)"),
            ("tp-mitm-floor", "proxy: floor --speed 0 behind mitmdump passthrough"),
            ("tp-floor", "direct: floor (plain asyncio) --speed 0"),
        ]
        out = {key: self.b.run_throughput(self.clients, key) for key, _ in paths}
        ref = out.get("tp-mitm")
        rows = []
        for key, label in paths:
            r = out[key]
            if r is None:
                rows.append([label, "-", "-", "-", "-", missing(self.b, key)])
                continue
            err = str(r.errors) + (f" ({r.first_error[:60]})" if r.first_error else "")
            ratio = f"{r.rps / ref.rps:.2f}" if ref and ref.rps else "n/a"
            chunks = "yes" if not r.rechunked else f"no ({r.rechunked} responses)"
            rows.append([label, f"{r.rps:.0f}", f"{r.mbps:.2f}", ratio, chunks, err])
        cfg = self.b.cfg
        print_table(
            f"3. Instant mode throughput ({cfg.tp_conns} keep-alive connections, "
            f"{cfg.tp_duration:g} s, chat responses of ~{self.b.chat[0].size / 1024:.0f} KiB); "
            f"'each frame a chunk': every response came in its recorded frames, one chunk each",
            ["path", "responses/s", "MB/s", "x server-replay", "each frame a chunk", "errors"],
            rows,
        )
        return out

    def recording(self) -> Stats:
        paths = [
            (C.DIRECT_FLOOR, "direct (client -> floor origin)"),
            (C.PROXY_FLOOR, "plain mitmdump passthrough"),
            ("rec-rp", "replayproxy record"),
        ]
        cfg = self.b.cfg
        out = self._sweep(self.b.chat, cfg.record_streams, [k for k, _ in paths], log=True)
        rows = []
        for n in cfg.record_streams:
            base = out[(n, C.DIRECT_FLOOR)]
            mitm = out[(n, C.PROXY_FLOOR)]
            for key, label in paths:
                st = out[(n, key)]
                if st is None:
                    rows.append([str(n), label, "-", "-", "-", "-", missing(self.b, key)])
                    continue
                p50 = percentile(st.latencies_ns, 50) / 1e6
                p99 = percentile(st.latencies_ns, 99) / 1e6
                over_direct = p50 - _p50(base)
                over_mitm = p50 - _p50(mitm) if key == "rec-rp" else math.nan
                rows.append(
                    [
                        str(n),
                        label,
                        fmt_ms(p50, 3),
                        fmt_ms(p99, 3),
                        fmt_ms(over_direct, 3),
                        fmt_ms(over_mitm, 3),
                        err_cell(st),
                    ]
                )
        print_table(
            "4. Recording overhead: per-chunk latency, origin write -> client read, ms "
            f"(chat stream, {cfg.chat_events} events)",
            ["streams", "path", "p50", "p99", "p50 over direct", "p50 over mitmdump", "errors"],
            rows,
        )
        self.record_check = self._check_recorded(out)
        if self.record_check:
            print(f"   recorded cassette: {self.record_check}")
        return out

    def peer_comparison(self) -> dict[str, PeerStats]:
        """6. The same stream replayed by each replayer and by the floor, measured by events."""
        b = self.b
        stream = b.chat[0]
        runs = b.cfg.peer_runs
        out: dict[str, PeerStats] = {}
        why: dict[str, str] = {}
        rows_for = [
            (C.DIRECT_FLOOR, "client straight to the floor server (floor)"),
            (C.DIRECT_RP, "replayproxy, base URL (engine)"),
            (C.PROXY_RP, "replayproxy, forward proxy (mitmproxy)"),
            ("tp-mitm", "mitmproxy --server-replay"),
            ("peer-reel", "Reel (reel-vcr) replay"),
            ("peer-vcr", "VCR.py (httpx, in the client)"),
        ]
        floor = b.targets.get(C.DIRECT_FLOOR)
        if self.peers is not None and floor is not None:
            try:
                target = self.peers.reel(b.workdir, floor.port, stream, self.clients, self.started)
                b.targets["peer-reel"] = target.wait(60)
            except (Unavailable, RuntimeError) as e:
                why["peer-reel"] = str(e)
            try:
                seen = self.peers.vcr(b.workdir, floor.port, stream, runs)
                out["peer-vcr"] = measure(stream, seen)
            except (Unavailable, OSError, ValueError) as e:
                why["peer-vcr"] = str(e)
        else:
            why["peer-reel"] = why["peer-vcr"] = "the floor did not start"
        for _ in range(runs):
            for key, _label in rows_for:
                if key == "peer-vcr" or key in why:
                    continue
                results = b.stream_results(self.clients, key, [stream], 1, keep=True)
                if results is None:
                    why[key] = b.unavailable.get(key, "unavailable")
                    continue
                seen = [Seen(r.t_send, tuple(r.reads), r.body, r.error) for r in results]
                out[key] = measure(stream, seen, out.get(key))
        rows = []
        for key, label in rows_for:
            st = out.get(key)
            if st is None or not st.runs:
                reason = why.get(key) or (st.errors[0] if st and st.errors else "no runs")
                rows.append([label, *["-"] * 8, f"not measured: {reason[:90]}"])
                continue
            err = str(len(st.errors)) + (f" ({st.errors[0][:50]})" if st.errors else "")
            rows.append([label, *st.row(len(stream.frames)), err])
        print_table(
            f"6. Peers: one {stream.name} stream ({len(stream.frames)} frames, "
            f"{(stream.frames[-1][0]) / 1e9:.2f} s) at a time, {runs} runs, measured by SSE "
            f"events; first-event offset and gap errors in ms",
            ["replayer", "bytes identical", "reads = writes", "1st p50", "1st max",
             "gap p50", "gap p99", "gap max", "runs", "errors"],
            rows,
        )  # fmt: skip
        return out

    def _check_recorded(self, out: Stats) -> str:
        """Make sure ``replayproxy record`` really recorded, byte for byte, what it forwarded."""
        if "rec-rp" not in self.b.targets:
            return ""
        from urllib.parse import parse_qs, urlsplit

        from replayproxy import _store as store

        path = self.b.workdir / "recorded.cassette"
        want = sum(st.streams_ok for (_, k), st in out.items() if k == "rec-rp" and st)
        srv = self.b.targets["rec-rp"].main
        self.mem[srv.name] = srv.vm_hwm_kib()
        try:
            srv.stop()  # flush and close the cassette
            got = store.load(path).interactions
        except Exception as e:
            return f"could not load {path.name}: {e}"
        exact = 0
        for it in got:
            name = parse_qs(urlsplit(it.request.url).query).get("bench", [""])[0]
            s = self.b.by_name.get(name)
            exact += (
                s is not None
                and it.response is not None
                and it.response.body == b"".join(d for _, d in s.frames)
            )
        frames = sum(len(i.frames) for i in got)
        self.record_ok = exact == len(got) == want
        return (
            f"{len(got)} interactions ({want} streams were read), "
            f"{exact} with the body byte-exact, {frames} frames"
        )


_STREAM_HEADERS = [
    "streams", "path", "1st p50", "1st max", "p50", "p99", "max", "split fid.", "frames", "errors",
]  # fmt: skip


def _timed(section: Callable[[], T]) -> T:
    t0 = time.monotonic()
    out = section()
    print(f"   (section took {time.monotonic() - t0:.1f} s)")
    return out


def _p50(st: StreamStats | None) -> float:
    return math.nan if st is None else percentile(st.latencies_ns, 50) / 1e6
