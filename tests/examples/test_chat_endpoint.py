"""The worked example (examples/chat-endpoint/) runs as its own pytest project, as its README
says: clean, every test passes; with each planted bug (CHAT_EXAMPLE_BUG), at least one test
fails with a message naming the problem. Each run is a subprocess, so the example keeps its own
rootdir, pytest.ini and conftest (it is never collected by the repository's run itself)."""

from __future__ import annotations

import os
import subprocess
import sys
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


def run_example(bug: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in the example's folder, with ``CHAT_EXAMPLE_BUG=bug``."""
    env = {**os.environ, "CHAT_EXAMPLE_BUG": bug}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q"],
        cwd=EXAMPLE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_example_passes_clean() -> None:
    """Without a bug every example test passes (its README's `python -m pytest`)."""
    run = run_example()
    assert run.returncode == 0, run.stdout[-4000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


@pytest.mark.parametrize("bug", list(BUGS))
def test_each_planted_bug_fails_a_test_naming_it(bug: str) -> None:
    """CHAT_EXAMPLE_BUG=gzip|reframe|commit-on-close: the run fails, the expected test is
    among the failures, and its message names the problem."""
    run = run_example(bug)
    test, message = BUGS[bug]
    assert run.returncode == 1, run.stdout[-4000:]
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED ")]
    assert any(f"::{test}" in line for line in failed), "\n".join(failed) or run.stdout[-4000:]
    assert message in run.stdout, run.stdout[-4000:]
    if bug == "gzip":
        assert BUFFERED in run.stdout


def test_the_guide_snippet_is_the_example_test() -> None:
    """docs/guides/your-endpoint.md's "In short" snippet is, line for line, the code of
    examples/chat-endpoint/tests/test_readme.py, which the example's run executes."""
    import re

    guide = (EXAMPLE.parents[1] / "docs" / "guides" / "your-endpoint.md").read_text("utf-8")
    start = guide.index("\n## In short")
    section = guide[start : guide.index("\n## ", start + 1)]
    snippet = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    test_file = (EXAMPLE / "tests" / "test_readme.py").read_text(encoding="utf-8")
    assert test_file.endswith(snippet)
