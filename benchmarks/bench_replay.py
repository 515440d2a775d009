"""Replay benchmarks: timing error, split fidelity, instant-mode throughput, recording overhead
and peak memory of replayproxy, each next to its floor, measured side by side in one run.

Usage::

    python benchmarks/bench_replay.py            # full run (< 5 min on 2 cores)
    python benchmarks/bench_replay.py --peers    # also Reel and VCR.py (own venv, pip)
    python benchmarks/bench_replay.py --quick    # tiny configuration (smoke test)
    python benchmarks/bench_replay.py --rounds 4 # more samples for the p99s (~1.5 min more)

Prints tables and exits 0; ``benchmarks/README.md`` explains every figure. Loopback only;
every process started here is stopped by PID before exit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Bench
from _config import FULL, QUICK, Config
from _harness import Clients, servers
from _peer_tools import Peers
from _report import Report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny configuration (seconds)")
    ap.add_argument("--client-procs", type=int, default=None, help="client processes (default 2)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="times the sequence of paths is run, samples pooled (default 2; --quick 1)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, files)")
    ap.add_argument(
        "--peers",
        action="store_true",
        help="compare with Reel and VCR.py: pip-install them into a venv of their own "
        "($REPLAYPROXY_BENCH_PEERS, default ~/.cache/replayproxy/bench-peers-pyX.Y) first",
    )
    args = ap.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the finally blocks below stop every server we started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg = QUICK if args.quick else FULL
    if args.client_procs:
        cfg = Config(**{**cfg.__dict__, "client_procs": args.client_procs})
    if args.rounds is not None:
        if args.rounds < 1:
            ap.error("--rounds must be at least 1")
        cfg = Config(**{**cfg.__dict__, "rounds": args.rounds})
    t_start = time.monotonic()
    load0 = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="replayproxy-bench-"))
    print(f"replayproxy replay benchmarks ({'quick' if args.quick else 'full'}); python "
          f"{sys.version.split()[0]}; {os.cpu_count()} CPUs; load avg {load0[0]:.2f}; "
          f"{cfg.client_procs} client processes; {cfg.rounds} rounds")  # fmt: skip
    peers = Peers(wanted=args.peers)
    if args.peers and peers.problem:
        print(f"   peers: {peers.problem}")
    clients = Clients(cfg.client_procs)
    try:
        b = Bench(cfg, workdir)
        with servers() as started:
            t0 = time.monotonic()
            b.launch(started)
            print(f"   ({len(started)} servers started in {time.monotonic() - t0:.1f} s)")
            Report(b, clients, started, peers).run()
    finally:
        clients.close()
        if args.keep:
            print(f"\nwork directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"\ntotal {time.monotonic() - t_start:.0f} s; load avg at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
