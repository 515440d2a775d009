"""Every shipped cassette, through both proxy modes, to real clients: httpx, requests, curl,
and the openai / anthropic SDKs. Same bytes, same events; one real-timing run per mode.

Forward mode configures clients only through the environment (HTTPS_PROXY + CA variables, as
``replayproxy replay -- COMMAND`` sets them); reverse mode gives them the proxy as base URL.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx
import openai
import pytest
import requests

from replayproxy import _store as store
from replayproxy._core.cassette.model import Interaction
from replayproxy._core.wire.sse import parse_events
from tests.replay.conftest import ReplayTarget
from tests.replay.helpers import frames_per_read

CASSETTES = sorted((Path(__file__).resolve().parents[2] / "cassettes").glob("*.cassette"))
NAMES = [p.stem for p in CASSETTES]


def test_the_six_examples_are_shipped() -> None:
    """cassettes/ holds the six documented examples, each under 100 KB."""
    assert {
        "openai-chat-text",
        "openai-chat-tool-call",
        "openai-responses",
        "anthropic-text",
        "anthropic-tool-use",
        "gemini-text",
    } <= set(NAMES)
    assert all(p.stat().st_size < 100_000 for p in CASSETTES)


def recorded(name: str) -> Interaction:
    (it,) = store.load(CASSETTES[NAMES.index(name)]).interactions
    return it


def target(it: Interaction) -> str:
    parts = urlsplit(it.request.url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def payloads(body: bytes) -> list[Any]:
    """The JSON data of every SSE event, ``[DONE]`` left out."""
    return [json.loads(e.data) for e in parse_events(body) if e.data != "[DONE]"]


def fetch_httpx(url: str, body: bytes, env: dict[str, str]) -> bytes:
    with httpx.Client(timeout=10) as c, c.stream("POST", url, content=body) as r:
        assert r.status_code == 200
        return b"".join(r.iter_raw())


def fetch_requests(url: str, body: bytes, env: dict[str, str]) -> bytes:
    with requests.post(url, data=body, stream=True, timeout=10) as r:
        assert r.status_code == 200
        return b"".join(r.raw.stream(1024, decode_content=False))


def fetch_curl(url: str, body: bytes, env: dict[str, str]) -> bytes:
    out = subprocess.run(
        ["curl", "-sS", "-N", "--fail", "--data-binary", "@-", url],
        input=body,
        capture_output=True,
        env=env,
        timeout=20,
        check=True,
    )
    return out.stdout


@pytest.mark.parametrize("fetch", [fetch_httpx, fetch_requests, fetch_curl])
@pytest.mark.parametrize("name", NAMES)
def test_raw_clients_get_the_recorded_bytes(
    replay_proxy: ReplayTarget, client_env: dict[str, str], name: str, fetch: Any
) -> None:
    """httpx, requests and curl receive the recorded body byte for byte (speed 0)."""
    it = recorded(name)
    assert it.response is not None
    session = replay_proxy.serve(CASSETTES[NAMES.index(name)])
    body = fetch(replay_proxy.base_url + target(it), it.request.body, client_env)
    assert body == it.response.body
    assert payloads(body) == payloads(it.response.body)
    assert session.summary().served == 1


def _openai(replay_proxy: ReplayTarget) -> openai.OpenAI:
    base = replay_proxy.base_url + "/v1"
    return openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0, timeout=10)


@pytest.mark.parametrize("name", ["openai-chat-text", "openai-chat-tool-call"])
def test_openai_sdk_chat_stream(
    replay_proxy: ReplayTarget, client_env: dict[str, str], name: str
) -> None:
    """The openai SDK streams every recorded chat chunk, in order, with the recorded content."""
    it = recorded(name)
    assert it.response is not None
    replay_proxy.serve(CASSETTES[NAMES.index(name)])
    params = json.loads(it.request.body)
    chunks = list(_openai(replay_proxy).chat.completions.create(**params))
    assert [c.to_dict() for c in chunks] == payloads(it.response.body)
    assert chunks[-1].usage is not None or chunks[-1].choices[0].finish_reason is not None


def test_openai_sdk_responses_stream(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """The openai SDK streams every recorded Responses event (non-ASCII text intact)."""
    it = recorded("openai-responses")
    assert it.response is not None
    replay_proxy.serve(CASSETTES[NAMES.index("openai-responses")])
    events = list(_openai(replay_proxy).responses.create(**json.loads(it.request.body)))
    expected = payloads(it.response.body)
    assert [e.type for e in events] == [p["type"] for p in expected]
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    wanted = "".join(p["delta"] for p in expected if p["type"] == "response.output_text.delta")
    assert text == wanted and "\u2019" in text  # non-ASCII survived


@pytest.mark.parametrize("name", ["anthropic-text", "anthropic-tool-use"])
def test_anthropic_sdk_stream(
    replay_proxy: ReplayTarget, client_env: dict[str, str], name: str
) -> None:
    """The anthropic SDK yields every recorded event but pings, in order, with their data."""
    it = recorded(name)
    assert it.response is not None
    replay_proxy.serve(CASSETTES[NAMES.index(name)])
    client = anthropic.Anthropic(
        api_key="sk-ant-test", base_url=replay_proxy.base_url, max_retries=0, timeout=10
    )
    events = list(client.messages.create(**json.loads(it.request.body)))
    expected = [p for p in payloads(it.response.body) if p["type"] != "ping"]
    assert [e.to_dict() for e in events] == expected


@pytest.mark.timing
def test_real_timing_keeps_recorded_splits_and_gaps(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """At speed 1, httpx reads the recorded frames whole (never split; two may share a read on
    a loaded machine), none before its recorded offset, the last well before 3x its offset.
    Exact offsets: test_pacing.py."""
    it = recorded("anthropic-text")
    assert it.response is not None
    frames = it.response.frames
    recorded_gaps = [(b.offset_ns - a.offset_ns) / 1e9 for a, b in itertools.pairwise(frames)]
    assert min(recorded_gaps) >= 0.005  # the precondition for read sizes == frame sizes
    replay_proxy.serve(CASSETTES[NAMES.index("anthropic-text")], speed=1)
    times, chunks = [], []
    with httpx.Client(timeout=10) as c:
        start = time.monotonic()
        with c.stream("POST", replay_proxy.base_url + target(it), content=it.request.body) as r:
            for chunk in r.iter_raw():
                times.append(time.monotonic())
                chunks.append(chunk)
    counts = frames_per_read(chunks, [f.data for f in frames])
    assert len(counts) > 1  # streamed, not buffered
    for read_at, last in zip(times, itertools.accumulate(counts), strict=True):
        assert read_at - start >= frames[last - 1].offset_ns / 1e9 - 0.002
    assert times[-1] - start < 3 * frames[-1].offset_ns / 1e9 + 1.0
    assert os.environ.get("HTTPS_PROXY") == (
        replay_proxy.proxy.url if replay_proxy.mode == "forward" else None
    )
