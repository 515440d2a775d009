"""Benchmark configuration: sizes of the full and quick runs, path names, targets."""

from __future__ import annotations

from dataclasses import dataclass

BASE_URL = "https://api.openai.com"
DUMMY_PORT = 9  # reverse target of mitmproxy's server replay; never contacted (lazy, kill extra)
RECORD_OVERHEAD_MS = 1.0
# Targets (issue 11): at 1 stream, the first event's offset within 2 ms of the direct floor's
# and the gap p99 within 1.3x the floor's; instant mode in base-URL mode >= 3x server replay.
FIRST_EVENT_OVER_FLOOR_MS = 2.0
ONE_STREAM_P99_OVER_FLOOR = 1.3
INSTANT_OVER_SERVER_REPLAY = 3.0
# A "no worse than the floor" comparison on a shared, noisy machine needs a stated allowance:
# run-to-run scatter of the floors themselves is about this much.
FLOOR_TOLERANCE_MS = 0.5
FLOOR_TOLERANCE_REL = 0.10


@dataclass(frozen=True)
class Config:
    chat_events: int
    chat_variants: int
    split_frames: int
    timing_streams: tuple[int, ...]
    split_streams: tuple[int, ...]
    tp_conns: int
    tp_duration: float
    record_streams: tuple[int, ...]
    client_procs: int
    rounds: int  # the whole sequence of paths is run this many times, samples pooled
    single_repeats: int  # 1-stream runs per round (one stream gives few gaps per run)
    throughput_context: bool = True  # also the direct and floor throughput rows
    peer_runs: int = 4  # 1-stream runs per path in the peer comparison (samples pooled)


FULL = Config(
    chat_events=60,
    chat_variants=8,
    split_frames=120,
    timing_streams=(1, 50, 200),
    split_streams=(1, 50),
    tp_conns=50,
    tp_duration=3.0,
    record_streams=(1, 50),
    client_procs=2,
    rounds=2,
    single_repeats=2,
)
QUICK = Config(
    chat_events=8,
    chat_variants=4,
    split_frames=30,
    timing_streams=(1, 5),
    split_streams=(1,),
    tp_conns=8,
    tp_duration=0.3,
    record_streams=(1,),
    client_procs=2,
    rounds=1,
    single_repeats=1,
    throughput_context=False,
    peer_runs=1,
)

# Paths in the timing tables: (key, label, floor key it is judged against).
# Base-URL mode (`replay --upstream`) is served by the replay engine; forward-proxy mode (no
# --upstream, absolute-form requests) by mitmproxy, judged against plain mitmdump.
DIRECT_FLOOR, DIRECT_RP = "floor-direct", "rp-direct"
PROXY_FLOOR, PROXY_RP = "floor-proxy", "rp-proxy"
TIMED_PATHS = [
    (DIRECT_FLOOR, "direct: floor (plain asyncio)", None),
    (DIRECT_RP, "base URL: replayproxy replay (engine)", DIRECT_FLOOR),
    (PROXY_FLOOR, "proxy: floor (mitmdump passthrough)", None),
    (PROXY_RP, "proxy: replayproxy replay (forward)", PROXY_FLOOR),
]
# Modes by path (judged in the Targets table): name, path key, its floor key.
RP_PATHS = [(DIRECT_RP, "base URL", DIRECT_FLOOR), (PROXY_RP, "proxy", PROXY_FLOOR)]
