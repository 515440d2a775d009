"""``replayproxy replay --upstream URL`` served by the replay engine: the same for the user.

Base-URL replay needs no mitmproxy feature, so the engine serves it directly
(:func:`replayproxy._core.replay.shell.choose_shell`, its table in
tests/core/replay/test_shell.py). These tests run the CLI as a user does and check what must
not change: the ready line, the wrapped command's environment and exit status,
the unmatched 500, resets as RSTs, one-line bind errors, ``--match-host`` against the host
stood in for, and the summary line.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind
from replayproxy.testing import cassette, interaction

REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]
UPSTREAM = "https://api.openai.invalid"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run(
        [*REPLAYPROXY, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n", b"data: 2\n\n"], gap_ms=5)))
    return path


def test_base_url_mode_gives_the_command_the_same_environment(chat: Path, tmp_path: Path) -> None:
    """-- COMMAND gets REPLAYPROXY_URL = the listening URL, the host added to NO_PROXY, no
    proxy variables and no CA; its requests are served; the summary line follows; and no
    mitmproxy CA is created (mitmproxy never ran)."""
    script = (
        "import os, httpx\n"
        "for k in ('HTTPS_PROXY', 'HTTP_PROXY'): print(k, os.environ.get(k))\n"
        "print('NO_PROXY', os.environ['NO_PROXY'])\n"
        "print('URL', os.environ['REPLAYPROXY_URL'])\n"
        "r = httpx.post(os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions',\n"
        '               content=b\'{"model":"m","stream":true}\')\n'
        "print(r.status_code, repr(r.text))\n"
    )
    confdir = tmp_path / "conf"
    done = run(
        "replay", str(chat), "--upstream", UPSTREAM, "--listen", "127.0.0.1:0",
        "--confdir", str(confdir), "--", sys.executable, "-c", script,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("listening on http://127.0.0.1:")
    url = lines[0].removeprefix("listening on ")
    assert lines[1:3] == ["HTTPS_PROXY None", "HTTP_PROXY None"]
    assert "127.0.0.1" in lines[3].removeprefix("NO_PROXY ").split(",")
    assert lines[4] == f"URL {url}"
    assert lines[5] == "200 'data: 1\\n\\ndata: 2\\n\\n'"
    assert done.stderr.strip().splitlines()[-1] == (
        "replayproxy: 1 interaction served, 0 unmatched requests, "
        "0 of 1 recorded interaction never used"
    )
    assert not confdir.exists()


def test_a_recorded_reset_reaches_curl_as_a_reset(tmp_path: Path) -> None:
    """A reset recorded mid-stream reaches curl as a TCP RST (exit 56), after the frames."""
    path = tmp_path / "reset.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"], end=EndKind.RESET)))
    script = (
        "import os, subprocess, sys\n"
        'body = \'{"model":"m","stream":true}\'\n'
        "url = os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions'\n"
        "r = subprocess.run(['curl', '-sS', '-N', '--data-binary', body, url],\n"
        "                   capture_output=True, text=True)\n"
        "print(r.returncode); print(repr(r.stdout)); print(r.stderr.strip())\n"
    )
    done = run(
        "replay", str(path), "--upstream", UPSTREAM, "--listen", "127.0.0.1:0",
        "--speed", "0", "--", sys.executable, "-c", script,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    status, body, err = done.stdout.splitlines()[1:4]
    assert status == "56", done.stdout
    assert body == "'data: 1\\n\\n'"
    assert "reset by peer" in err


@pytest.mark.parametrize(
    ("upstream", "served"),
    [(UPSTREAM, True), (UPSTREAM + ":443", True), ("https://other.invalid", False)],
)
def test_match_host_compares_the_host_stood_in_for(chat: Path, upstream: str, served: bool) -> None:
    """With --match-host, requests count as sent to --upstream (default port left out), as
    mitmproxy's reverse mode showed them: the recorded host matches, another one misses."""
    script = (
        "import os, httpx\n"
        "r = httpx.post(os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions',\n"
        '               content=b\'{"model":"m","stream":true}\')\n'
        "print(r.status_code)\n"
        "print(r.text)\n"
    )
    done = run(
        "replay", str(chat), "--upstream", upstream, "--listen", "127.0.0.1:0",
        "--match-host", "--", sys.executable, "-c", script,
    )  # fmt: skip
    assert done.stdout.splitlines()[1] == ("200" if served else "500"), done.stdout
    assert done.returncode == (0 if served else 1)
    if not served:
        assert "host: recorded api.openai.invalid, requested other.invalid" in done.stdout


def test_a_busy_port_is_a_one_line_error(chat: Path) -> None:
    """A port already in use: `error: cannot listen on HOST:PORT: address already in use`,
    exit 2, as in forward mode."""
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = run("replay", str(chat), "--upstream", UPSTREAM, "--listen", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line == f"error: cannot listen on 127.0.0.1:{port}: address already in use"


def test_ipv6_listen_address_is_printed_in_brackets(chat: Path) -> None:
    """--listen [::1]:0 prints `listening on http://[::1]:PORT`, and that URL works."""
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    script = (
        "import os, httpx\n"
        "r = httpx.post(os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions',\n"
        '               content=b\'{"model":"m","stream":true}\')\n'
        "print(r.status_code)\n"
    )
    done = run(
        "replay", str(chat), "--upstream", UPSTREAM, "--listen", "[::1]:0",
        "--", sys.executable, "-c", script,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()[:2]
    assert first.startswith("listening on http://[::1]:")
    assert second == "200"
