"""Before/after comparison of ``replayproxy replay``: two checkouts side by side in one run.

For performance work on the replay path. A machine shared with other jobs gives absolute
figures that move from run to run, so this runs, in ONE process and interleaved, the floors,
mitmproxy's own replay, ``replayproxy replay`` from a baseline checkout ("before") and from
this checkout ("after"), and prints each figure next to its floor:

- instant mode (``--speed 0``) throughput: before, after, after with ``--fault coalesce``
  (one write per response), ``mitmdump --server-replay``, the floor behind mitmdump;
- timing error at N concurrent streams (default 200) at recorded speed, with the first
  event's offset error: before, after, both also in forward-proxy mode (``--forward``), the
  floor behind mitmdump and the direct floor.

``replay_cli`` runs base-URL mode (``--upstream``): in a checkout with the engine switch that
is the engine, before it mitmproxy's reverse mode, so before/after compares the two shells.

Usage::

    git archive HEAD replayproxy | tar -x -C /tmp/rp-before    # the baseline package
    python benchmarks/ab_replay.py --baseline /tmp/rp-before [--streams 200] [--rounds 2]

The baseline runs with ``PYTHONPATH=BASELINE`` (its ``replayproxy`` package shadows the
installed one; the log line ``replayproxy from ...`` is not printed, check the server log with
``--keep`` if in doubt). Prints tables and exits 0; loopback only; every server is stopped by
PID before exit.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _targets as T
from _bench import Bench, _make_ca, err_cell
from _config import DUMMY_PORT, FULL, Config
from _harness import Clients, servers
from _stats import StreamStats, fmt_ms, print_table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="directory holding the baseline package")
    ap.add_argument("--middle", type=Path, help="optional second baseline (an intermediate step)")
    ap.add_argument("--streams", type=int, default=200, help="concurrent streams (timing)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds, samples pooled")
    ap.add_argument("--tp-conns", type=int, default=FULL.tp_conns)
    ap.add_argument("--tp-duration", type=float, default=FULL.tp_duration)
    ap.add_argument("--no-timing", action="store_true", help="throughput only")
    ap.add_argument("--no-throughput", action="store_true", help="timing only")
    ap.add_argument(
        "--split", action="store_true", help="time the 5-7 ms split stream instead of chat"
    )
    ap.add_argument(
        "--forward", action="store_true", help="also time forward-proxy mode (mitmproxy)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg = Config(**{**FULL.__dict__, "tp_conns": args.tp_conns, "tp_duration": args.tp_duration})
    workdir = Path(tempfile.mkdtemp(prefix="replayproxy-ab-"))
    clients = Clients(cfg.client_procs)
    try:
        b = Bench(cfg, workdir)
        with servers() as started:
            _launch(b, started, args.baseline, args.middle, not args.no_timing, args.forward)
            _run(b, clients, args)
    finally:
        clients.close()
        if args.keep:
            print(f"work directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _launch(
    b: Bench,
    started: list[T.Server],
    baseline: Path | None,
    middle: Path | None,
    timing: bool,
    forward: bool = False,
) -> None:
    c, w, cd = b.cassette, b.workdir, b.confdir
    _make_ca(cd)
    before = {"PYTHONPATH": str(baseline.resolve())} if baseline else None
    mid = {"PYTHONPATH": str(middle.resolve())} if middle else None
    floors = {"tp-floor": lambda: T.floor("floor speed0", c, 0.0, w)}
    if timing:
        floors["floor"] = lambda: T.floor("floor speed1", c, 1.0, w)
    b._wait(b._launch(floors, started))
    fast, slow = b.targets["tp-floor"], b.targets.get("floor")
    rest = {
        "tp-mitm": lambda: T.mitm_server_replay("mitm server-replay", b.flows, DUMMY_PORT, w, cd),
        "tp-mitm-floor": lambda: T.mitm_passthrough("mitm pass speed0", fast.port, w, cd),
        "tp-after": lambda: T.replay_cli("after speed0", c, 0.0, w, cd),
        "tp-after-co": lambda: T.replay_cli(
            "after speed0 coalesce", c, 0.0, w, cd, ["--fault", "coalesce"]
        ),
    }
    if before:
        rest["tp-before"] = lambda: T.replay_cli("before speed0", c, 0.0, w, cd, env=before)
    if mid:
        rest["tp-mid"] = lambda: T.replay_cli("middle speed0", c, 0.0, w, cd, env=mid)
    if slow is not None:
        rest["mitm-floor"] = lambda: T.mitm_passthrough("mitm pass speed1", slow.port, w, cd)
        rest["after"] = lambda: T.replay_cli("after speed1", c, 1.0, w, cd)
        if before:
            rest["before"] = lambda: T.replay_cli("before speed1", c, 1.0, w, cd, env=before)
        if mid:
            rest["mid"] = lambda: T.replay_cli("middle speed1", c, 1.0, w, cd, env=mid)
        if forward:
            rest["after-fwd"] = lambda: T.replay_cli(
                "after fwd speed1", c, 1.0, w, cd, forward=True
            )
            if before:
                rest["before-fwd"] = lambda: T.replay_cli(
                    "before fwd speed1", c, 1.0, w, cd, env=before, forward=True
                )
    b._wait(b._launch(rest, started))
    for key, why in b.unavailable.items():
        print(f"not measured: {key}: {why[:200]}")


def _run(b: Bench, clients: Clients, args: argparse.Namespace) -> None:
    tp_keys = [
        ("tp-before", "before: replayproxy replay --speed 0"),
        ("tp-mid", "middle: replayproxy replay --speed 0"),
        ("tp-after", "after:  replayproxy replay --speed 0"),
        ("tp-after-co", "after:  replayproxy replay --speed 0 --fault coalesce"),
        ("tp-mitm", "mitmdump --server-replay (one piece per body)"),
        ("tp-mitm-floor", "floor --speed 0 behind mitmdump streaming"),
    ]
    tm_keys = [
        ("floor", "floor (plain asyncio, direct)"),
        ("mitm-floor", "floor behind mitmdump streaming"),
        ("before", "before: replayproxy replay --upstream"),
        ("mid", "middle: replayproxy replay --upstream"),
        ("after", "after:  replayproxy replay --upstream"),
        ("before-fwd", "before: replayproxy replay (forward proxy)"),
        ("after-fwd", "after:  replayproxy replay (forward proxy)"),
    ]
    tp_keys = [(k, label) for k, label in tp_keys if k in b.targets]
    tm_keys = [(k, label) for k, label in tm_keys if k in b.targets]
    tp: dict[str, list[float]] = {k: [] for k, _ in tp_keys}
    errs: dict[str, int] = {k: 0 for k, _ in tp_keys}
    tm: dict[str, StreamStats | None] = {}
    for r in range(args.rounds):
        # Each round starts with a different path, so no path always runs first or last.
        for key, _ in [] if args.no_throughput else _rotated(tp_keys, r):
            res = b.run_throughput(clients, key)
            if res is not None:
                tp[key].append(res.rps)
                errs[key] += res.errors
        if args.no_timing:
            continue
        for key, _ in _rotated(tm_keys, r):
            st = b.run_streams(clients, key, b.split if args.split else b.chat, args.streams)
            prev = tm.get(key)
            tm[key] = st if prev is None or st is None else prev.merge(st)
    ref = tp.get("tp-mitm", [])
    rows = []
    for key, label in tp_keys:
        vals = tp[key]
        if not vals:
            continue
        mean = sum(vals) / len(vals)
        ratio = f"{mean / (sum(ref) / len(ref)):.2f}" if ref else "-"
        runs = " ".join(f"{v:.0f}" for v in vals)
        rows.append([label, f"{mean:.0f}", runs, ratio, str(errs[key])])
    print_table(
        f"Instant mode: responses/s ({args.tp_conns} conns, {args.tp_duration:g} s per run)",
        ["path", "mean", "per round", "x server-replay", "errors"],
        rows,
    )
    if args.no_timing:
        return
    floor = tm.get("mitm-floor")
    rows = []
    for key, label in tm_keys:
        st = tm.get(key)
        if st is None:
            continue
        p50, p99, mx = st.summary()
        f50, fmax = st.first()
        rel = f"{p99 / floor.summary()[1]:.2f}" if floor else "-"
        fid = fmt_ms(100 * st.fidelity, 1) + "%"
        rows.append(
            [label, fmt_ms(f50), fmt_ms(fmax), fmt_ms(p50), fmt_ms(p99), fmt_ms(mx), rel, fid,
             err_cell(st)]
        )  # fmt: skip
    print_table(
        f"Timing error at {args.streams} concurrent {'split' if args.split else 'chat'} streams, "
        f"ms ({args.rounds} rounds pooled); 1st = first event's offset error",
        ["path", "1st p50", "1st max", "p50", "p99", "max", "p99 / mitmdump floor p99",
         "split fid.", "errors"],
        rows,
    )  # fmt: skip


def _rotated(items: list[tuple[str, str]], r: int) -> list[tuple[str, str]]:
    k = r % len(items) if items else 0
    return items[k:] + items[:k]


if __name__ == "__main__":
    t0 = time.monotonic()
    rc = main()
    print(f"total {time.monotonic() - t0:.0f} s")
    sys.exit(rc)
