"""An example project for the plugin's tests: a test file talking to the simulator, and a
runner that runs pytest on it in a subprocess (one embedded mitmproxy per process)."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

# The inner tests: each asks for one chat completion with its own prompt, through the proxy
# (RP_MODE=proxy) or with replayproxy standing in for the upstream (RP_MODE=base, default).
HEADER = """
import os

import httpx
import pytest

UPSTREAM = os.environ["RP_UPSTREAM"]
PROXY_MODE = os.environ.get("RP_MODE", "base") == "proxy"

pytestmark = pytest.mark.replayproxy(**({} if PROXY_MODE else {"upstream": UPSTREAM}))


def chat(replayproxy, prompt):
    base = UPSTREAM if PROXY_MODE else replayproxy.url
    body = {"model": "gpt-4o-mini", "stream": True,
            "messages": [{"role": "user", "content": prompt}]}
    response = httpx.post(base + "/v1/chat/completions", json=body, timeout=30)
    response.raise_for_status()
    assert b"data: [DONE]" in response.content
    return response
"""


def chat_test(name: str, prompt: str | None = None) -> str:
    """The source of one inner test asking for one completion."""
    return textwrap.dedent(f"""

        def {name}(replayproxy):
            chat(replayproxy, {prompt or name!r})
        """)


def write_tests(pytester: pytest.Pytester, *names: str, module: str = "test_example") -> Path:
    """Write ``module.py`` with one chat test per name; returns its path."""
    source = HEADER + "".join(chat_test(n) for n in names)
    return pytester.makepyfile(**{module: source})


def cassette(pytester: pytest.Pytester, test: str, module: str = "test_example") -> Path:
    """The default cassette path of ``test``."""
    return pytester.path / "cassettes" / module / f"{test}.cassette"


def run(
    pytester: pytest.Pytester,
    *args: str,
    upstream: str,
    mode: str = "base",
    confdir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> pytest.RunResult:
    """Run pytest on the project in a subprocess, with the upstream URL and mode set."""
    os.environ["RP_UPSTREAM"] = upstream  # restored by the `isolated_env` fixture
    os.environ["RP_MODE"] = mode
    for name, value in (env or {}).items():
        os.environ[name] = value
    extra = [f"--replayproxy-confdir={confdir}"] if confdir is not None else []
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", *extra, *args, timeout=180
    )
