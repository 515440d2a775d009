"""WebSocket replay timing: how closely replayed server messages keep their recorded delay
relative to the client message they answer.

    python benchmarks/bench_websocket.py             # 60 sessions per path, ~2 min
    python benchmarks/bench_websocket.py --runs 20   # quicker, a wider interval

A Realtime-shaped session is recorded once from the local Realtime simulator
(``replayproxy.testing._realtime``) through the recorder addon in an embedded mitmproxy. It is
then replayed ``--runs`` times at speed 1 on each path, to a raw ``websockets`` client (the
cheapest real client: the openai SDK adds its own parsing time to every message):

- ``direct``: :class:`~replayproxy._engine.server.ReplayServer` in this process, no mitmproxy
  (what the pytest plugin and ``use_cassette`` run in base-URL mode);
- ``proxy``: the replay addon in an embedded mitmproxy in this process, reverse mode (the
  pytest plugin's proxy mode);
- ``direct-cli``: ``replayproxy replay --upstream URL`` in a process of its own (base-URL mode
  of the CLI: the replay engine);
- ``proxy-cli``: ``replayproxy replay`` in a process of its own, the client going through it
  as a forward proxy (``CONNECT``);
- ``floor``: ``direct`` at ``--speed 0``, where every delay should be 0: what is observed is
  the round trip and processing time of this client and engine, the error no replay avoids.

In this process the client's threads and the server's share one interpreter (and its GIL),
as in a test suite using the plugin; the ``-cli`` paths are what a client in any language
gets from the CLI. Every round runs one session on each path in turn, so noise from the
machine falls on all of them.

*Timing error* of a server message = ``|observed delay - recorded delay|``, where the delay is
measured from the client's send of the message it answers (turn 0: from the moment the upgrade
completed); the recorded delay is the one in the cassette. A script, not a test: it prints the
figures and exits 0.

The p99 is the pooled samples' 99th percentile; beside it, a 95 % interval from resampling
whole sessions (bootstrap, seeded): a p99 rests on its dozen worst samples, and a stall of the
machine makes several messages of one session late together, so the interval shows how far
another run of the same length could land. With the old default of 20 sessions (400
samples) the p99 was the 4th-worst sample and moved by 3 ms between quiet runs.

The breakdown below the table splits the lateness of the server messages that answer a client
message (signed, median / p99) on each path: *engine* = when the engine wrote the message
minus (the client's send + the recorded delay), *outbound* = when the client read it minus
when the engine wrote it; for the proxy path also *absorbed* = how long after mitmproxy had
the client's message the engine read it (the inbound hop, which the engine's clock does not
count: see docs/guides/websocket.md). It wraps the engine's frame encoder and the replay addon's
arrival channel to see those times; nothing else is changed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import Server, bin_path, port_from_log
from _stats import percentile
from websockets.sync.client import connect

import replayproxy._engine.websocket as engine_ws
import replayproxy._mitm.addons.replayer as replayer_mod
from replayproxy import _store as store
from replayproxy._core.websocket.conversation import plan_session
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing._realtime import RealtimeSimulator

PATH = "/v1/realtime?model=gpt-realtime"
ITEM = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}
CLIENT = [
    {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["text"]}},
    {"type": "conversation.item.create", "item": ITEM},
    {"type": "response.create"},
]
REPLIES = [1, 2, 0]  # server messages to read after each client message (0: until response.done)


def exchange(url: str, proxy: str | None = None) -> list[tuple[float, float]]:
    """Run the conversation; return (anchor, read) monotonic times of each server message."""
    times: list[tuple[float, float]] = []
    with connect(url, open_timeout=10, proxy=proxy) as ws:
        anchor = time.monotonic()
        ws.recv(timeout=10)
        times.append((anchor, time.monotonic()))
        for event, replies in zip(CLIENT, REPLIES, strict=True):
            anchor = time.monotonic()
            ws.send(json.dumps(event))
            n = 0
            while True:
                doc: Any = json.loads(ws.recv(timeout=10))
                times.append((anchor, time.monotonic()))
                n += 1
                if n == replies or (replies == 0 and doc["type"] == "response.done"):
                    break
    return times


def conversation(url: str, proxy: str | None = None) -> list[float]:
    """Run the conversation; return each server message's delay after its anchor (s)."""
    return [read - anchor for anchor, read in exchange(url, proxy)]


