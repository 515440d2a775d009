"""Exposure: a --listen address other machines can reach is warned about; bind errors say what
failed, with addresses written as a user writes them (``[::1]:8080``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._cli._common import is_loopback
from replayproxy._errors import ReplayProxyError
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing import cassette, interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("192.0.2.10", False), ("example.com", False)],
)  # fmt: skip
def test_loopback_addresses_are_told_apart(host: str, loopback: bool) -> None:
    """Only loopback addresses (and localhost) count as local."""
    assert is_loopback(host) is loopback


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "one.cassette"
    if not path.exists():
        store.save(path, cassette(interaction([b"data: 1\n\n"])))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    cmd = [
        EXE,
        *args[:1],
        *([str(path)] if args[0] == "replay" else [str(tmp_path / "r.cassette")]),
    ]
    cmd += [*args[1:], "--confdir", str(tmp_path / "conf"), "--", sys.executable, "-c", "pass"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env)


@pytest.mark.parametrize("command", ["replay", "record"])
def test_listening_on_all_interfaces_warns_once(command: str, tmp_path: Path) -> None:
    """--listen 0.0.0.0 prints one warning naming the address and the missing authentication;
    the default loopback address prints none."""
    extra = ["--upstream", "http://127.0.0.1:9", "--overwrite"] if command == "record" else []
    # The command sends nothing: `record` then fails for having recorded nothing (exit 1).
    status = 1 if command == "record" else 0
    exposed = _run([command, "--listen", "0.0.0.0:0", *extra], tmp_path)
    assert exposed.returncode == status, exposed.stderr
    warnings = [line for line in exposed.stderr.splitlines() if "no authentication" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ")
    assert "0.0.0.0:0" in warnings[0] and "reachable from other machines" in warnings[0]
    local = _run([command, "--listen", "127.0.0.1:0", *extra], tmp_path)
    assert local.returncode == status, local.stderr
    assert "no authentication" not in local.stderr


def test_a_busy_ipv6_port_is_named_with_brackets() -> None:
    """A bind error names [::1]:PORT and the reason, in one line."""
    try:
        busy = socket.socket(socket.AF_INET6)
        busy.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    busy.listen()
    port = busy.getsockname()[1]
    try:
        with pytest.raises(ReplayProxyError) as info:
            EmbeddedProxy([], listen_host="::1", listen_port=port).start()
    finally:
        busy.close()
    assert str(info.value) == f"cannot listen on [::1]:{port}: address already in use"


def test_a_host_that_does_not_resolve_says_so(tmp_path: Path) -> None:
    """An unknown listen host says that it does not resolve (was "unknown error -2"),
    one line, no traceback, exit status 2 (every ReplayProxyError)."""
    done = _run(["replay", "--listen", "no-such-host.invalid:0"], tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: cannot listen on no-such-host.invalid:0: ")
    assert "does not resolve" in lines[-1] and "unknown error" not in lines[-1]
    assert "Traceback" not in done.stderr
