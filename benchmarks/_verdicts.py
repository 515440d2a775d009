"""The issue's targets, judged from the figures of one run. Missing figures are never "met".

Targets:
- p99 timing error <= 2 ms at 1 stream (replayproxy direct and proxy);
- at 50 and 200 streams, p99 no worse than the matching floor, within a stated allowance
  (``max(0.5 ms, 10% of the floor)``: the scatter of the floors themselves between runs);
- split fidelity 100% on the >= 5 ms-gap stream;
- instant-mode responses/s at least mitmproxy's own ``--server-replay``;
- recording adds <= 1 ms per chunk (p50 latency) over plain mitmdump passthrough.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import _config as B
from _report import FLOOR_TOLERANCE_MS, FLOOR_TOLERANCE_REL, Stats
from _stats import StreamStats, fmt_ms, percentile

if TYPE_CHECKING:
    from _report import Report

RP_PATHS = [(B.DIRECT_RP, "direct", B.DIRECT_FLOOR), (B.PROXY_RP, "proxy", B.PROXY_FLOOR)]
NOT_MEASURED = "NOT MEASURED"


def _verdict(oks: list[bool | None]) -> str:
    if not oks or any(ok is None for ok in oks):
        return NOT_MEASURED
    return "met" if all(oks) else "NOT met"


def _p99(st: StreamStats | None) -> float | None:
    if st is None or st.errors or not st.gap_errors_ns:
        return None
    return st.summary()[1]


def judge(
    r: Report,
    timing: Stats,
    split: Stats,
    tp: dict[str, tuple[float, float, int, str] | None],
    rec: Stats,
) -> list[list[str]]:
    cfg = r.b.cfg
    rows: list[list[str]] = []

    # 1 stream: absolute bound.
    oks: list[bool | None] = []
    parts = []
    for key, name, _ in RP_PATHS:
        p99 = _p99(timing.get((1, key)))
        oks.append(None if p99 is None else p99 <= B.TARGET_1_STREAM_P99_MS)
        parts.append(f"{name} {fmt_ms(math.nan if p99 is None else p99)}")
    rows.append(["p99 timing error <= 2 ms at 1 stream", ", ".join(parts) + " ms", _verdict(oks)])

    # N streams: no worse than the matching floor.
    for n in (n for n in cfg.timing_streams if n > 1):
        oks, parts = [], []
        for key, name, floor_key in RP_PATHS:
            p99, floor = _p99(timing.get((n, key))), _p99(timing.get((n, floor_key)))
            if p99 is None or floor is None:
                oks.append(None)
                parts.append(f"{name} n/a")
                continue
            allowance = max(FLOOR_TOLERANCE_MS, FLOOR_TOLERANCE_REL * floor)
            oks.append(p99 <= floor + allowance)
            parts.append(f"{name} {p99:.2f} vs floor {floor:.2f}")
        rows.append(
            [f"p99 at {n} streams no worse than floor", "; ".join(parts) + " ms", _verdict(oks)]
        )

    # Split fidelity.
    oks, parts = [], []
    for n in cfg.split_streams:
        for key, name, _ in RP_PATHS:
            st = split.get((n, key))
            if st is None or st.errors or not st.reads:
                oks.append(None)
                parts.append(f"{name}@{n} n/a")
            else:
                oks.append(st.exact_reads == st.reads)
                parts.append(f"{name}@{n} {100 * st.fidelity:.1f}%")
    rows.append(["split fidelity 100% at gaps >= 5 ms", ", ".join(parts), _verdict(oks)])

    # Throughput: streaming every recorded chunk (the target as stated), then like for like
    # (one write per response body, as mitmproxy's server replay sends it).
    mitm = tp.get("tp-mitm")
    for key, name in (
        ("tp-rp", "instant mode >= mitmproxy server replay"),
        ("tp-rp-co", "  same, one write per response (--fault coalesce)"),
    ):
        rp = tp.get(key)
        if rp is None or mitm is None or rp[2] or mitm[2]:
            rows.append([name, "n/a", NOT_MEASURED])
            continue
        rows.append(
            [
                name,
                f"{rp[0]:.0f} vs {mitm[0]:.0f} responses/s ({rp[0] / mitm[0]:.2f}x)",
                _verdict([rp[0] >= mitm[0]]),
            ]
        )

    # Recording overhead.
    oks, parts = [], []
    for n in cfg.record_streams:
        st, base = rec.get((n, "rec-rp")), rec.get((n, B.PROXY_FLOOR))
        if st is None or base is None or st.errors or base.errors or not st.latencies_ns:
            oks.append(None)
            parts.append(f"@{n} n/a")
            continue
        d50 = (percentile(st.latencies_ns, 50) - percentile(base.latencies_ns, 50)) / 1e6
        d99 = (percentile(st.latencies_ns, 99) - percentile(base.latencies_ns, 99)) / 1e6
        oks.append(d50 <= B.RECORD_OVERHEAD_MS)
        parts.append(f"@{n}: p50 {d50:+.3f}, p99 {d99:+.3f} ms")
    if r.record_check:
        parts.append(f"cassette: {r.record_check}")
    oks.append(r.record_ok)  # the recording must also be complete and byte-exact
    rows.append(["record overhead <= 1 ms/chunk over mitmdump", "; ".join(parts), _verdict(oks)])

    # Peak memory: reported, no target.
    n = max(cfg.timing_streams)
    mem = []
    for key, name in ((B.PROXY_RP, "replay (proxy)"), (B.DIRECT_RP, "engine (direct)")):
        t = r.b.targets.get(key)
        kib = None if t is None else r.mem.get(t.main.name)
        mem.append(f"{name} {'n/a' if kib is None else f'{kib / 1024:.0f} MiB'}")
    rows.append([f"peak memory at {n} streams (no target)", ", ".join(mem), "reported"])
    return rows
