"""``replayproxy replay`` as a user runs it: subprocesses, real clients, exit statuses, stderr."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy.testing import CountingUpstream, cassette, interaction

ROOT = Path(__file__).resolve().parents[2]
ANTHROPIC = ROOT / "cassettes" / "anthropic-text.cassette"
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]

# Streams a recorded Anthropic request with the SDK, configured by the environment only.
SDK_CLIENT = """
import json, os, sys, anthropic
from replayproxy import _store as store
it = store.load(sys.argv[1]).interactions[0]
base = None if os.environ.get("HTTPS_PROXY") else os.environ["REPLAYPROXY_URL"]
client = anthropic.Anthropic(api_key="sk-ant-test", base_url=base or "https://api.anthropic.invalid",
                             max_retries=0)
text = "".join(e.delta.text for e in client.messages.create(**json.loads(it.request.body))
               if e.type == "content_block_delta")
print(text)
"""

# Posts a request no recording matches, prints the status, and exits 0 (a "passing" command).
MISS_CLIENT = """
import os, httpx
r = httpx.post(os.environ["REPLAYPROXY_URL"] + "/v1/messages", json={"model": "other"})
print(r.status_code, r.headers.get("x-replayproxy-unmatched"))
print(r.text)
"""


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("conf")


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run(
        [*REPLAYPROXY, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def counter() -> Iterator[CountingUpstream]:
    c = CountingUpstream()
    yield c
    c.close()


def test_forward_mode_serves_a_wrapped_sdk_and_prints_the_summary(confdir: Path) -> None:
    """-- COMMAND gets HTTPS_PROXY + CA; the SDK streams the text; the summary goes to stderr."""
    done = run(
        "replay", str(ANTHROPIC), "--listen", "127.0.0.1:0", "--confdir", str(confdir),
        "--speed", "0", "--", sys.executable, "-c", SDK_CLIENT, str(ANTHROPIC),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"listening on http://127\.0\.0\.1:\d+", lines[0])
    assert lines[1] == f"ca-cert {confdir / 'mitmproxy-ca-cert.pem'}"
    assert lines[2].startswith("Hello! I'm doing well")
    assert done.stderr.strip().splitlines()[-1] == (
        "replayproxy: 1 interaction served, 0 unmatched requests, "
        "0 of 1 recorded interaction never used"
    )


def test_base_url_mode_never_contacts_the_upstream(counter: CountingUpstream) -> None:
    """--upstream names the host stood in for; it gets no connection; curl gets the stream."""
    body = store.load(ANTHROPIC).interactions[0].request.body
    script = (
        "import os, sys, subprocess\n"
        "r = subprocess.run(['curl', '-sS', '-N', '--fail', '--data-binary', '@-',"
        " os.environ['REPLAYPROXY_URL'] + '/v1/messages'], input=sys.argv[1].encode())\n"
        "sys.exit(r.returncode)\n"
    )
    done = run(
        "replay", str(ANTHROPIC), "--upstream", f"http://127.0.0.1:{counter.port}",
        "--listen", "127.0.0.1:0", "--speed", "0",
        "--", sys.executable, "-c", script, body.decode(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "event: message_stop" in done.stdout
    assert "ca-cert" not in done.stdout
    time.sleep(0.2)
    assert counter.connections == 0


def test_unmatched_request_fails_the_run_unless_allowed(tmp_path: Path) -> None:
    """A miss gets the explained 500 and exit status 1 though the command passed."""
    done = run(
        "replay", str(ANTHROPIC), "--upstream", "https://api.anthropic.invalid",
        "--listen", "127.0.0.1:0", "--", sys.executable, "-c", MISS_CLIENT,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[1] == "500 1"
    assert "closest recorded interaction: #0" in done.stdout
    assert "body at /model" in done.stdout
    assert "unmatched: no recorded interaction matches POST /v1/messages" in done.stderr
    assert "0 interactions served, 1 unmatched request, 1 of 1" in done.stderr
    allowed = run(
        "replay", str(ANTHROPIC), "--upstream", "https://api.anthropic.invalid",
        "--listen", "127.0.0.1:0", "--allow-unmatched", "--", sys.executable, "-c", MISS_CLIENT,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr


def test_the_commands_own_failure_is_passed_on() -> None:
    """The wrapped command's exit status is the run's exit status."""
    done = run(
        "replay", str(ANTHROPIC), "--upstream", "https://api.anthropic.invalid",
        "--listen", "127.0.0.1:0", "--", sys.executable, "-c", "raise SystemExit(7)",
    )  # fmt: skip
    assert done.returncode == 7


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["missing.cassette"], "missing.cassette: no such cassette file"),
        (b"\x93garbage", ["bad.cassette"], "bad.cassette"),
        ("ok", ["ok.cassette", "--speed", "-1"], "speed must be"),
        ("ok", ["ok.cassette", "--ignore-body-field", "x"], "must start with '/'"),
        ("ok", ["ok.cassette", "--upstream", "ftp://x"], "invalid upstream"),
    ],
)
def test_bad_input_is_one_line_before_listening(
    tmp_path: Path, setup: object, args: list[str], message: str
) -> None:
    """A missing/corrupt cassette or a bad option: one 'error:' line, exit 2, never listening."""
    if isinstance(setup, bytes):
        (tmp_path / args[0]).write_bytes(setup)
    elif setup == "ok":
        store.save(tmp_path / args[0], cassette(interaction([b"data: 1\n\n"])))
    args = [str(tmp_path / args[0]), *args[1:]]
    # In-process (click's runner): these fail before any proxy starts.
    done = CliRunner().invoke(cli, ["replay", *args, "--listen", "127.0.0.1:0", "--", "true"])
    assert done.exit_code == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line


def test_mitmdump_script_replays_standalone(confdir: Path, tmp_path: Path) -> None:
    """mitmdump -s mitmdump_replay.py with replayproxy_* options serves a cassette to curl."""
    mitmdump = Path(sys.executable).parent / "mitmdump"
    script = ROOT / "replayproxy" / "_mitm" / "addons" / "mitmdump_replay.py"
    it = store.load(ANTHROPIC).interactions[0]
    proc = subprocess.Popen(
        [str(mitmdump), "--listen-host", "127.0.0.1", "--listen-port", "0",
         "--set", f"confdir={confdir}", "-s", str(script),
         "--set", f"replayproxy_replay={ANTHROPIC}", "--set", "replayproxy_speed=0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        port = None
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            found = re.search(r"listening at 127\.0\.0\.1:(\d+)", line)
            port = int(found.group(1)) if found else None
        assert port is not None, "mitmdump did not report its port"
        out = subprocess.run(
            ["curl", "-sS", "-N", "--fail", "--proxy", f"http://127.0.0.1:{port}",
             "--cacert", str(confdir / "mitmproxy-ca-cert.pem"), "--data-binary", "@-",
             "https://api.anthropic.invalid/v1/messages"],
            input=it.request.body, capture_output=True, timeout=20,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert it.response is not None and out.stdout == it.response.body
    finally:
        proc.terminate()
        proc.wait(10)


def test_torn_cassette_replays_what_loaded_with_a_warning(tmp_path: Path) -> None:
    """A cassette with a torn tail (killed recorder) warns on stderr and serves the rest."""
    path = tmp_path / "torn.cassette"
    first = interaction([b"data: 1\n\n"], body=b'{"n":1}')
    store.save(path, cassette(first, interaction([b"data: 2\n\n"], body=b'{"n":2}')))
    path.write_bytes(path.read_bytes()[:-7])
    script = (
        "import os, httpx\n"
        "r = httpx.post(os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions', json={'n': 1})\n"
        "print(r.status_code, r.text)\n"
    )
    done = run(
        "replay", str(path), "--upstream", "https://api.openai.invalid",
        "--listen", "127.0.0.1:0", "--", sys.executable, "-c", script,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "200 data: 1" in done.stdout
    assert done.stderr.startswith("warning: ") and "torn tail" in done.stderr
    assert "1 interaction served, 0 unmatched requests, 0 of 1" in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_right_after_the_ready_line_is_clean(tmp_path: Path, signum: int) -> None:
    """A supervisor that stops replay as soon as it reads `listening on` gets exit 0 and the
    summary: the signal handlers are in place before the ready line is printed."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    proc = subprocess.Popen(
        [*REPLAYPROXY, "replay", "--listen", "127.0.0.1:0",
         "--upstream", "https://api.openai.invalid", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening on http://127.0.0.1:")
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "replayproxy: 0 interactions served, 0 unmatched requests" in err


ENV_CLIENT = "import os; print(os.environ.get('NODE_USE_ENV_PROXY'))"


def test_a_command_that_sends_nothing_is_warned_or_failed() -> None:
    """No request reached the proxy: a warning naming HTTPS_PROXY; --fail-if-bypassed exits 1."""
    base = ["replay", str(ANTHROPIC), "--listen", "127.0.0.1:0"]
    done = run(*base, "--", sys.executable, "-c", ENV_CLIENT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1"  # NODE_USE_ENV_PROXY=1 in forward mode
    assert (
        "warning: the command ended and no request reached replayproxy, though the cassette "
        "has 1 interaction: its client probably ignores HTTPS_PROXY"
    ) in done.stderr
    failed = run(*base, "--fail-if-bypassed", "--", sys.executable, "-c", "pass")
    assert failed.returncode == 1
    assert "error: the command ended and no request reached replayproxy" in failed.stderr
    own = run(*base, "--fail-if-bypassed", "--", sys.executable, "-c", "raise SystemExit(4)")
    assert own.returncode == 4  # the command's own failure wins
    reverse = run(*base, "--upstream", "https://api.anthropic.invalid", "--",
                  sys.executable, "-c", ENV_CLIENT)  # fmt: skip
    assert reverse.stdout.splitlines()[-1] == "None"
    assert "point the client's base URL at $REPLAYPROXY_URL" in reverse.stderr


def test_a_command_whose_requests_arrive_gets_no_bypass_warning() -> None:
    """A miss counts as a request that reached the proxy: no bypass warning."""
    done = run(
        "replay", str(ANTHROPIC), "--upstream", "https://api.anthropic.invalid",
        "--listen", "127.0.0.1:0", "--fail-if-bypassed", "--allow-unmatched",
        "--", sys.executable, "-c", MISS_CLIENT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no request reached" not in done.stderr
