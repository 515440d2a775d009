"""The recorded streams every benchmark path serves, built once per run from real payloads.

Real provider payloads carry no timing, so timing is synthesized here, explicitly and
deterministically (seeded), the way `replayproxy/testing/payloads/README` describes real streams:

- ``chat-N``: the OpenAI Chat Completions text stream (``data: {json}\\n\\n`` ... ``data: [DONE]``),
  one event per frame, gaps drawn uniformly from 10-60 ms, and about 5% of frames holding two
  events (the coalesced reads real streams show). Several variants (seeds) so concurrent
  streams are not in lock-step.
- ``split-N``: the OpenAI Responses web-search stream (``event: ...\\ndata: ...``, non-ASCII
  text), each event cut into 1-3 frames at random byte positions (mid UTF-8 sequences
  included), gaps 5-7 ms: the stream for split fidelity (target: 100% at gaps >= 5 ms).

The same streams are written as a replayproxy cassette (``replayproxy._store.save``) and as a
mitmproxy flows file (``mitmproxy.io.FlowWriter``) for mitmproxy's own ``--server-replay``.
A request names its stream in the query (``?bench=chat-3``) and the body, so every replayer
(and the floor server) can tell them apart without relying on replay order.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replayproxy import _store as store
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)

__all__ = ["BenchStream", "build_streams", "request_bytes", "write_cassette", "write_flows"]

PAYLOADS = Path(__file__).resolve().parent.parent / "replayproxy" / "testing" / "payloads"
PATH = "/v1/chat/completions"
MS = 1_000_000


@dataclass(frozen=True)
class BenchStream:
    """One recorded stream: its name, request body, response head offset and frames."""

    name: str
    body: bytes
    head_ns: int
    frames: tuple[tuple[int, bytes], ...]  # (offset_ns from request, data)

    @property
    def size(self) -> int:
        return sum(len(d) for _, d in self.frames)

    @property
    def query(self) -> str:
        return f"bench={self.name}"


def _payloads(name: str) -> list[str]:
    return [ln for ln in (PAYLOADS / name).read_text("utf-8").splitlines() if ln.strip()]


def _request_body(name: str) -> bytes:
    doc = {
        "model": "gpt-4.1-nano",
        "stream": True,
        "messages": [{"role": "user", "content": "Suggest a holiday name."}],
        "metadata": {"bench": name},
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def chat_stream(name: str, events: int, seed: int, ttfb_ms: float = 150.0) -> BenchStream:
    """OpenAI chat events, gaps 10-60 ms, ~5% of frames holding two coalesced events."""
    rng = random.Random(seed)
    lines = _payloads("openai-chat-text.jsonl")[: max(1, events - 1)]
    wire = [f"data: {ln}\n\n".encode() for ln in lines] + [b"data: [DONE]\n\n"]
    frames: list[tuple[int, bytes]] = []
    t = round(ttfb_ms * MS)
    head = t
    i = 0
    while i < len(wire):
        t += round(rng.uniform(10, 60) * MS)
        take = 2 if rng.random() < 0.05 and i + 1 < len(wire) else 1
        frames.append((t, b"".join(wire[i : i + take])))
        i += take
    return BenchStream(name, _request_body(name), head, tuple(frames))


def split_stream(name: str, frames_wanted: int, seed: int, ttfb_ms: float = 50.0) -> BenchStream:
    """OpenAI Responses events cut into 1-3 frames each (mid-UTF-8 too), gaps 5-7 ms."""
    rng = random.Random(seed)
    events = [
        f"event: {json.loads(ln)['type']}\ndata: {ln}\n\n".encode()
        for ln in _payloads("openai-responses-web-search.jsonl")
    ]
    pieces: list[bytes] = []
    for ev in events:
        cuts = sorted(rng.sample(range(1, len(ev)), k=min(rng.randint(0, 2), len(ev) - 1)))
        bounds = [0, *cuts, len(ev)]
        pieces.extend(ev[a:b] for a, b in itertools.pairwise(bounds))
        if len(pieces) >= frames_wanted:
            break
    t = round(ttfb_ms * MS)
    head = t
    frames: list[tuple[int, bytes]] = []
    for piece in pieces[:frames_wanted]:
        t += round(rng.uniform(5, 7) * MS)
        frames.append((t, piece))
    return BenchStream(name, _request_body(name), head, tuple(frames))


def build_streams(chat_events: int, chat_variants: int, split_frames: int) -> list[BenchStream]:
    """All streams of one run: ``chat-0..`` variants and one ``split-0`` stream."""
    out = [chat_stream(f"chat-{k}", chat_events, seed=1000 + k) for k in range(chat_variants)]
    out.append(split_stream("split-0", split_frames, seed=7))
    return out


RESPONSE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-request-id", b"req_bench"),
    (b"transfer-encoding", b"chunked"),
)
REQUEST_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-type", b"application/json"),
    (b"accept", b"text/event-stream"),
)


def interaction(s: BenchStream, base_url: str) -> Interaction:
    last = s.frames[-1][0] if s.frames else s.head_ns
    return Interaction(
        request=Request(
            method="POST",
            url=f"{base_url}{PATH}?{s.query}",
            headers=(*REQUEST_HEADERS, (b"content-length", str(len(s.body)).encode())),
            body=s.body,
        ),
        response=Response(
            status=200,
            reason="OK",
            headers=RESPONSE_HEADERS,
            head_offset_ns=s.head_ns,
            frames=tuple(Frame(t, d) for t, d in s.frames),
        ),
        end=Ending(EndKind.COMPLETE, last + MS),
        recorded_at=1_764_964_102.0,
    )


def write_cassette(path: Path, streams: list[BenchStream], base_url: str) -> None:
    store.save(path, Cassette(tuple(interaction(s, base_url) for s in streams)))


def write_flows(path: Path, streams: list[BenchStream], host: str, port: int) -> None:
    """The same streams as a mitmproxy flows file: whole bodies (that is all mitmproxy keeps)."""
    from mitmproxy import http, io
    from mitmproxy.test import tflow

    flow_writer: Any = io.FlowWriter  # untyped in mitmproxy 11
    with path.open("wb") as fh:
        writer = flow_writer(fh)
        for s in streams:
            f = tflow.tflow(resp=True)
            f.request = http.Request.make(
                "POST",
                f"http://{host}:{port}{PATH}?{s.query}",
                s.body,
                [(k, v) for k, v in REQUEST_HEADERS],
            )
            f.response = http.Response.make(
                200, b"".join(d for _, d in s.frames), [(k, v) for k, v in RESPONSE_HEADERS]
            )
            writer.add(f)


def request_bytes(
    s: BenchStream, host: str, absolute: str | None = None, rid: int | None = None
) -> bytes:
    """The raw HTTP/1.1 request a client sends for stream ``s`` (origin- or absolute-form).

    ``rid`` tags the request (``&rid=N``) so the floor server's send log can be matched to it.
    """
    target = f"{absolute or ''}{PATH}?{s.query}" + ("" if rid is None else f"&rid={rid}")
    head = (
        f"POST {target} HTTP/1.1\r\nHost: {host}\r\n"
        f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
        f"Content-Length: {len(s.body)}\r\n\r\n"
    )
    return head.encode() + s.body
