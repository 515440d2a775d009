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


FULL = Config(80, 8, 120, (1, 50, 200), (1, 50), 50, 3.0, (1, 50), 2)
QUICK = Config(12, 4, 30, (1, 10), (1,), 8, 0.7, (1,), 2)

# Paths in the timing tables: (key, label, floor key it is judged against)
DIRECT_FLOOR, DIRECT_RP = "floor-direct", "rp-direct"
PROXY_FLOOR, PROXY_RP = "floor-proxy", "rp-proxy"
TIMED_PATHS = [
    (DIRECT_FLOOR, "direct: floor (plain asyncio)", None),
    (DIRECT_RP, "direct: replayproxy engine", DIRECT_FLOOR),
    (PROXY_FLOOR, "proxy: floor (mitmdump passthrough)", None),
    (PROXY_RP, "proxy: replayproxy replay", PROXY_FLOOR),
]
