"""Peer comparison figures: the same recorded stream replayed by replayproxy and by its peers.

Peers do not keep frames (Reel stores parsed SSE events and re-serializes them; VCR.py and
mitmproxy's server replay keep whole bodies), so the frame-based figures of the other tables
do not apply to them. Here every path is measured by **SSE events** instead (an event ends
with a blank line), from what one client saw of one stream at a time:

- *bytes identical*: the body the client read equals the recorded body, byte for byte;
- *reads = writes*: the client's reads were exactly the recorded frames (same boundaries);
- *first-event offset error*: ``|(arrival of event 0 - request sent) - recorded offset|``;
- *gap error*: ``|observed gap - recorded gap|`` between consecutive events (events that
  arrived together in one recorded frame have a recorded gap of 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from _stats import fmt_ms, percentile
from _streams import BenchStream

__all__ = ["PeerStats", "Seen", "event_offsets", "measure"]


@dataclass(frozen=True)
class Seen:
    """What a client saw of one response: when it sent, each read ``(t_ns, n)``, the body."""

    t_send: int
    reads: tuple[tuple[int, int], ...]
    body: bytes
    error: str = ""


@dataclass
class PeerStats:
    runs: int = 0
    identical: int = 0
    exact: int = 0
    reads: list[int] = field(default_factory=list)
    first_errors_ns: list[int] = field(default_factory=list)
    gap_errors_ns: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def row(self, frames: int) -> list[str]:
        """Cells: bytes identical, reads = writes, first-event p50/max, gap p50/p99/max, runs."""
        if not self.runs:
            return ["-", "-", "-", "-", "-", "-", "-", "0"]

        def share(k: int) -> str:
            return "yes" if k == self.runs else ("no" if k == 0 else f"{k} of {self.runs}")

        reads = sorted(set(self.reads))
        shown = "/".join(str(r) for r in reads[:3]) + ("/..." if len(reads) > 3 else "")
        rw = share(self.exact)
        if self.exact != self.runs:
            rw += f" ({shown} reads for {frames} frames)"
        g = self.gap_errors_ns
        f = self.first_errors_ns
        return [
            share(self.identical),
            rw,
            fmt_ms(percentile(f, 50) / 1e6),
            fmt_ms(max(f) / 1e6 if f else math.nan),
            fmt_ms(percentile(g, 50) / 1e6),
            fmt_ms(percentile(g, 99) / 1e6),
            fmt_ms(max(g) / 1e6 if g else math.nan),
            str(self.runs),
        ]


def event_offsets(stream: BenchStream) -> list[int]:
    """The recorded offset of each SSE event: that of the frame its terminator is in."""
    out: list[int] = []
    tail = b""
    for offset, data in stream.frames:
        buf = tail + data
        n = buf.count(b"\n\n")
        out.extend([offset] * n)
        tail = buf[buf.rfind(b"\n\n") + 2 :] if n else buf
    return out


def _event_arrivals(seen: Seen) -> list[int]:
    """When each event's terminator reached the client (the read that delivered it)."""
    ends = []
    pos = seen.body.find(b"\n\n")
    while pos >= 0:
        ends.append(pos + 2)
        pos = seen.body.find(b"\n\n", pos + 2)
    out: list[int] = []
    j, cum = 0, 0
    for t, n in seen.reads:
        cum += n
        while j < len(ends) and ends[j] <= cum:
            out.append(t)
            j += 1
    return out


def measure(stream: BenchStream, seen: list[Seen], into: PeerStats | None = None) -> PeerStats:
    """Pool the figures of ``seen`` (runs of ``stream``) into a PeerStats."""
    st = into or PeerStats()
    recorded = b"".join(d for _, d in stream.frames)
    offsets = event_offsets(stream)
    bounds: list[int] = []
    pos = 0
    for _, d in stream.frames:
        pos += len(d)
        bounds.append(pos)
    for s in seen:
        if s.error:
            st.errors.append(s.error)
            continue
        arrivals = _event_arrivals(s)
        if len(arrivals) != len(offsets):
            st.errors.append(f"{len(arrivals)} events read, {len(offsets)} recorded")
            continue
        st.runs += 1
        st.identical += s.body == recorded
        ends, cum = [], 0
        for _, n in s.reads:
            cum += n
            ends.append(cum)
        st.exact += ends == bounds and s.body == recorded
        st.reads.append(len(s.reads))
        st.first_errors_ns.append(abs((arrivals[0] - s.t_send) - offsets[0]))
        for i in range(1, len(offsets)):
            observed = arrivals[i] - arrivals[i - 1]
            st.gap_errors_ns.append(abs(observed - (offsets[i] - offsets[i - 1])))
    return st
