"""Regenerate the example cassettes in ``cassettes/`` by recording the local provider simulator.

    python scripts/make_cassettes.py [--out cassettes] [--only NAME ...]

For each example this starts nothing but loopback servers:

1. the provider simulator (:mod:`replayproxy.testing`) in this process, serving the real
   payloads of the Vercel AI SDK fixtures with the *modelled* timing of
   :meth:`~replayproxy.testing.Behavior.modelled` (a time to first byte of 300-600 ms, gaps of
   10-60 ms, about one event in ten coalesced with the previous one), at real speed;
2. ``replayproxy record --upstream <simulator>`` as a subprocess, wrapping a small httpx client
   (``-- python -c ...``) that sends the provider request with a fake API key and reads the
   stream to the end.

Then it checks each cassette: one complete interaction, the body the simulator sent, secrets
redacted, and a file under 100 KB. Nothing here talks to a real provider.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind
from replayproxy.testing import STREAMS, Behavior, Simulator, Stream

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 100_000

# The OpenAI chat text fixture carries 100 KB of payload (303 chunks): too big for a < 100 KB
# example. The example serves its first SHORT_CHAT_CHUNKS chunks, then its last two (the
# finish_reason chunk and the usage chunk) and [DONE]: every payload byte is still a real one;
# the text just stops mid-way before "finish_reason": "stop" (and "usage" counts 300 tokens).
SHORT_CHAT = "openai-chat-text-short"
SHORT_CHAT_CHUNKS = 160


def _register_short_chat() -> None:
    full = STREAMS["openai-chat-text"]
    short = replace(
        full,
        name=SHORT_CHAT,
        events=full.events[:SHORT_CHAT_CHUNKS] + full.events[-3:],
        payloads=full.payloads[:SHORT_CHAT_CHUNKS] + full.payloads[-2:],
    )
    # A stream known only to this script's simulator (chosen with Behavior(stream=...)).
    cast(dict[str, Stream], STREAMS)[SHORT_CHAT] = short


_DRIVER = r"""
import json, os, sys, httpx
spec = json.loads(sys.argv[1])
url = os.environ["REPLAYPROXY_URL"] + spec["target"]
with httpx.Client(timeout=30) as c, c.stream(
    "POST", url, headers=spec["headers"], content=spec["body"].encode()
) as r:
    n = sum(len(b) for b in r.iter_raw())
