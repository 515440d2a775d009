"""The openai and anthropic SDKs, sync and async, in base-URL and proxy mode, over HTTPS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import run

pytestmark = pytest.mark.slow

SDK_TESTS = """
import os

import anthropic
import openai
import pytest

UPSTREAM = os.environ["RP_UPSTREAM"]
PROXY_MODE = os.environ.get("RP_MODE") == "proxy"

pytestmark = pytest.mark.replayproxy(**({} if PROXY_MODE else {"upstream": UPSTREAM}))


def base(replayproxy):
    return UPSTREAM if PROXY_MODE else replayproxy.url


def test_openai_sync(replayproxy):
    client = openai.OpenAI(base_url=base(replayproxy) + "/v1", api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "sync"}], stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text


@pytest.mark.anyio
async def test_openai_async(replayproxy):
    # Closed inside the test: an async client left to the garbage collector closes its
    # connections after the test's event loop is gone (anyio then reports that error).
    async with openai.AsyncOpenAI(
        base_url=base(replayproxy) + "/v1", api_key="sk-test", max_retries=0
    ) as client:
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "async"}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text


def test_anthropic_sync(replayproxy):
    client = anthropic.Anthropic(base_url=base(replayproxy), api_key="sk-test", max_retries=0)
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "sync"}]
    ) as stream:
        assert stream.get_final_text()


@pytest.mark.anyio
async def test_anthropic_async(replayproxy):
    async with anthropic.AsyncAnthropic(
        base_url=base(replayproxy), api_key="sk-test", max_retries=0
    ) as client:
        async with client.messages.stream(
            model="claude-sonnet-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "async"}],
        ) as stream:
            assert await stream.get_final_text()
"""


@pytest.mark.parametrize("mode", ["base", "proxy"])
def test_sdks_record_once_then_replay_offline(
    pytester: pytest.Pytester,
    confdir: Path,
    ca: Any,
    ca_pem: Path,
    counter: CountingUpstream,
    mode: str,
) -> None:
    """Sync and async openai / anthropic clients record through the plugin over HTTPS and
    replay with no upstream connection, in base-URL and in proxy mode."""
    pytester.makepyfile(test_sdks=SDK_TESTS)
    ca_option = f"--replayproxy-upstream-ca={ca_pem}"
    with Simulator(tls=ca) as sim:
        result = run(
            pytester,
            "--replayproxy-record-mode=once",
            ca_option,
            upstream=sim.url,
            mode=mode,
            confdir=confdir,
        )
        result.assert_outcomes(passed=4)
        assert len(sim.served) == 4
    cassettes = sorted(p.name for p in (pytester.path / "cassettes" / "test_sdks").iterdir())
    assert cassettes == [
        "test_anthropic_async[asyncio].cassette",
        "test_anthropic_sync.cassette",
        "test_openai_async[asyncio].cassette",
        "test_openai_sync.cassette",
    ]
    # Replay: the recorded host is now a port that counts connections (and speaks no TLS).
    offline = f"https://127.0.0.1:{counter.port}"
    result = run(pytester, "--replayproxy-speed=0", upstream=offline, mode=mode, confdir=confdir)
    result.assert_outcomes(passed=4)
    assert counter.connections == 0
