"""Benchmark configuration: sizes of the full and quick runs, path names, targets."""

from __future__ import annotations

from dataclasses import dataclass

BASE_URL = "https://api.openai.com"
DUMMY_PORT = 9  # reverse target of mitmproxy's server replay; never contacted (lazy, kill extra)
TARGET_1_STREAM_P99_MS = 2.0
RECORD_OVERHEAD_MS = 1.0


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
)

# Paths in the timing tables: (key, label, floor key it is judged against)
DIRECT_FLOOR, DIRECT_RP = "floor-direct", "rp-direct"
PROXY_FLOOR, PROXY_RP = "floor-proxy", "rp-proxy"
TIMED_PATHS = [
    (DIRECT_FLOOR, "direct: floor (plain asyncio)", None),
    (DIRECT_RP, "direct: replayproxy engine", DIRECT_FLOOR),
    (PROXY_FLOOR, "proxy: floor (mitmdump passthrough)", None),
    (PROXY_RP, "proxy: replayproxy replay", PROXY_FLOOR),
]
