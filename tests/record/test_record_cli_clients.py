"""`replayproxy record ... -- COMMAND` with clients nobody here wrote, configured only by env vars.

Each test runs the real CLI as a process; the wrapped command is a real client (the openai and
anthropic SDKs, curl) that only knows the upstream (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``)
and picks up the proxy and CA from the environment the recorder sets (forward mode), or the
proxy's base URL from ``$REPLAYPROXY_URL`` (reverse mode).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from replayproxy._core.cassette.model import EndKind
from replayproxy._core.redaction.secrets import REDACTED
from replayproxy.testing import STREAMS, Behavior, Simulator, expected_text

from .conftest import clean_env, run_record
from .helpers import assert_like_served, load_quiet

# Small gaps keep 300-event streams quick while every write stays its own chunk on the wire.
OPENAI_SCHEDULE = Behavior(ttfb_s=0.05, gap_s=(0.001,) * 30 + (0.03,))
ANTHROPIC_SCHEDULE = Behavior(ttfb_s=0.05, gap_s=(0.01, 0.05))

OPENAI_SCRIPT = """
import openai
client = openai.OpenAI(max_retries=0)
stream = client.chat.completions.create(
    model="gpt-4.1-nano", messages=[{"role": "user", "content": "hi"}], stream=True)
print("".join(c.choices[0].delta.content or "" for c in stream if c.choices), end="")
"""

ANTHROPIC_SCRIPT = """
import anthropic
client = anthropic.Anthropic(max_retries=0)
with client.messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                            messages=[{"role": "user", "content": "hi"}]) as stream:
    print("".join(stream.text_stream), end="")
"""


def _check(
    cassette: Path, sim: Simulator, path: str, ends: tuple[EndKind, ...] = (EndKind.COMPLETE,)
) -> None:
    (interaction,) = load_quiet(cassette).interactions
    (served,) = sim.served
    assert interaction.request.url == sim.url + path
    assert interaction.end.kind in ends, interaction.end
    assert_like_served(interaction, served)


@pytest.mark.parametrize("tls", [True, False], ids=["https", "http"])
def test_openai_sdk_forward(
    request: pytest.FixtureRequest, tmp_path: Path, confdir: Path, ca_pem: Path, tls: bool
) -> None:
    """openai via HTTPS_PROXY + SSL_CERT_FILE from the recorder: text intact, frames exact."""
    sim: Simulator = request.getfixturevalue("tls_sim" if tls else "plain_sim")
    sim.behavior = OPENAI_SCHEDULE
    cassette = tmp_path / "openai.cassette"
    env = clean_env(OPENAI_BASE_URL=sim.url + "/v1", OPENAI_API_KEY="sk-proj-SECRETKEY1")
    args = ["--confdir", str(confdir), "--upstream-ca", str(ca_pem), str(cassette)]
    done = run_record([*args, "--", sys.executable, "-c", OPENAI_SCRIPT], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(expected_text(STREAMS["openai-chat-text"]))
    assert f"1 interaction recorded to {cassette}" in done.stderr
    # openai (2.x, 3.x) closes the response right after `data: [DONE]`; when that close reaches
    # mitmproxy before the upstream's chunked terminator, the client really left first:
    # `client_gone`, with every frame recorded (the SDK had read them all).
    _check(cassette, sim, "/v1/chat/completions", (EndKind.COMPLETE, EndKind.CLIENT_GONE))
    assert b"SECRETKEY1" not in cassette.read_bytes()


def test_anthropic_sdk_forward_https(
    tmp_path: Path, confdir: Path, ca_pem: Path, tls_sim: Simulator
) -> None:
    """anthropic via the recorder's env (forward, HTTPS upstream): text intact, frames exact."""
    tls_sim.behavior = ANTHROPIC_SCHEDULE
    cassette = tmp_path / "anthropic.cassette"
    env = clean_env(ANTHROPIC_BASE_URL=tls_sim.url, ANTHROPIC_API_KEY="sk-ant-SECRETKEY2")
    args = ["--confdir", str(confdir), "--upstream-ca", str(ca_pem), str(cassette)]
    done = run_record([*args, "--", sys.executable, "-c", ANTHROPIC_SCRIPT], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(expected_text(STREAMS["anthropic-text"]))
    _check(cassette, tls_sim, "/v1/messages")
    (interaction,) = load_quiet(cassette).interactions
    # anthropic < 1 sends x-api-key, anthropic 2.x "authorization: Bearer"
    sent = [interaction.request.header(h) for h in ("x-api-key", "authorization")]
    assert REDACTED.decode() in sent
    assert b"SECRETKEY2" not in cassette.read_bytes()


@pytest.mark.parametrize("tls", [True, False], ids=["https", "http"])
def test_anthropic_sdk_reverse(
    request: pytest.FixtureRequest, tmp_path: Path, confdir: Path, ca_pem: Path, tls: bool
) -> None:
    """anthropic with ANTHROPIC_BASE_URL=$REPLAYPROXY_URL (reverse mode to the simulator)."""
    sim: Simulator = request.getfixturevalue("tls_sim" if tls else "plain_sim")
    sim.behavior = ANTHROPIC_SCHEDULE
    cassette = tmp_path / "anthropic.cassette"
    env = clean_env(ANTHROPIC_API_KEY="sk-ant-SECRETKEY3")
    args = ["--upstream", sim.url, "--upstream-ca", str(ca_pem), str(cassette)]
    shell = f'ANTHROPIC_BASE_URL="$REPLAYPROXY_URL" exec "{sys.executable}" -c "$0"'
    done = run_record([*args, "--", "sh", "-c", shell, ANTHROPIC_SCRIPT], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(expected_text(STREAMS["anthropic-text"]))
    _check(cassette, sim, "/v1/messages")


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
@pytest.mark.parametrize("tls", [True, False], ids=["https", "http"])
def test_curl_forward(
    request: pytest.FixtureRequest, tmp_path: Path, confdir: Path, ca_pem: Path, tls: bool
) -> None:
    """curl with the recorder's HTTPS_PROXY/CURL_CA_BUNDLE streams and is recorded exactly."""
    sim: Simulator = request.getfixturevalue("tls_sim" if tls else "plain_sim")
    sim.behavior = ANTHROPIC_SCHEDULE
    cassette = tmp_path / "curl.cassette"
    url = sim.url + "/v1/messages"
    curl = ["curl", "-sSfN", "--max-time", "20", "-d", '{"stream": true}', url]
    args = ["--confdir", str(confdir), "--upstream-ca", str(ca_pem), str(cassette)]
    done = run_record([*args, "--", *curl], clean_env())
    assert done.returncode == 0, done.stderr
    (served,) = sim.served
    assert done.stdout.endswith(served.body.decode())
    _check(cassette, sim, "/v1/messages")