def cli_server(cassette: Path, work: Path, *extra: str) -> Server:
    """``replayproxy replay CASSETTE`` in a process of its own, listening on a free port."""
    argv = [bin_path("replayproxy"), "replay", str(cassette), "--listen", "127.0.0.1:0",
            "--allow-repeats", "--confdir", str(work), *extra]  # fmt: skip
    server = Server(f"replay {' '.join(extra) or 'forward'}", argv,
                    port_from_log(r"listening on http://[^:\s]+:(\d+)"), work)  # fmt: skip
    server.wait()
    return server


class Probe:
    """When the engine wrote each server message, and how long after mitmproxy had each
    client message the engine read it: the engine's frame encoder and the replay addon's
    arrival channel, wrapped."""

    def __init__(self) -> None:
        self.writes: list[float] = []
        self.absorbed: list[float] = []
        encode, probe = engine_ws.encode_frames, self

        def encode_frames(text: bool, data: bytes, fragments: tuple[int, ...] = ()) -> bytes:
            probe.writes.append(time.monotonic())
            return encode(text, data, fragments)

        class Arrivals(engine_ws.ClientArrivals):
            def take(self, data: bytes) -> float | None:
                at = super().take(data)
                if at is not None:
                    probe.absorbed.append((time.monotonic() - at) * 1000)
                return at

        engine_ws.encode_frames = encode_frames
        replayer_mod.ClientArrivals = Arrivals  # type: ignore[attr-defined]

    def split(self, url: str, expected: list[float]) -> tuple[list[float], list[float]]:
        """Run the conversation; (engine, outbound) lateness in ms of the answering messages."""
        self.writes.clear()
        times = exchange(url)
        engine, outbound = [], []
        answering = range(1, len(times))  # times[0], turn 0, answers no client message
        for i in answering:
            (anchor, read), wrote = times[i], self.writes[i]
            engine.append((wrote - anchor - expected[i]) * 1000)
            outbound.append((read - wrote) * 1000)
        return engine, outbound


def errors_ms(got: list[float], expected: list[float]) -> list[float]:
    """Each message's timing error, ms: |observed delay - recorded delay|."""
    return [abs(g - e) * 1000 for g, e in zip(got, expected, strict=True)]


def recorded_delays(cassette: Path) -> list[float]:
    (it,) = store.load(cassette).interactions
    assert it.websocket is not None and it.response is not None
    plan = plan_session(it.websocket, it.response.head_offset_ns)
    return [d / 1e9 for turn in plan.turns for d, _ in turn.replies]


def p99_interval(sessions: list[list[float]], draws: int = 2000) -> tuple[float, float]:
    """95 % bootstrap interval of the pooled p99, resampling whole sessions (seeded)."""
    rng = random.Random(99)
    p99s = sorted(
        percentile([v for k in rng.choices(range(len(sessions)), k=len(sessions))
                    for v in sessions[k]], 99)
        for _ in range(draws)
    )  # fmt: skip
    return p99s[int(0.025 * draws)], p99s[int(0.975 * draws) - 1]


