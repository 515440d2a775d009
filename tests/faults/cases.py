"""The fault cases run against real clients: one cassette interaction per (case, stream).

Each case stores its faults in the interaction (``Interaction.faults``), so the replay proxy
applies them with no ``--fault`` flag. Requests reach a case through its path prefix
``/f/<case>`` (SDK base URLs carry it), which keeps one long-lived proxy for all cases.
"""

from __future__ import annotations

import json
from dataclasses import replace

from replayproxy._core.cassette.model import Cassette
from tests.faults.builders import interaction
from tests.faults.clients import BODIES

__all__ = ["CASES", "STREAMS_USED", "build_cassette", "case_path"]

STREAMS_USED = ("openai-chat-text", "anthropic-text")

# case id -> stored faults. Small real delays: the proxy runs at --speed 0.
CASES: dict[str, tuple[str, ...]] = {
    "none": (),
    "reset": ("reset:events=5",),
    "close": ("close:events=5",),
    "truncate": ("truncate",),
    "truncate-mid": ("truncate:events=5",),
    "hang": ("hang:events=5",),
    "linger": ("linger",),
    "stall": ("stall:for=0.3,events=3",),
    "stall-timeout": ("stall:for=2,events=3",),
    "keepalive": ("stall:for=2,events=3", "keepalive:every=0.1"),
    "ttfb": ("ttfb:delay=0.3",),
    "jitter": ("jitter:ms=2,seed=7",),
    "throttle": ("throttle:bps=20000,path=*/completions", "throttle:bps=6000,path=*/messages"),
    "split-utf8": ("split:at=utf8,gap=0.05",),
    "split-midline": ("split:at=midline,gap=0.01",),
    "split-bytes": ("split:bytes=128,path=*/completions", "split:bytes=16,path=*/messages"),
    "coalesce": ("coalesce",),
    "drop": ("drop:event=4",),
    "duplicate": ("duplicate:event=4",),
    "reorder": ("reorder:event=4",),
    "corrupt": ("corrupt:event=4",),
    "error": ("error:events=5",),
    "status-429": ("status:code=429,retry-after=0",),
    "status-5xx": ("status:code=529,path=*/messages", "status:code=503,path=*/completions"),
}


def case_path(case: str) -> str:
    return f"/f/{case}"


def build_cassette() -> Cassette:
    interactions = []
    for case, faults in CASES.items():
        for stream in STREAMS_USED:
            base = "/v1/chat/completions" if stream.startswith("openai") else "/v1/messages"
            path = case_path(case) + base
            it = interaction(stream, gap_ms=5, ttfb_ms=5, faults=faults, path=path, short=True)
            body = json.dumps(BODIES[stream]).encode()
            interactions.append(replace(it, request=replace(it.request, body=body)))
    return Cassette(tuple(interactions))
