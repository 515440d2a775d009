"""`replayproxy replay --record-mode ...` with the record options: what it forwards and records
has the custom header, query parameter and body field redacted (a real subprocess, a real
client, the simulator upstream); a bad value is one line naming the flag."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy._cli import cli
from replayproxy._core.redaction.secrets import REDACTED
from replayproxy.testing import Simulator

HEADER_SECRET = "hdr-secret-71ab"
QUERY_SECRET = "qry-secret-0c4e"
BODY_SECRET = "body-secret-9d2f"

CLIENT = textwrap.dedent(f"""
    import os, httpx
    url = os.environ["REPLAYPROXY_URL"] + "/v1/chat/completions?session={QUERY_SECRET}"
    body = {{"model": "m", "stream": True, "user": "{BODY_SECRET}",
            "messages": [{{"role": "user", "content": "hi"}}]}}
    r = httpx.post(url, json=body, headers={{"x-custom-key": "{HEADER_SECRET}"}})
    print("status", r.status_code)
""")


@pytest.mark.slow
def test_replay_record_mode_once_redacts_the_custom_secrets(tmp_path: Path) -> None:
    """--redact-header, --redact-query and --redact-body-field keep those values out of the
    cassette `replay --record-mode once` writes; the upstream got them as sent."""
    path = tmp_path / "s.cassette"
    with Simulator() as sim:
        done = subprocess.run(
            [
                sys.executable, "-m", "replayproxy", "replay", "--listen", "127.0.0.1:0",
                "--upstream", sim.url, "--record-mode", "once", "--speed", "0",
                "--redact-header", "x-custom-key", "--redact-query", "session",
                "--redact-body-field", "/user",
                str(path), "--", sys.executable, "-c", CLIENT,
            ],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "status 200" in done.stdout
        sent = sim.served[0].request
    assert dict(sent.headers)["x-custom-key"] == HEADER_SECRET
    assert QUERY_SECRET in sent.target and BODY_SECRET.encode() in sent.body
    data = path.read_bytes()
    for secret in (HEADER_SECRET, QUERY_SECRET, BODY_SECRET):
        assert secret.encode() not in data, secret
    assert b"session=" + REDACTED in data
    assert data.count(REDACTED) >= 3


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--redact-header", "bad name"],
            "error: option --redact-header: invalid name to redact: 'bad name'",
        ),
        (["--redact-query", ""], "error: option --redact-query: invalid name to redact: ''"),
        (
            ["--redact-body-field", "user"],
            "error: option --redact-body-field: invalid body field to redact: JSON pointer must "
            "start with '/': 'user'",
        ),
    ],
)
def test_bad_record_options_of_replay_are_one_line(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    """A bad record option of `replay` is one line naming the flag, exit status 2, and
    nothing is created."""
    path = tmp_path / "c.cassette"
    result = CliRunner().invoke(
        cli, ["replay", "--record-mode", "once", "--listen", "127.0.0.1:0", *args, str(path)]
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == expected
    assert not path.exists()
