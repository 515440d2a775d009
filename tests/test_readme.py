"""The README quick start, followed as written (twice): every snippet works on the second try;
and the replay guide's ReplayServer snippet runs as written.

The blocks are read from README.md (and docs/guides/replay.md) itself, so the test fails when
the page drifts. Only the
port changes (8080 may be taken on a shared machine) and, instead of `pip install .` into a new
`.venv`, the replayproxy under test runs; the SDK snippets run with this interpreter (it has
the SDKs, as the README's `app-venv` would).
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
REPLAY_GUIDE = (ROOT / "docs" / "guides" / "replay.md").read_text(encoding="utf-8")
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]


def section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.index("\n## ", start + 1)
    return README[start:end]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


QUICK = section("Quick start: replay a shipped cassette")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def quick_start_server(port: int) -> Iterator[subprocess.Popen[str]]:
    """The quick start's first command, from `replayproxy replay` on."""
    line = blocks(QUICK, "sh")[0].strip()
    command = shlex.split(line.split("&& .venv/bin/replayproxy ", 1)[1])
    assert command[0] == "replay" and "--allow-repeats" in command
    command = [a.replace("127.0.0.1:8080", f"127.0.0.1:{port}") for a in command]
    proc = subprocess.Popen(
        [*REPLAYPROXY, *command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening on ")
        yield proc
    finally:
        proc.terminate()
        proc.wait(15)


def test_quick_start_curl_and_sdk_snippet_work_twice() -> None:
    """The curl and the openai snippet each succeed twice against one quick-start server."""
    port = free_port()
    curl = blocks(QUICK, "sh")[1].strip().replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    snippet = blocks(QUICK, "python")[0].replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    with quick_start_server(port) as proc:
        for _ in range(2):
            out = subprocess.run(
                shlex.split(curl.replace("-N ", "-sS --fail -N ")), capture_output=True,
                timeout=60,
            )  # fmt: skip
            assert out.returncode == 0, out.stderr
            assert b"data: [DONE]" in out.stdout
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 0, done.stderr
            assert "Harmony Day" in done.stdout
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert "4 interactions served, 0 unmatched requests" in err


def test_proxy_mode_example_works_twice(tmp_path: Path) -> None:
    """`replayproxy replay cassettes/anthropic-text.cassette -- python my_app.py`, twice."""
    (tmp_path / "my_app.py").write_text(blocks(QUICK, "python")[1])
    sh = blocks(QUICK, "sh")[3].strip().splitlines()
    assert sh[0].startswith("source ")  # the app's environment is activated first
    command = shlex.split(sh[1])
    assert command[:2] == [".venv/bin/replayproxy", "replay"] and command[-2:] == [
        "python",
        "my_app.py",
    ]
    options = command[1 : command.index("--")]
    args = [*options, "--listen", "127.0.0.1:0", "--confdir", str(tmp_path / "conf"), "--"]
    for _ in range(2):
        done = subprocess.run(
            [*REPLAYPROXY, *[str(ROOT / a) if a.startswith("cassettes/") else a for a in args],
             sys.executable, str(tmp_path / "my_app.py")],
            capture_output=True, text=True, timeout=90, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Hello!" in done.stdout
        assert "1 interaction served, 0 unmatched requests" in done.stderr


@pytest.mark.parametrize("attempt", [1, 2])
def test_replay_server_snippet_runs_as_written(attempt: int) -> None:
    """The replay guide's ReplayServer snippet is complete: it runs as is, from the checkout."""
    (snippet,) = [b for b in blocks(REPLAY_GUIDE, "python") if "summary().line()" in b]
    done = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "replayproxy: 1 interaction served, 0 unmatched requests" in done.stdout
