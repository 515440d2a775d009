"""The retry-policy test of issue 24, as a user writes it: ``replayproxy.requests`` in a pytest
project, a client with its own retry loop, cassettes recorded from the simulator, and the
``attempt=`` selector that fails the first try only.

Three inner tests replay two recordings: ``close:events=3,attempt=1`` makes the client retry
once and succeed (two requests for interaction 0, attempts 1 and 2, the same
``Idempotency-Key``); a recording that ends with ``finish_reason: "length"`` is complete, so
the client sends exactly one request; and the same cut without ``attempt=`` leaves the retry
unanswered (the usual used-up miss), so that test fails: the allowance is what passes it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Frame, header_value
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import run

pytestmark = pytest.mark.slow

CLIENT = """
import json
import os

import httpx
import pytest

pytestmark = pytest.mark.replayproxy(upstream=os.environ["RP_UPSTREAM"], speed=0)
BODY = {"model": "gpt-4o-mini", "stream": True,
        "messages": [{"role": "user", "content": "Count to ten."}]}


def complete(base_url, key="idem-1"):
    # The client under test: retry once, with the same Idempotency-Key, when the stream ends
    # before its terminal frames (a finish_reason and data: [DONE]); never on a finish.
    for _ in range(2):
        text, finish, done = [], None, False
        try:
            with httpx.stream("POST", base_url + "/v1/chat/completions", json=BODY, timeout=30,
                              headers={"Idempotency-Key": key,
                                       "Authorization": "Bearer sk-test-secret"}) as r:
                r.raise_for_status()
                for line in r.iter_lines():
                    if line == "data: [DONE]":
                        done = True
                    elif line.startswith("data: "):
                        for choice in json.loads(line[6:])["choices"]:
                            text.append(choice["delta"].get("content") or "")
                            finish = choice.get("finish_reason") or finish
        except httpx.HTTPError:
            pass
        if done and finish:
            return "".join(text), finish
    raise RuntimeError("the stream did not complete after one retry")
"""

RECORD = (
    CLIENT
    + """

@pytest.mark.replayproxy(cassette="cassettes/stop.cassette")
def test_record_stop(replayproxy):
    assert complete(replayproxy.url)[1] == "stop"


@pytest.mark.replayproxy(cassette="cassettes/length.cassette")
def test_record_length(replayproxy):
    complete(replayproxy.url)
"""
)

REPLAY = (
    CLIENT
    + """

def check_one_retry(replayproxy):
    text, finish = complete(replayproxy.url)
    assert finish == "stop" and text
    first, second = replayproxy.requests
    assert (first.interaction, first.attempt) == (0, 1)
    assert (second.interaction, second.attempt) == (0, 2)
    assert first.headers["idempotency-key"] == second.headers["Idempotency-Key"] == "idem-1"
    assert first.headers["authorization"] == "<redacted>"
    assert first.faults == ("close:events=3,attempt=1",)
    assert second.faults == ()
    print("RETRY-OK", len(replayproxy.requests))


@pytest.mark.replayproxy(cassette="cassettes/stop.cassette", faults=["close:events=3,attempt=1"])
def test_incomplete_is_retried_once(replayproxy):
    check_one_retry(replayproxy)


@pytest.mark.replayproxy(cassette="cassettes/length.cassette")
def test_length_is_not_retried(replayproxy):
    text, finish = complete(replayproxy.url)
    assert finish == "length"
    (only,) = replayproxy.requests
    assert (only.interaction, only.attempt, only.faults) == (0, 1, ())
    print("LENGTH-OK", len(replayproxy.requests))


@pytest.mark.replayproxy(cassette="cassettes/stop.cassette", faults=["close:events=3"])
def test_without_attempt_the_retry_misses(replayproxy):
    check_one_retry(replayproxy)
"""
)


def _ends_with_length(path: Path) -> None:
    """Turn the recording's ``finish_reason: "stop"`` into ``"length"`` (a max_tokens cut-off:
    a complete stream the client must not retry). The body is chunked, so no length changes."""
    c = store.load(path)
    (it,) = c.interactions
    assert it.response is not None
    assert header_value(it.response.headers, "content-length") is None
    old, new = b'"finish_reason":"stop"', b'"finish_reason":"length"'
    assert sum(f.data.count(old) for f in it.response.frames) == 1
    frames = tuple(Frame(f.offset_ns, f.data.replace(old, new)) for f in it.response.frames)
    response = dataclasses.replace(it.response, frames=frames)
    store.save(path, Cassette((dataclasses.replace(it, response=response),)))


def test_retry_policy_with_requests_seen(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """Record from the simulator, then replay offline: the retry test passes with attempt=1,
    the length test sees one request, and without attempt= the retry misses and fails."""
    pytester.makepyfile(test_record=RECORD)
    with Simulator() as sim:
        result = run(
            pytester, "--replayproxy-record-mode=once", "test_record.py", upstream=sim.url,
            confdir=confdir,
        )  # fmt: skip
        result.assert_outcomes(passed=2)
        assert len(sim.served) == 2
    _ends_with_length(pytester.path / "cassettes" / "length.cassette")
    pytester.makepyfile(test_replay=REPLAY)
    offline = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, "-s", "test_replay.py", upstream=offline, confdir=confdir)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*RETRY-OK 2*", "*LENGTH-OK 1*"])
    failed = result.stdout.str().split("test_without_attempt_the_retry_misses", 1)[-1]
    assert "every matching interaction was already replayed" in failed
    assert "the stream did not complete after one retry" in failed
    assert "PASSED" not in failed and "RETRY-OK" not in failed
    assert counter.connections == 0


DOC = Path(__file__).resolve().parents[2] / "docs" / "guides" / "pytest.md"

RECORD_DOC = """

import os


@pytest.mark.replayproxy(
    upstream=os.environ["RP_UPSTREAM"],
    cassette="cassettes/test_doc/test_an_incomplete_stream_is_retried_once.cassette",
)
def test_record_incomplete(replayproxy):
    complete(replayproxy.url, key="k-1")


@pytest.mark.replayproxy(upstream=os.environ["RP_UPSTREAM"], cassette="cassettes/length.cassette")
def test_record_length(replayproxy):
    complete(replayproxy.url, key="k-2")
"""


def test_the_docs_retry_example_passes(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """docs/guides/pytest.md's retry-policy example, as written, passes against cassettes recorded
    from the simulator with its own client (the length one edited to end with "length")."""
    section = DOC.read_text("utf-8").split("## Requests seen: testing retry policies")[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ")[0], re.S)
    pytester.makepyfile(test_doc=code + RECORD_DOC)
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-record-mode=once", "-k", "record", "test_doc.py",
                     upstream=sim.url, confdir=confdir)  # fmt: skip
        result.assert_outcomes(passed=2, deselected=2)
        assert len(sim.served) == 2
    _ends_with_length(pytester.path / "cassettes" / "length.cassette")
    offline = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, "-k", "not record", "test_doc.py", upstream=offline, confdir=confdir)
    result.assert_outcomes(passed=2, deselected=2)
    assert counter.connections == 0
