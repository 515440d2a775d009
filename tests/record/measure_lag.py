"""Measure per-event lag (client receipt minus simulator write), direct vs through the recorder.

Not a test (pytest does not collect it): it prints figures. From the repository root::

    python -m tests.record.measure_lag

The simulator and the client run in this process and read the same monotonic clock, so each
write's lag is measured exactly: 5 runs of a 12-event Anthropic stream with 20 ms gaps, direct
and through an embedded recording proxy (reverse mode, HTTP).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import httpx

from replayproxy.testing import Behavior, Served, Simulator
from tests.record.helpers import recording

RUNS = 5


def _arrivals(client: httpx.Client, url: str) -> list[tuple[int, int]]:
    """(monotonic ns, bytes so far) after each read."""
    out, total = [], 0
    with client.stream("POST", url, json={"stream": True}) as r:
        for chunk in r.iter_raw():
            total += len(chunk)
            out.append((time.monotonic_ns(), total))
    return out


def _lags_ms(served: Served, arrivals: list[tuple[int, int]]) -> list[float]:
    """For each simulator write: when the client had all its bytes, minus when it was written."""
    lags, written = [], 0
    for write_ns, data in served.writes:
        written += len(data)
        got_ns = next(t for t, total in arrivals if total >= written)
        lags.append((got_ns - write_ns) / 1e6)
    return lags


def main() -> None:
    workdir = Path(tempfile.mkdtemp())
    with Simulator(behavior=Behavior(gap_s=0.02)) as sim:
        for name in ("direct", "recording"):
            lags: list[float] = []
            for run in range(RUNS):
                sim.clear()
                with httpx.Client() as client:
                    if name == "direct":
                        arrivals = _arrivals(client, sim.url + "/v1/messages")
                    else:
                        cassette = workdir / f"{run}.cassette"
                        with recording(cassette, confdir=workdir, upstream=sim.url) as proxy:
                            arrivals = _arrivals(client, proxy.url + "/v1/messages")
                (served,) = sim.wait_served(1)
                lags += _lags_ms(served, arrivals)
            lags.sort()
            print(
                f"{name:>9}: n={len(lags)} median={statistics.median(lags):.2f} ms "
                f"p90={lags[int(len(lags) * 0.9)]:.2f} ms max={lags[-1]:.2f} ms"
            )


if __name__ == "__main__":
    main()
