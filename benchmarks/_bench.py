"""One benchmark run's state: the recorded streams, their files, the servers, the runs.

:meth:`Bench.launch` starts every server through its real shell; :meth:`Bench.run_streams`
and :meth:`Bench.run_throughput` drive the client processes against one of them.
"""

from __future__ import annotations

import itertools
import json
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import _targets as T
from _client import StreamResult
from _config import BASE_URL, DIRECT_FLOOR, DIRECT_RP, DUMMY_PORT, PROXY_FLOOR, PROXY_RP, Config
from _harness import Clients, Server
from _stats import StreamStats, analyse
from _streams import BenchStream, build_streams, request_bytes, write_cassette, write_flows

__all__ = ["Bench", "Throughput", "err_cell", "missing"]


@dataclass(frozen=True)
class Throughput:
    """One instant-mode run: responses/s, MB/s, client errors, responses not chunked as
    recorded (each frame its own chunk)."""

    rps: float
    mbps: float
    errors: int
    first_error: str
    rechunked: int


class Bench:
    def __init__(self, cfg: Config, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.confdir = workdir / "mitmproxy-conf"
        self.streams = build_streams(cfg.chat_events, cfg.chat_variants, cfg.split_frames)
        self.by_name = {s.name: s for s in self.streams}
        self.chat = [s for s in self.streams if s.name.startswith("chat-")]
        self.split = [s for s in self.streams if s.name.startswith("split-")]
        self.cassette = workdir / "bench.cassette"
        self.flows = workdir / "bench.flows"
        write_cassette(self.cassette, self.streams, BASE_URL)
        write_flows(self.flows, self.streams, "127.0.0.1", DUMMY_PORT)
        self.rids = itertools.count(1)
        self.unavailable: dict[str, str] = {}
        self.targets: dict[str, T.Target] = {}

    # -- set-up -------------------------------------------------------------------------

    def launch(self, started: list[Server]) -> None:
        """Start every server, in parallel; note the ones that cannot run (never fatal).

        The floors come first (they start in a fraction of a second) because the mitmdump
        baselines and the recorder need the floor's port as their upstream.
        """
        c, w, cd = self.cassette, self.workdir, self.confdir
        _make_ca(cd)
        floors: dict[str, Callable[[], T.Target]] = {
            DIRECT_FLOOR: lambda: T.floor("floor asyncio", c, 1.0, w),
            "tp-floor": lambda: T.floor("floor asyncio speed0", c, 0.0, w),
        }
        if not self.cfg.throughput_context:
            del floors["tp-floor"]
        self._wait(self._launch(floors, started))
        floor = self.targets[DIRECT_FLOOR]  # KeyError here: the floor itself failed to start
        fast = self.targets.get("tp-floor")
        rest: dict[str, Callable[[], T.Target]] = {
            DIRECT_RP: lambda: T.replay_cli("replayproxy replay base-url", c, 1.0, w, cd),
            PROXY_RP: lambda: T.replay_cli(
                "replayproxy replay forward", c, 1.0, w, cd, forward=True
            ),
            "tp-base": lambda: T.replay_cli("replayproxy replay base-url speed0", c, 0.0, w, cd),
            "tp-rp": lambda: T.replay_cli(
                "replayproxy replay forward speed0", c, 0.0, w, cd, forward=True
            ),
            # Like for like with --server-replay: one write per response body.
            "tp-rp-co": lambda: T.replay_cli(
                "replayproxy replay forward speed0 coalesce",
                c,
                0.0,
                w,
                cd,
                ["--fault", "coalesce"],
                forward=True,
            ),
            "tp-mitm": lambda: T.mitm_server_replay(
                "mitmdump server-replay", self.flows, DUMMY_PORT, w, cd
            ),
            PROXY_FLOOR: lambda: T.mitm_passthrough("mitmdump passthrough", floor.port, w, cd),
            "tp-mitm-floor": lambda: T.mitm_passthrough(
                "mitmdump passthrough speed0", fast.port if fast else 1, w, cd
            ),
            "rec-rp": lambda: T.record_cli(
                "replayproxy record", w / "recorded.cassette", floor.port, w, cd
            ),
        }
        if not self.cfg.throughput_context:
            for key in ("tp-mitm-floor",):
                del rest[key]
                self.unavailable[key] = "skipped in --quick"
            self.unavailable["tp-floor"] = "skipped in --quick"
        self._wait(self._launch(rest, started))

    def _launch(
        self, makers: dict[str, Callable[[], T.Target]], started: list[Server]
    ) -> dict[str, T.Target]:
        pending: dict[str, T.Target] = {}
        for key, make in makers.items():
            try:
                t = make()
            except (T.Unavailable, RuntimeError) as e:
                self.unavailable[key] = str(e)
                continue
            started.extend(t.servers)
            pending[key] = t
        return pending

    def _wait(self, pending: dict[str, T.Target]) -> None:
        for key, t in pending.items():
            try:
                self.targets[key] = t.wait(60)
            except RuntimeError as e:
                self.unavailable[key] = str(e)

    # -- measurements -------------------------------------------------------------------

    def run_streams(
        self, clients: Clients, key: str, streams: list[BenchStream], n: int, log: bool = False
    ) -> StreamStats | None:
        results = self.stream_results(clients, key, streams, n, log)
        if results is None:
            return None
        sendlog = self._sendlog() if log else None
        return analyse(self.by_name, results, sendlog)

    def stream_results(
        self,
        clients: Clients,
        key: str,
        streams: list[BenchStream],
        n: int,
        log: bool = False,
        keep: bool = False,
    ) -> list[StreamResult] | None:
        """What the clients saw of ``n`` concurrent streams on path ``key`` (None: no path)."""
        t = self.targets.get(key)
        if t is None:
            return None
        host = "api.openai.com" if t.absolute else f"{t.host}:{t.port}"
        base = time.monotonic_ns() + 150_000_000
        spread = 100_000_000  # start times spread over 100 ms: a burst, not a single instant
        jobs = []
        for k in range(n):
            s = streams[k % len(streams)]
            rid = next(self.rids) if log else None
            req = request_bytes(s, host, t.absolute, rid)
            jobs.append((s.name, rid, req, base + k * spread // n))
        longest = max(s.frames[-1][0] for s in streams) / 1e9
        return clients.streams(t.host, t.port, jobs, timeout=longest + 30, keep=keep)

    def _sendlog(self) -> dict[str, list[int]]:
        floor = self.targets[DIRECT_FLOOR]
        # No proxy from the environment (HTTP_PROXY may point at a proxy under test).
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{floor.port}/__sendlog", timeout=10) as r:
            data: dict[str, list[int]] = json.loads(r.read())
        return data

    def run_throughput(self, clients: Clients, key: str) -> Throughput | None:
        t = self.targets.get(key)
        if t is None:
            return None
        host = "api.openai.com" if t.absolute else f"{t.host}:{t.port}"
        reqs = [request_bytes(s, host, t.absolute) for s in self.chat]
        chunks = [len(s.frames) for s in self.chat]
        cfg = self.cfg
        res = clients.throughput(t.host, t.port, reqs, chunks, cfg.tp_conns, cfg.tp_duration)
        n = sum(r.responses for r in res)
        nbytes = sum(r.body_bytes for r in res)
        secs = (max(r.t_end for r in res) - min(r.t_start for r in res)) / 1e9
        errs = sum(r.errors for r in res)
        first = next((r.first_error for r in res if r.first_error), "")
        rechunked = sum(r.rechunked for r in res)
        return Throughput(n / secs, nbytes / secs / 1e6, errs, first, rechunked)


def _make_ca(confdir: Path) -> None:
    """Create mitmproxy's CA in ``confdir`` once, before the proxies start in parallel.

    Each mitmproxy process creates a missing CA itself; several starting at once on one
    confdir race, and one may read another's half-written key and exit ("the provided
    password may be incorrect").
    """
    from mitmproxy.certs import CertStore

    confdir.mkdir(parents=True, exist_ok=True)
    CertStore.from_store(confdir, "mitmproxy", 2048)


def err_cell(st: StreamStats) -> str:
    if not st.errors:
        return "0"
    return f"{len(st.errors)} ({st.errors[0][:60]})"


def missing(b: Bench, key: str) -> str:
    return "not measured: " + b.unavailable.get(key, "unavailable")[:90]
