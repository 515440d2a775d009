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
from _bench import err_cell, missing
from _stats import StreamStats, fmt_ms, percentile, print_table

if TYPE_CHECKING:
    from _bench import Bench
    from _harness import Clients
    from _streams import BenchStream

T = TypeVar("T")
Stats = dict[tuple[int, str], StreamStats | None]

# A "no worse than the floor" comparison on a shared, noisy machine needs a stated allowance:
# run-to-run scatter of the floors themselves is about this much.
FLOOR_TOLERANCE_MS = 0.5
FLOOR_TOLERANCE_REL = 0.10


class Report:
    def __init__(self, b: Bench, clients: Clients) -> None:
        self.b = b
        self.clients = clients
        self.mem: dict[str, int | None] = {}
        self.record_check = ""
        self.record_ok: bool | None = None

    def run(self) -> None:
        timing = _timed(self.timing)
        split = _timed(self.split_fidelity)
        tp = _timed(self.throughput)
        rec = _timed(self.recording)
        self.memory()
        self.judge(timing, split, tp, rec)

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
                    rows.append([str(n), label, "-", "-", "-", "-", "-", missing(self.b, key)])
                    continue
                p50, p99, mx = st.summary()
                rows.append(
                    [
                        str(n),
                        label,
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
            f"1. Timing error |observed gap - recorded gap| at the client, ms "
            f"(OpenAI chat stream, {cfg.chat_events} events, gaps 10-60 ms, "
            f"{cfg.chat_variants} timing variants)",
            ["streams", "path", "p50", "p99", "max", "split fid.", "frames", "errors"],
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
            ["streams", "path", "p50", "p99", "max", "split fid.", "frames", "errors"],
            self._stream_rows(out, cfg.split_streams),
        )
        return out

    def throughput(self) -> dict[str, tuple[float, float, int, str] | None]:
        paths = [
            ("tp-rp", "proxy: replayproxy replay --speed 0"),
            ("tp-rp-co", "proxy: replayproxy replay --speed 0 --fault coalesce"),
            ("tp-mitm", "proxy: mitmdump --server-replay (same flows)"),
            ("tp-mitm-floor", "proxy: floor --speed 0 behind mitmdump passthrough"),
            ("tp-engine", "direct: replayproxy engine --speed 0"),
            ("tp-floor", "direct: floor (plain asyncio) --speed 0"),
        ]
        out = {key: self.b.run_throughput(self.clients, key) for key, _ in paths}
        rows = []
        for key, label in paths:
            r = out[key]
            if r is None:
                rows.append([label, "-", "-", missing(self.b, key)])
            else:
                err = str(r[2]) + (f" ({r[3][:60]})" if r[3] else "")
                rows.append([label, f"{r[0]:.0f}", f"{r[1]:.2f}", err])
        cfg = self.b.cfg
        print_table(
            f"3. Instant mode throughput ({cfg.tp_conns} keep-alive connections, "
            f"{cfg.tp_duration:g} s, chat responses of ~{self.b.chat[0].size / 1024:.0f} KiB)",
            ["path", "responses/s", "MB/s", "errors"],
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

    def _check_recorded(self, out: Stats) -> str:
        """Make sure ``replayproxy record`` really recorded, byte for byte, what it forwarded."""
        if "rec-rp" not in self.b.targets:
            return ""
        from urllib.parse import parse_qs, urlsplit

        from replayproxy import store

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

    # -- verdicts -----------------------------------------------------------------------

    def judge(
        self,
        timing: Stats,
        split: Stats,
        tp: dict[str, tuple[float, float, int, str] | None],
        rec: Stats,
    ) -> None:
        import _verdicts  # imports this module: keep the cycle out of import time

        rows = _verdicts.judge(self, timing, split, tp, rec)
        print_table("Targets", ["target", "measured", "verdict"], rows)


def _timed(section: Callable[[], T]) -> T:
    t0 = time.monotonic()
    out = section()
    print(f"   (section took {time.monotonic() - t0:.1f} s)")
    return out


def _p50(st: StreamStats | None) -> float:
    return math.nan if st is None else percentile(st.latencies_ns, 50) / 1e6
