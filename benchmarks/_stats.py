"""Turning client reads into the benchmark's figures, and printing them as tables.

Definitions (also in ``benchmarks/README.md``):

- *arrival* of recorded frame ``i`` at the client: the time of the read that delivered the
  frame's last byte.
- *timing error* of frame ``i``: ``|observed gap - recorded gap|``, where the observed gap is
  ``arrival[i] - arrival[i-1]`` and the recorded gap ``offset[i] - offset[i-1]``; for the first
  frame the previous event is the response head (observed: the read that completed the head).
- *split fidelity*: the share of payload-carrying client reads that hold exactly one recorded
  frame (same start, same end); a read that merges two frames or holds a piece of one fails.
- *first-event offset error*: ``|(arrival[0] - sent) - offset[0]|``, ``sent`` the moment the
  client wrote its request: how far the first frame is from its recorded offset, measured
  from the request (latency in front of the schedule shows here, not in the gaps).
- *latency* (recording benchmark): ``arrival[i] - sent[i]``, ``sent`` logged by the origin.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from _client import StreamResult
from _streams import BenchStream

__all__ = ["Stats", "StreamStats", "analyse", "fmt_ms", "percentile", "print_table"]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


@dataclass
class StreamStats:
    gap_errors_ns: list[int] = field(default_factory=list)
    latencies_ns: list[int] = field(default_factory=list)
    reads: int = 0
    exact_reads: int = 0
    frames: int = 0
    streams_ok: int = 0
    errors: list[str] = field(default_factory=list)
    first_errors_ns: list[int] = field(default_factory=list)

    def merge(self, other: StreamStats) -> StreamStats:
        """Pool the samples of two runs of the same configuration."""
        return StreamStats(
            self.gap_errors_ns + other.gap_errors_ns,
            self.latencies_ns + other.latencies_ns,
            self.reads + other.reads,
            self.exact_reads + other.exact_reads,
            self.frames + other.frames,
            self.streams_ok + other.streams_ok,
            self.errors + other.errors,
            self.first_errors_ns + other.first_errors_ns,
        )

    def summary(self) -> tuple[float, float, float]:
        e = self.gap_errors_ns
        return percentile(e, 50) / 1e6, percentile(e, 99) / 1e6, (max(e) / 1e6 if e else math.nan)

    def first(self) -> tuple[float, float]:
        """First-event offset error: p50 and worst, ms."""
        e = self.first_errors_ns
        return percentile(e, 50) / 1e6, (max(e) / 1e6 if e else math.nan)

    @property
    def fidelity(self) -> float:
        return self.exact_reads / self.reads if self.reads else math.nan


# Figures of one section: (concurrent streams, path key) -> stats (None: not measured).
Stats = dict[tuple[int, str], StreamStats | None]


def _arrivals(s: BenchStream, r: StreamResult) -> list[int] | None:
    ends: list[int] = []
    total = 0
    for _, d in s.frames:
        total += len(d)
        ends.append(total)
    got = sum(n for _, n in r.reads)
    if got != total:
        return None
    out: list[int] = []
    j, cum = 0, r.reads[0][1] if r.reads else 0
    for e in ends:
        while cum < e:
            j += 1
            cum += r.reads[j][1]
        out.append(r.reads[j][0])
    return out


def analyse(
    streams: dict[str, BenchStream],
    results: list[StreamResult],
    sendlog: dict[str, list[int]] | None = None,
) -> StreamStats:
    st = StreamStats()
    for r in results:
        if r.error:
            st.errors.append(f"{r.name}: {r.error}")
            continue
        s = streams[r.name]
        arr = _arrivals(s, r)
        if arr is None:
            st.errors.append(f"{r.name}: body size {sum(n for _, n in r.reads)} != {s.size}")
            continue
        st.streams_ok += 1
        st.frames += len(arr)
        st.first_errors_ns.append(abs((arr[0] - r.t_send) - s.frames[0][0]))
        prev_obs, prev_rec = r.t_head, s.head_ns
        for (off, _), a in zip(s.frames, arr, strict=True):
            st.gap_errors_ns.append(abs((a - prev_obs) - (off - prev_rec)))
            prev_obs, prev_rec = a, off
        bounds: set[tuple[int, int]] = set()
        pos = 0
        for _, d in s.frames:
            bounds.add((pos, pos + len(d)))
            pos += len(d)
        pos = 0
        for _, n in r.reads:
            st.reads += 1
            st.exact_reads += (pos, pos + n) in bounds
            pos += n
        if sendlog is not None:
            sent = sendlog.get(str(r.rid), [])
            if len(sent) == len(arr):
                st.latencies_ns.extend(a - t for a, t in zip(arr, sent, strict=True))
            else:
                st.errors.append(f"{r.name}: {len(sent)} sends logged for {len(arr)} frames")
    return st


def fmt_ms(v: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print(line)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
