"""Benchmark: the stream contract checker and the parsers under it on ~10 MB streams.

Builds a valid ~10 MB stream per provider from the real payloads (many content deltas between
the real first and last events), then times, best of a few runs:

- ``parse``: the SSE parser / event-stream decoder alone, whole body in one feed;
- ``check``: the full checker, whole body in one feed;
- ``check/64K``: the checker fed 64 KiB frames;
- ``check/event``: the checker fed one frame per event (how recorded frames usually look).

Prints a table (CPU seconds and MB/s, plus one wall-clock figure) and the number of violations
found (expected: 0). Always
exits 0; it is a measurement, not a test. Run: ``python benchmarks/bench_check.py [MB]``.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import resources
from typing import Any

from replayproxy._core.check import StreamChecker
from replayproxy._core.wire.eventstream import decode_all, encode_event
from replayproxy._core.wire.sse import parse_events


def _payloads(name: str) -> list[Any]:
    raw = resources.files("replayproxy.testing").joinpath("payloads").joinpath(name).read_bytes()
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _d(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _repeat_count(target: int, unit: int) -> int:
    return max(1, target // max(unit, 1))


def openai_chat(target: int) -> list[bytes]:
    p = _payloads("openai-chat-text.jsonl")
    delta = b"data: " + _d(p[1]) + b"\n\n"
    body = [b"data: " + _d(p[0]) + b"\n\n"]
    body += [delta] * _repeat_count(target, len(delta))
    body += [b"data: " + _d(x) + b"\n\n" for x in p[-2:]] + [b"data: [DONE]\n\n"]
    return body


def _named(obj: Any) -> bytes:
    return b"event: " + obj["type"].encode() + b"\ndata: " + _d(obj) + b"\n\n"


def anthropic(target: int) -> list[bytes]:
    p = _payloads("anthropic-messages-text.jsonl")
    delta = _named(p[3])
    n = _repeat_count(target, len(delta))
    return [_named(x) for x in p[:3]] + [delta] * n + [_named(x) for x in p[-3:]]


def openai_responses(target: int) -> list[bytes]:
    p = _payloads("openai-responses-web-search.jsonl")
    kinds = [x["type"] for x in p]
    d0 = kinds.index("response.output_text.delta")
    done = kinds.index("response.output_text.done")
    head = [x for x in p[:d0] if x["type"] != "response.output_text.annotation.added"]
    delta = p[d0]
    n = _repeat_count(target, len(_named(delta)))
    deltas = [dict(delta) for _ in range(n)]
    text_done = dict(p[done], text=delta["delta"] * n)
    tail = [x for x in p[done + 1 :] if x["type"] != "response.output_text.annotation.added"]
    objs = head + deltas + [text_done] + tail
    for seq, obj in enumerate(objs):
        obj["sequence_number"] = seq
    return [_named(x) for x in objs]


def gemini(target: int) -> list[bytes]:
    p = _payloads("gemini-text.jsonl")
    chunk = b"data: " + _d(p[0]) + b"\r\n\r\n"
    return [chunk] * _repeat_count(target, len(chunk)) + [b"data: " + _d(p[-1]) + b"\r\n\r\n"]


def bedrock(target: int) -> list[bytes]:
    p = _payloads("bedrock-converse-text.jsonl")

    def msg(obj: Any) -> bytes:
        ((kind, inner),) = obj.items()
        return encode_event(kind, _d(inner))

    delta = msg(p[1])
    n = _repeat_count(target, len(delta))
    return [msg(p[0])] + [delta] * n + [msg(x) for x in p[-3:]]


def bedrock_invoke(target: int) -> list[bytes]:
    p = _payloads("anthropic-messages-text.jsonl")

    def chunk(obj: Any) -> bytes:
        return encode_event("chunk", _d({"bytes": base64.b64encode(_d(obj)).decode()}))

    delta = chunk(p[3])
    n = _repeat_count(target, len(delta))
    return [chunk(x) for x in p[:3]] + [delta] * n + [chunk(x) for x in p[-3:]]


STREAMS: dict[str, tuple[str, Callable[[int], list[bytes]]]] = {
    "openai-chat": ("openai-chat", openai_chat),
    "openai-responses": ("openai-responses", openai_responses),
    "anthropic": ("anthropic", anthropic),
    "gemini": ("gemini", gemini),
    "bedrock-converse": ("bedrock-converse", bedrock),
    "bedrock-invoke": ("bedrock-invoke", bedrock_invoke),
}


def best(fn: Callable[[], object], runs: int = 3) -> float:
    """Best CPU time (process_time) of ``runs``: on a shared, loaded machine wall time mostly
    measures the neighbours; the wall time of the last run is printed separately."""
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def wall(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_checker(provider: str, frames: list[bytes]) -> int:
    checker = StreamChecker(provider)
    for frame in frames:
        checker.feed(frame)
    checker.close()
    return len(checker.violations)


def main() -> int:
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    target = int(mb * 1_000_000)
    print(f"stream checker benchmark, ~{mb:g} MB per stream")
    print("CPU seconds (best of 3) | MB/s; 'wall' is one whole-body check in wall-clock seconds")
    header = f"{'stream':18} {'MB':>6} {'events':>8} {'parse':>14} {'check':>14} "
    header += f"{'check/64K':>14} {'check/event':>14} {'wall':>6} {'violations':>10}"
    print(header)
    for name, (provider, build) in STREAMS.items():
        events = build(target)
        body = b"".join(events)
        size = len(body) / 1e6
        decode = decode_all if provider.startswith("bedrock") else parse_events
        k64 = [body[i : i + 65536] for i in range(0, len(body), 65536)]
        t_parse = best(partial(decode, body))
        t_whole = best(partial(run_checker, provider, [body]))
        t_64k = best(partial(run_checker, provider, k64))
        t_event = best(partial(run_checker, provider, events))
        t_wall = wall(partial(run_checker, provider, [body]))
        found = run_checker(provider, events)

        def cell(t: float, size: float = size) -> str:
            return f"{t:6.3f} {size / t:6.1f}"

        print(
            f"{name:18} {size:6.2f} {len(events):8d} {cell(t_parse):>14} {cell(t_whole):>14} "
            f"{cell(t_64k):>14} {cell(t_event):>14} {t_wall:6.3f} {found:10d}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