def _median_p99(values: list[float]) -> str:
    return f"{percentile(values, 50):.2f} / {percentile(values, 99):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="sessions per path (default 60)")
    parser.add_argument(
        "--breakdown-runs", type=int, default=5, help="extra sessions per path for the breakdown"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ws-"))
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def run(args: argparse.Namespace, work: Path) -> None:
    """Record the session into ``work``, replay it on every path, print the figures."""
    cassette = work / "realtime.cassette"
    with RealtimeSimulator(ttfb_ms=150, gap_ms=20) as sim:
        opts = {"replayproxy_record": str(cassette), "connection_strategy": "lazy"}
        with EmbeddedProxy([Recorder()], mode=f"reverse:{sim.url}", confdir=work,
                           options=opts) as proxy:  # fmt: skip
            conversation(proxy.url.replace("http", "ws", 1) + PATH)
    expected = recorded_delays(cassette)
    paths = ("floor", "direct", "proxy", "direct-cli", "proxy-cli")
    results: dict[str, list[list[float]]] = {name: [] for name in paths}  # one list a session
    replayer = Replayer()
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(EmbeddedProxy(
            [replayer], mode="reverse:http://127.0.0.1:9", confdir=work,
            options={"connection_strategy": "lazy"}))  # fmt: skip
        direct_cli = cli_server(cassette, work, "--upstream", "http://127.0.0.1:9")
        stack.callback(direct_cli.stop)
        proxy_cli = cli_server(cassette, work)
        stack.callback(proxy_cli.stop)
        for _ in range(args.runs):
            # The floor: the same client and engine with nothing to wait for (--speed 0);
            # every observed delay is the round trip and processing no replay can avoid.
            with ReplayServer(cassette, speed=0) as server:
                got = conversation(server.url.replace("http", "ws", 1) + PATH)
            results["floor"].append([g * 1000 for g in got])
            with ReplayServer(cassette) as server:
                got = conversation(server.url.replace("http", "ws", 1) + PATH)
            results["direct"].append(errors_ms(got, expected))
            replayer.use(ReplaySession(cassette))
            got = conversation(proxy.url.replace("http", "ws", 1) + PATH)
            results["proxy"].append(errors_ms(got, expected))
            got = conversation(f"ws://127.0.0.1:{direct_cli.port}{PATH}")
            results["direct-cli"].append(errors_ms(got, expected))
            # Through the CLI's forward proxy: the recorded host is never contacted.
            got = conversation(f"ws://127.0.0.1:9{PATH}", f"http://127.0.0.1:{proxy_cli.port}")
            results["proxy-cli"].append(errors_ms(got, expected))
    print(f"WebSocket replay timing error, {args.runs} sessions x {len(expected)} server "
          f"messages per path (Python {sys.version.split()[0]})")  # fmt: skip
    heads = " ".join(f"{h:>8}" for h in ("p50 ms", "p90 ms", "p99 ms", "max ms"))
    print(f"{'path':<11} {heads}   p99 95 % interval")
    p99s: dict[str, tuple[float, float, float]] = {}  # p99, interval low, interval high
    for name, sessions in results.items():
        errors = [v for session in sessions for v in session]
        p50, p90, p99 = (percentile(errors, q) for q in (50, 90, 99))
        low, high = p99_interval(sessions)
        p99s[name] = (p99, low, high)
        cells = " ".join(f"{v:8.2f}" for v in (p50, p90, p99, max(errors)))
        print(f"{name:<11} {cells}   {low:.2f}-{high:.2f}")
    for name in paths[1:]:
        p99, low, high = p99s[name]
        print(f"target p99 <= 5 ms, {name}: {'met' if p99 <= 5 else 'NOT met'} ({p99:.2f}; "
              f"95 % interval {low:.2f}-{high:.2f})")  # fmt: skip
    if args.breakdown_runs > 0:
        breakdown(cassette, work, expected, args.breakdown_runs)


def breakdown(cassette: Path, work: Path, expected: list[float], runs: int) -> None:
    """Print where the lateness of answering messages goes (see the module docstring)."""
    probe = Probe()  # wraps from now on: the figures above were taken without it
    split: dict[str, tuple[list[float], list[float]]] = {"direct": ([], []), "proxy": ([], [])}
    for _ in range(runs):
        with ReplayServer(cassette) as server:
            engine, outbound = probe.split(server.url.replace("http", "ws", 1) + PATH, expected)
        split["direct"][0].extend(engine)
        split["direct"][1].extend(outbound)
    replayer = Replayer()
    with EmbeddedProxy([replayer], mode="reverse:http://127.0.0.1:9", confdir=work,
                       options={"connection_strategy": "lazy"}) as proxy:  # fmt: skip
        for _ in range(runs):
            replayer.use(ReplaySession(cassette))
            engine, outbound = probe.split(proxy.url.replace("http", "ws", 1) + PATH, expected)
            split["proxy"][0].extend(engine)
            split["proxy"][1].extend(outbound)
    print(f"lateness of answering messages, {runs} more sessions per path, median / p99 ms:")
    for name, (engine, outbound) in split.items():
        line = f"{name:<8} engine {_median_p99(engine)}   outbound {_median_p99(outbound)}"
        if name == "proxy" and probe.absorbed:
            line += f"   absorbed {_median_p99(probe.absorbed)}"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
