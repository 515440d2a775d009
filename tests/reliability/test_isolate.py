"""``replayproxy replay --isolate -- COMMAND``: the proxy and the command in a network namespace
with only loopback, so a C-level socket, a subprocess and a raw socket reach nothing outside it
(issue 28, item 7).

Each test makes a namespace of its own first (``unshare --user --map-root-user --net``) with a
dummy interface (or an empty bridge) holding 10.200.0.1, the "network", and a listener there:
a plain replay's command reaches it three ways, the same command under ``--isolate`` by none,
while the replay itself still answers. No traffic leaves the namespaces the tests create.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._cli import _isolate
from replayproxy._errors import UsageError
from replayproxy.testing._builders import cassette, interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))
PROBE = Path(__file__).with_name("isolate_probe.py")
NETWORK = "10.200.0.1"
ENETUNREACH = "errno 101"

_DRIVER = """
import json, socket, subprocess, sys, threading
exe, cassette, probe, host, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
listener = socket.socket()
listener.bind((host, 0))
listener.listen(64)
accepted = []
def serve():
    while True:
        conn, _ = listener.accept()
        accepted.append(1)
        conn.close()
threading.Thread(target=serve, daemon=True).start()
port = listener.getsockname()[1]
out = {}
for mode in ("plain", "isolate"):
    before = len(accepted)
    flags = ["--isolate"] if mode == "isolate" else []
    run = subprocess.run(
        [exe, "replay", *flags, cassette, "--upstream", "http://api.example", "--listen",
         "127.0.0.1:0", *extra, "--", sys.executable, probe, host, str(port)],
        capture_output=True, text=True, timeout=120,
    )
    lines = run.stdout.strip().splitlines()
    out[mode] = {"rc": run.returncode, "stderr": run.stderr, "accepted": len(accepted) - before,
                 "probe": json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None}
print(json.dumps(out))
"""

# A dummy interface, or a port-less bridge where the kernel has no dummy driver: either holds
# an address outside loopback that only this namespace can reach.
_NETWORK_SETUP = (
    "ip link set lo up && (ip link add d0 type dummy 2>/dev/null || ip link add d0 type bridge)"
    f" && ip addr add {NETWORK}/24 dev d0 && ip link set d0 up"
)


def _namespaces() -> bool:
    if sys.platform != "linux" or shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = ["unshare", "--user", "--map-root-user", "--net", "sh", "-c", _NETWORK_SETUP]
    return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0


needs_namespaces = pytest.mark.skipif(
    not _namespaces(), reason="needs unprivileged user and network namespaces (unshare, ip)"
)


def _in_own_namespace(tmp_path: Path, setup: str, extra: tuple[str, ...] = ()) -> dict:
    """Run the driver in a new user + network namespace after ``setup`` (shell commands)."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction()))
    driver = tmp_path / "driver.py"
    driver.write_text(_DRIVER)
    args = " ".join(f"'{a}'" for a in (sys.executable, driver, EXE, path, PROBE, NETWORK, *extra))
    script = f"{setup} && exec {args}"
    run = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "sh", "-c", script],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@needs_namespaces
def test_isolate_blocks_a_c_socket_a_subprocess_and_a_raw_socket(tmp_path: Path) -> None:
    """A plain replay's command reaches 10.200.0.1 by a ``_socket`` connect, subprocesses and
    an ICMP echo on a raw socket; under ``--isolate`` each gets ENETUNREACH (or cannot
    connect), the listener accepts nothing, and the replay still answers the command."""
    out = _in_own_namespace(tmp_path, _NETWORK_SETUP)
    plain, isolated = out["plain"], out["isolate"]
    assert plain["rc"] == 0 and isolated["rc"] == 0, (plain["stderr"], isolated["stderr"])
    p, i = plain["probe"], isolated["probe"]
    assert p["interfaces"] != ["lo"] and i["interfaces"] == ["lo"]
    assert p["c_socket"] == "connected" and i["c_socket"] == ENETUNREACH
    assert p["subprocess"]["python"] == 0 and i["subprocess"]["python"] != 0
    if "curl" in p["subprocess"]:
        assert p["subprocess"]["curl"] != 7 and i["subprocess"]["curl"] == 7
    assert p["raw_socket"] == "reply" and i["raw_socket"] == ENETUNREACH
    assert plain["accepted"] >= 2 and isolated["accepted"] == 0
    assert p["replayed"] == 200 and i["replayed"] == 200
    assert "1 interaction served" in isolated["stderr"]


@needs_namespaces
def test_isolate_refuses_in_one_line_where_namespaces_are_not_allowed(tmp_path: Path) -> None:
    """With user and network namespaces forbidden (limits 0 in the test's own namespace),
    ``--isolate`` is one line saying why and what to do, exit 2, and the command never runs;
    a plain replay still works there."""
    forbid = (
        "echo 0 > /proc/sys/user/max_user_namespaces && echo 0 > /proc/sys/user/max_net_namespaces"
    )
    out = _in_own_namespace(tmp_path, f"{_NETWORK_SETUP} && {forbid}")
    isolated = out["isolate"]
    assert isolated["rc"] == 2 and isolated["probe"] is None, isolated["stderr"]
    err = isolated["stderr"]
    assert err.startswith("error: --isolate cannot create a network namespace (unshare: ")
    assert "user namespaces may be disabled" in err and err.count("\n") == 1
    assert out["plain"]["rc"] == 0 and out["plain"]["probe"]["replayed"] == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--record-mode", "new_episodes", "--", "true"], "cannot record: --record-mode"),
        (["--record-mode", "once", "--", "true"], "cannot record: --record-mode once"),
        ([], "--isolate needs -- COMMAND"),
    ],
)
def test_isolate_refuses_recording_and_a_missing_command(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """Recording needs the network, and nothing outside could reach an isolated proxy alone:
    both are one line, exit 2, before anything starts."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction()))
    run = subprocess.run(
        [EXE, "replay", "--isolate", str(path), "--upstream", "http://api.example", *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1


def test_isolate_refuses_other_systems(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not Linux: one line naming the system (checked before any system call)."""
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(UsageError, match="needs Linux network namespaces; this is darwin"):
        _isolate.isolate()


def test_isolate_refuses_a_process_with_threads() -> None:
    """unshare(CLONE_NEWUSER) refuses a multi-threaded process: said before it is tried."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with pytest.raises(UsageError, match="must run before any thread starts"):
            _isolate.isolate()
    finally:
        stop.set()
        thread.join()
