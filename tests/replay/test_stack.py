"""The one mitmproxy stack (mitm/stack.py): what it holds, and that the CLI, use_cassette() and
the replay fixture each build theirs with it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replayproxy import _store as store
from replayproxy import use_cassette
from replayproxy._core.replay.record_mode import RecordMode
from replayproxy._engine.session import ReplaySession
from replayproxy._harness.hosts import HostPool
from replayproxy._mitm import stack as stack_mod
from replayproxy._mitm.addons._alpn import AlpnChoice
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.client_limits import ClientLimits
from replayproxy._mitm.stack import MitmStack, build_stack, proxy_mode
from replayproxy.testing import cassette, interaction
from tests.replay.conftest import ReplayTarget

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = "https://api.openai.invalid"


def test_a_replaying_stack_is_the_replayer_alone_and_never_connects() -> None:
    """Replay only: the client limits, the replayer and its ALPN choice, extra addons after them,
    connection_strategy=lazy, no CA."""
    session = ReplaySession(cassette(interaction([b"data: 1\n\n"])), speed=0)
    probe = object()
    stack = build_stack(session, UPSTREAM, extra_addons=[probe])
    replayer = stack.replayer
    assert isinstance(replayer, Replayer) and replayer.session is session
    assert replayer.process is None
    limits, replayer_, alpn, *rest = stack.addons
    assert isinstance(limits, ClientLimits) and replayer_ is replayer
    assert isinstance(alpn, AlpnChoice) and alpn._serving is replayer
    assert tuple(rest) == (probe,)
    assert dict(stack.options) == {"connection_strategy": "lazy"}
    assert stack.mode == f"reverse:{UPSTREAM}"


def test_a_recording_stack_adds_the_recorder_with_the_replayer_as_its_sink(tmp_path: Path) -> None:
    """A session that records (or records=True) gets the recorder, sinking into the replayer;
    the trusted CA bundle becomes mitmproxy's upstream trust."""
    session = ReplaySession(tmp_path / "new.cassette", speed=0, record_mode=RecordMode.ONCE)
    stack = build_stack(session, None, trusted_ca="/ca.pem", origin_process=True)
    _, replayer, _, recorder = stack.addons
    assert replayer is stack.replayer and isinstance(recorder, Recorder)
    assert recorder.sink is replayer
    assert stack.replayer.process is not None
    assert dict(stack.options) == {
        "connection_strategy": "lazy",
        "ssl_verify_upstream_trusted_ca": "/ca.pem",
    }
    assert stack.mode == "regular"
    idle = build_stack(None, None, records=True)
    assert [type(a) for a in idle.addons] == [ClientLimits, Replayer, AlpnChoice, Recorder]
    assert [type(a) for a in build_stack(None, None).addons] == [ClientLimits, Replayer, AlpnChoice]


def test_the_mode_is_forward_without_an_upstream_and_reverse_with_one() -> None:
    """None -> mitmproxy's regular (forward) mode; a URL -> reverse:URL."""
    assert proxy_mode(None) == "regular"
    assert proxy_mode("http://127.0.0.1:9") == "reverse:http://127.0.0.1:9"


def test_the_embedded_proxy_gets_the_stack_as_built() -> None:
    """stack.proxy() hands the addons, mode and options to the embedded mitmproxy unchanged."""
    stack = build_stack(None, UPSTREAM, trusted_ca="/ca.pem")
    proxy = stack.proxy(listen_host="127.0.0.1", listen_port=0, confdir="/tmp/conf")
    assert proxy.addons == list(stack.addons)
    assert proxy.mode == stack.mode and proxy.options == dict(stack.options)
    assert proxy.confdir == "/tmp/conf" and proxy.listen_port == 0


# -- the callers ---------------------------------------------------------------------------

# Run the CLI with build_stack wrapped to say it was called (on stderr).
_CLI_WITH_SPY = """
import sys
import replayproxy._cli.replay as cli_replay
real = cli_replay.build_stack
def spy(*args, **kwargs):
    print("build_stack called", file=sys.stderr, flush=True)
    return real(*args, **kwargs)
cli_replay.build_stack = spy
from replayproxy._cli import main
main()
"""


@pytest.mark.parametrize(
    ("args", "built"),
    [
        (["--record-mode", "new_episodes"], True),
        (["--upstream", UPSTREAM, "--record-mode", "new_episodes"], True),
        ([], False),
        (["--upstream", UPSTREAM], False),
    ],
    ids=["forward-recording", "base-url-recording", "forward-engine", "base-url-engine"],
)
def test_the_cli_builds_its_mitmproxy_with_build_stack(
    tmp_path: Path, args: list[str], built: bool
) -> None:
    """replay builds mitmproxy through build_stack when it may record, and none for a replay
    that never records (the engine serves it in both modes)."""
    path = tmp_path / "chat.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", _CLI_WITH_SPY, "replay", str(path), *args,
         "--listen", "127.0.0.1:0", "--confdir", str(tmp_path / "conf"),
         "--allow-unmatched", "--", sys.executable, "-c", "pass"],
        capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert ("build_stack called" in done.stderr) is built, done.stderr


def test_use_cassette_builds_its_mitmproxy_with_build_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """use_cassette() recording in proxy mode starts its mitmproxy host from build_stack,
    recorder in."""
    calls: list[tuple[Any, ...]] = []
    real = stack_mod.build_stack

    def spy(*args: Any, **kwargs: Any) -> MitmStack:
        built = real(*args, **kwargs)
        calls.append((args, kwargs, built))
        return built

    monkeypatch.setattr(stack_mod, "build_stack", spy)
    pool = HostPool()
    try:
        with use_cassette(
            tmp_path / "c.cassette",
            pool=pool,
            confdir=str(tmp_path),
            set_env=False,
            record_mode="once",
        ) as use:
            assert use.proxy_mode
        assert len(calls) == 1
        (_, upstream), kwargs, built = calls[0]
        assert upstream is None and kwargs["records"] is True
        assert pool._mitm is not None and pool._mitm.proxy.addons == list(built.addons)
    finally:
        pool.close()


@pytest.mark.parametrize("replay_proxy", ["reverse"], indirect=True)
def test_the_replay_fixture_runs_a_build_stack_stack(replay_proxy: ReplayTarget) -> None:
    """The replay tests' proxy is build_stack's: its addons (probe last), mode and options."""
    stack = replay_proxy.stack
    assert isinstance(stack, MitmStack)
    assert replay_proxy.proxy.addons == list(stack.addons)
    assert stack.addons[1:] == (replay_proxy.replayer, stack.addons[2], replay_proxy.probe)
    assert replay_proxy.proxy.options == {"connection_strategy": "lazy"}


_CALLERS = [
    "replayproxy/_cli/replay.py",
    "replayproxy/_harness/hosts.py",
    "tests/replay/conftest.py",
]
_BUILT_BY_THE_STACK = {"Replayer", "Recorder", "EmbeddedProxy"}


@pytest.mark.parametrize("caller", _CALLERS)
def test_no_caller_assembles_a_stack_of_its_own(caller: str) -> None:
    """The three callers construct no Replayer, Recorder or EmbeddedProxy and set no
    connection_strategy themselves: build_stack does, once."""
    tree = ast.parse((ROOT / caller).read_text())
    built = {
        node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not built & _BUILT_BY_THE_STACK
    assert "build_stack" in built
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assert not {"connection_strategy", "ssl_verify_upstream_trusted_ca"} & strings
