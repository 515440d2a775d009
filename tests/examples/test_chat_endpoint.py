"""The worked example (examples/chat-endpoint/) runs as its own pytest project, as its README
says: clean, every test passes; with each planted bug (CHAT_EXAMPLE_BUG), at least one test
fails with a message naming the problem. The four runs are subprocesses started together."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "chat-endpoint"
# bug -> (a test that must fail, what its message must say)
BUGS = {
    "gzip": (
        "test_streaming_headers",
        "content-encoding is 'gzip': a compressing middleware (GZip) buffers the stream",
    ),
    "reframe": (
        "test_split_frames",
        "the endpoint lost text when the provider's SSE frames were split across reads",
    ),
    "commit-on-close": (
        "test_a_closed_connection_is_never_committed",
        "committed a turn whose upstream connection was cut",
    ),
}
BUFFERED = "was not streamed"  # gzip also fails the incremental-delivery test


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    """Run the example's tests once clean and once per bug, concurrently; their outputs."""
    procs = {}
    for bug in ("", *BUGS):
        env = {**os.environ, "CHAT_EXAMPLE_BUG": bug}
        env.pop("PYTEST_ADDOPTS", None)
        procs[bug] = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q"],
            cwd=EXAMPLE,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    done = {}
    try:
        for bug, proc in procs.items():
            out, _ = proc.communicate(timeout=300)
            done[bug] = subprocess.CompletedProcess(proc.args, proc.returncode, out)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    yield done


def test_the_example_passes_clean(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """Without a bug every example test passes (its README's `python -m pytest`)."""
    run = runs[""]
    assert run.returncode == 0, run.stdout[-4000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


@pytest.mark.parametrize("bug", list(BUGS))
def test_each_planted_bug_fails_a_test_naming_it(
    runs: dict[str, subprocess.CompletedProcess[str]], bug: str
) -> None:
    """CHAT_EXAMPLE_BUG=gzip|reframe|commit-on-close: the run fails, the expected test is
    among the failures, and its message names the problem."""
    run = runs[bug]
    test, message = BUGS[bug]
    assert run.returncode == 1, run.stdout[-4000:]
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED ")]
    assert any(f"::{test}" in line for line in failed), "\n".join(failed) or run.stdout[-4000:]
    assert message in run.stdout, run.stdout[-4000:]
    if bug == "gzip":
        assert BUFFERED in run.stdout
