"""How late the event loop's timers fire: stock asyncio next to replayproxy's serving loop.

    python benchmarks/bench_timers.py               # 5 rounds x 200 timers per loop, ~15 s
    python benchmarks/bench_timers.py --rounds 2    # quicker

Every write of a replay waits for a timer, so a timer's lateness is added to the write's
offset. Stock asyncio waits in ``epoll_wait``, whose timeout is whole milliseconds rounded
up; replayproxy's engine and embedded mitmproxy run on
:class:`~replayproxy._engine.timers.PreciseSelector` (``select()`` on the epoll descriptor, a
microsecond timeout). Each round sleeps the same random delays (2-12 ms, like the gaps of a
chat stream) on one loop of each kind, alternating rounds so machine noise falls on both.
Lateness = when the coroutine resumed minus when the timer was due. A script, not a test:
it prints the figures and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Callable

from _stats import percentile

from replayproxy._engine import timers


async def _lateness(delays: list[float]) -> list[float]:
    loop = asyncio.get_running_loop()
    late = []
    for delay in delays:
        due = loop.time() + delay
        await asyncio.sleep(due - loop.time())
        late.append((loop.time() - due) * 1000)
    return late


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds per loop (default 5)")
    parser.add_argument("--timers", type=int, default=200, help="timers per round (default 200)")
    args = parser.parse_args()
    loops: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
        "stock asyncio (floor)": asyncio.new_event_loop,
        "replayproxy (PreciseSelector)": timers.new_event_loop,
    }
    results: dict[str, list[float]] = {name: [] for name in loops}
    rng = random.Random(11)
    for _ in range(args.rounds):
        delays = [rng.uniform(0.002, 0.012) for _ in range(args.timers)]
        for name, factory in loops.items():
            with asyncio.Runner(loop_factory=factory) as runner:
                results[name] += runner.run(_lateness(delays))
    print(f"Timer lateness, ms ({args.rounds} x {args.timers} timers per loop, "
          f"Python {sys.version.split()[0]})")  # fmt: skip
    print(f"{'loop':<30} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    for name, late in results.items():
        p50, p90, p99 = (percentile(late, q) for q in (50, 90, 99))
        print(f"{name:<30} {p50:7.3f} {p90:7.3f} {p99:7.3f} {max(late):7.3f}")
    floor, ours = (percentile(v, 50) for v in results.values())
    print(f"median lateness: {ours / floor:.2f}x the stock loop's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
