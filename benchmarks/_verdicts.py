"""The targets, judged from the figures of one run. Missing figures are never "met".

Targets (issue 11), each replayproxy mode against the floor of its path (base URL: the plain
asyncio floor; forward proxy: the floor behind plain mitmdump):
- at 1 stream, the worst first-event offset error within 2 ms of the direct floor's;
- at 1 stream, gap p99 within 1.3x the floor's;
- at 50 and 200 streams, gap p99 no worse than the floor's, within a stated allowance
  (``max(0.5 ms, 10% of the floor)``: the scatter of the floors themselves between runs);
- split fidelity 100% on the >= 5 ms-gap stream;
- instant mode in base-URL mode >= 3x mitmproxy's ``--server-replay`` responses/s, with each
  recorded frame its own chunk; forward-proxy instant mode shown next to its floor;
- recording adds <= 1 ms per chunk (p50 latency) over plain mitmdump passthrough.

This module only reads figures (:class:`Figures`); it imports nothing from ``_report``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import _config as B
from _bench import Throughput
from _peers import PeerStats
from _stats import Stats, StreamStats, fmt_ms, percentile

__all__ = ["Figures", "judge"]

NOT_MEASURED = "NOT MEASURED"


@dataclass
class Figures:
    """Everything one run measured, section by section."""

    cfg: B.Config
    timing: Stats
    split: Stats
    tp: dict[str, Throughput | None]
    rec: Stats
    record_check: str
    record_ok: bool | None
    peers: dict[str, PeerStats]
    mem: dict[str, int | None] = field(default_factory=dict)  # path key -> VmHWM KiB


def _verdict(oks: list[bool | None]) -> str:
    if not oks or any(ok is None for ok in oks):
        return NOT_MEASURED
    return "met" if all(oks) else "NOT met"


def _clean(st: StreamStats | None) -> StreamStats | None:
    return None if st is None or st.errors or not st.gap_errors_ns else st


def _first_event(f: Figures) -> list[str]:
    floor = _clean(f.timing.get((1, B.DIRECT_FLOOR)))
    oks: list[bool | None] = []
    parts = []
    for key, name, _ in B.RP_PATHS:
        st = _clean(f.timing.get((1, key)))
        if st is None or floor is None:
            oks.append(None)
            parts.append(f"{name} n/a")
            continue
        worst, floor_worst = st.first()[1], floor.first()[1]
        oks.append(worst <= floor_worst + B.FIRST_EVENT_OVER_FLOOR_MS)
        parts.append(f"{name} {worst:.2f}")
    shown = "n/a" if floor is None else f"{floor.first()[1]:.2f}"
    return [
        "first-event offset error (worst) within 2 ms of the direct floor, 1 stream",
        ", ".join(parts) + f" vs floor {shown} ms",
        _verdict(oks),
    ]


def _gap_p99(f: Figures, n: int) -> list[str]:
    oks: list[bool | None] = []
    parts = []
    for key, name, floor_key in B.RP_PATHS:
        st, fl = _clean(f.timing.get((n, key))), _clean(f.timing.get((n, floor_key)))
        if st is None or fl is None:
            oks.append(None)
            parts.append(f"{name} n/a")
            continue
        p99, floor = st.summary()[1], fl.summary()[1]
        if n == 1:
            oks.append(p99 <= B.ONE_STREAM_P99_OVER_FLOOR * floor)
            parts.append(f"{name} {p99:.2f} vs floor {floor:.2f} ({p99 / floor:.2f}x)")
        else:
            oks.append(p99 <= floor + max(B.FLOOR_TOLERANCE_MS, B.FLOOR_TOLERANCE_REL * floor))
            parts.append(f"{name} {p99:.2f} vs floor {floor:.2f}")
    target = "gap p99 <= 1.3x floor at 1 stream" if n == 1 else f"gap p99 at {n} streams <= floor"
    return [target, "; ".join(parts) + " ms", _verdict(oks)]


def _split(f: Figures) -> list[str]:
    oks: list[bool | None] = []
    parts = []
    for n in f.cfg.split_streams:
        for key, name, _ in B.RP_PATHS:
            st = f.split.get((n, key))
            if st is None or st.errors or not st.reads:
                oks.append(None)
                parts.append(f"{name}@{n} n/a")
            else:
                oks.append(st.exact_reads == st.reads)
                parts.append(f"{name}@{n} {100 * st.fidelity:.1f}%")
    return ["split fidelity 100% at gaps >= 5 ms", ", ".join(parts), _verdict(oks)]


def _instant(f: Figures) -> list[list[str]]:
    mitm = f.tp.get("tp-mitm")
    rows = []
    base = f.tp.get("tp-base")
    if base is None or mitm is None or base.errors or mitm.errors:
        rows.append(["base URL --speed 0 >= 3x mitmproxy server replay", "n/a", NOT_MEASURED])
    else:
        ok = base.rps >= B.INSTANT_OVER_SERVER_REPLAY * mitm.rps and not base.rechunked
        chunks = "each frame a chunk" if not base.rechunked else f"{base.rechunked} re-chunked"
        rows.append(
            [
                "base URL --speed 0 >= 3x mitmproxy server replay",
                f"{base.rps:.0f} vs {mitm.rps:.0f} responses/s ({base.rps / mitm.rps:.2f}x), "
                + chunks,
                _verdict([ok]),
            ]
        )
    fwd, floor = f.tp.get("tp-rp"), f.tp.get("tp-mitm-floor")
    if fwd is None or fwd.errors:
        rows.append(["proxy --speed 0 (reported)", "n/a", NOT_MEASURED])
    else:
        shown = f"{fwd.rps:.0f} responses/s"
        if mitm is not None:
            shown += f", {fwd.rps / mitm.rps:.2f}x server replay"
        if floor is not None and not floor.errors:
            shown += f", {fwd.rps / floor.rps:.2f}x the floor behind mitmdump"
        rows.append(["proxy --speed 0 (no target; before/after: ab_replay.py)", shown, "reported"])
    return rows


def _recording(f: Figures) -> list[str]:
    oks: list[bool | None] = []
    parts = []
    for n in f.cfg.record_streams:
        st, base = f.rec.get((n, "rec-rp")), f.rec.get((n, B.PROXY_FLOOR))
        if st is None or base is None or st.errors or base.errors or not st.latencies_ns:
            oks.append(None)
            parts.append(f"@{n} n/a")
            continue
        d50 = (percentile(st.latencies_ns, 50) - percentile(base.latencies_ns, 50)) / 1e6
        d99 = (percentile(st.latencies_ns, 99) - percentile(base.latencies_ns, 99)) / 1e6
        oks.append(d50 <= B.RECORD_OVERHEAD_MS)
        parts.append(f"@{n}: p50 {d50:+.3f}, p99 {d99:+.3f} ms")
    if f.record_check:
        parts.append(f"cassette: {f.record_check}")
    oks.append(f.record_ok)  # the recording must also be complete and byte-exact
    return ["record overhead <= 1 ms/chunk over mitmdump", "; ".join(parts), _verdict(oks)]


def _peers(f: Figures) -> list[str]:
    parts = []
    for key, name in (
        (B.DIRECT_RP, "base URL"),
        ("peer-reel", "Reel"),
        ("tp-mitm", "server replay"),
        ("peer-vcr", "VCR.py"),
    ):
        st = f.peers.get(key)
        worst = max(st.first_errors_ns) / 1e6 if st and st.first_errors_ns else math.nan
        parts.append(f"{name} {fmt_ms(worst)}")
    return ["first-event error (worst), peers (no target)", ", ".join(parts) + " ms", "reported"]


def judge(f: Figures) -> list[list[str]]:
    rows = [_first_event(f), _gap_p99(f, 1)]
    rows += [_gap_p99(f, n) for n in f.cfg.timing_streams if n > 1]
    rows.append(_split(f))
    rows += _instant(f)
    rows.append(_recording(f))
    rows.append(_peers(f))
    n = max(f.cfg.timing_streams)
    mem = []
    for key, name in ((B.PROXY_RP, "replay (proxy)"), (B.DIRECT_RP, "replay (base URL)")):
        kib = f.mem.get(key)
        mem.append(f"{name} {'n/a' if kib is None else f'{kib / 1024:.0f} MiB'}")
    rows.append([f"peak memory at {n} streams (no target)", ", ".join(mem), "reported"])
    return rows