print(f"{r.status_code} {n} bytes", file=sys.stderr)
sys.exit(0 if r.status_code == 200 else 1)
"""

OPENAI_HEADERS = {
    "authorization": "Bearer sk-simulated-0000000000000000000000000000",
    "content-type": "application/json",
    "accept": "text/event-stream",
}
ANTHROPIC_HEADERS = {
    "x-api-key": "sk-ant-simulated-000000000000000000000000",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
    "accept": "text/event-stream",
}
GEMINI_HEADERS = {
    "x-goog-api-key": "AIzaSimulated000000000000000000000000",
    "content-type": "application/json",
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Get the weather in a location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}


@dataclass(frozen=True)
class Example:
    """One example cassette: the stream, the request a client sends, and its timing seed."""

    name: str
    stream: str
    target: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    ttfb_ms: float = 400
    seed: int = 0


EXAMPLES = [
    Example(
        "openai-chat-text",
        SHORT_CHAT,
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-nano",
            "messages": [{"role": "user", "content": "Invent a new holiday and describe it."}],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        OPENAI_HEADERS,
        ttfb_ms=380,
        seed=1,
    ),
    Example(
        "openai-chat-tool-call",
        "openai-chat-tool-call",
        "/v1/chat/completions",
        {
            "model": "grok-3-mini",
            "messages": [{"role": "user", "content": "What is the weather in San Francisco?"}],
            "tools": [WEATHER_TOOL],
            "stream": True,
        },
        OPENAI_HEADERS,
        ttfb_ms=520,
        seed=2,
    ),
    Example(
        "openai-responses",
        "openai-responses",
        "/v1/responses",
        {
            "model": "gpt-5-mini",
            "input": "Check today's tech headlines for mentions of Vercel.",
            "tools": [{"type": "web_search"}],
            "stream": True,
        },
        OPENAI_HEADERS,
        ttfb_ms=560,
        seed=3,
    ),
    Example(
        "anthropic-text",
        "anthropic-text",
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5-20250929",
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": "Hello, how are you?"}],
            "stream": True,
        },
        ANTHROPIC_HEADERS,
        ttfb_ms=450,
        seed=4,
    ),
    Example(
        "anthropic-tool-use",
        "anthropic-tool-use",
        "/v1/messages",
        {
            "model": "claude-haiku-4-5-20251001",
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": "Weather in San Francisco as JSON."}],
            "tools": [
                {
                    "name": "json",
                    "description": "Respond with a JSON object.",
                    "input_schema": {"type": "object", "properties": {}},
                }
            ],
            "tool_choice": {"type": "tool", "name": "json"},
            "stream": True,
        },
        ANTHROPIC_HEADERS,
        ttfb_ms=340,
        seed=5,
    ),
    Example(
        "gemini-text",
        "gemini-text",
        "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "How many r's are in strawberry?"}]}]},
        GEMINI_HEADERS,
        ttfb_ms=600,
        seed=6,
    ),
]


def record(example: Example, sim: Simulator, out: Path, confdir: Path) -> None:
    """Record ``example`` through ``replayproxy record`` (a subprocess) into ``out``."""
    behavior = Behavior.modelled(
        1.0, example.seed, ttfb_s=example.ttfb_ms / 1000, stream=example.stream
    )
    sim.push(behavior)
    spec = {
        "target": example.target,
        "headers": example.headers,
        "body": json.dumps(example.body, separators=(",", ":")),
    }
    cmd = [
        sys.executable,
        "-c",
        "from replayproxy._cli import main; main()",
        "record",
        str(out),
        "--overwrite",
        "--upstream",
        sim.url,
        "--listen",
        "127.0.0.1:0",
        "--confdir",
        str(confdir),
        "--",
        sys.executable,
        "-c",
        _DRIVER,
        json.dumps(spec),
    ]
    subprocess.run(cmd, check=True, timeout=120, stdout=subprocess.DEVNULL)


def check(example: Example, path: Path) -> str:
    """Verify a freshly recorded cassette; return a one-line description of it."""
    cassette = store.load(path)
    (it,) = cassette.interactions
    assert it.end.kind is EndKind.COMPLETE, it.end
    assert it.response is not None and it.response.status == 200
    assert it.response.body == STREAMS[example.stream].body, "body differs from the simulator's"
    for name in ("authorization", "x-api-key", "x-goog-api-key"):
        value = it.request.header(name)
        assert value is None or "simulated" not in value.lower(), f"{name} was not redacted"
    size = path.stat().st_size
    assert size < MAX_BYTES, f"{path.name} is {size} bytes (limit {MAX_BYTES})"
    offsets = [f.offset_ns for f in it.response.frames]
    gaps = sorted(b - a for a, b in itertools.pairwise(offsets))
    median = gaps[len(gaps) // 2] / 1e6 if gaps else 0.0
    return (
        f"{path.name}: {size} bytes, {len(offsets)} frames, "
        f"TTFB {it.response.head_offset_ns / 1e6:.0f} ms, median gap {median:.0f} ms, "
        f"{(it.end.offset_ns) / 1e9:.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "cassettes")
    parser.add_argument("--only", nargs="*", choices=[e.name for e in EXAMPLES])
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in EXAMPLES if not args.only or e.name in args.only]
    _register_short_chat()
    with tempfile.TemporaryDirectory() as confdir, Simulator() as sim:
        for example in chosen:
            path = args.out / f"{example.name}.cassette"
            start = time.monotonic()
            record(example, sim, path, Path(confdir))
            print(f"{check(example, path)} (recorded in {time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
