"""The fault flags of ``replayproxy replay``: one-line errors, replay-time faults, misfits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette.model import Cassette
from tests.faults.builders import interaction
from tests.faults.proxy import EXE


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "two.cassette"
    its = (
        interaction("anthropic-text", gap_ms=5, ttfb_ms=5),
        interaction("openai-models", gap_ms=5, ttfb_ms=5),
    )
    store.save(path, Cassette(its))
    return path


def _replay(cassette: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    cmd = [EXE, "replay", str(cassette), "--listen", "127.0.0.1:0", "--speed", "0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("explode", "error: unknown fault 'explode' in 'explode'; valid faults: close, coalesce,"),
        ("reset:foo=1", "error: fault 'reset': unknown parameter 'foo'; valid: attempt, bytes,"),
        ("stall:for=soon", "error: fault 'stall': for='soon': not a valid value"),
        ("split", "error: fault 'split': give exactly one of bytes=K or at="),
    ],
)
def test_malformed_fault_flag_is_one_line_error(cassette: Path, spec: str, message: str) -> None:
    """A bad --fault exits 2 with one `error:` line listing what is valid, no traceback."""
    args = ["replay", str(cassette), "--listen", "127.0.0.1:0", "--fault", spec]
    result = CliRunner().invoke(cli, [*args, "--upstream", "https://api.anthropic.com"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


CHILD = textwrap.dedent(
    """
    import os, httpx
    base = os.environ["REPLAYPROXY_URL"]
    with httpx.Client(timeout=5) as c:
        body = c.post(base + "/v1/messages", content=b"").content
        print("message_stop" in body.decode(), body.count(b"\\n\\n"))
        models = c.get(base + "/v1/models")
        print(models.status_code, models.headers.get("x-replayproxy-unmatched"))
        print(models.text.replace("\\n", " / "))
    """
)


def test_replay_time_fault_flag_applies_and_misfit_fails(cassette: Path) -> None:
    """--fault applies at replay time; a misfit (events on JSON) fails that request and the run."""
    result = _replay(
        cassette,
        "--upstream",
        "https://api.anthropic.com",
        "--fault",
        "truncate:path=/v1/messages",
        "--fault",
        "reset:events=2,path=/v1/models",
        "--",
        sys.executable,
        "-c",
        CHILD,
    )
    out = result.stdout.strip().splitlines()
    assert out[-3:-1] == ["False 11", "500 1"], result.stdout + result.stderr
    assert "interaction 1 (GET /v1/models): fault 'reset:events=2,path=/v1/models'" in out[-1]
    assert "needs an event stream" in out[-1]
    assert result.returncode != 0
