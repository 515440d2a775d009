"""replayproxy's replay engine (``ReplayServer``) serving a cassette directly, in its own process.

This is the "direct" path of the benchmark: no mitmproxy hop, the engine's own origin matches
requests and executes schedules. Repeated requests for the same stream are served again
(``allow_repeats``), since a benchmark asks for each recorded stream many times.

Run: ``python benchmarks/_engine_server.py CASSETTE [--speed S]``; prints ``PORT <n>`` when
ready and serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import threading

from replayproxy.core.matching import MatchOptions
from replayproxy.engine.server import ReplayServer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cassette")
    ap.add_argument("--speed", type=float, default=1.0)
    args = ap.parse_args()
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    server = ReplayServer(
        args.cassette, speed=args.speed, options=MatchOptions(allow_repeats=True)
    ).start()
    try:
        print("PORT", server.port, flush=True)
        done.wait()
    finally:
        server.stop()
        print(server.summary().line(), flush=True)


if __name__ == "__main__":
    main()
