"""The servers a benchmark run compares, each started through its real shell as a subprocess.

A :class:`Target` is where clients connect (``host:port``) plus how they address requests
(origin-form for reverse proxies and servers, absolute-form for a regular proxy) and the
server processes behind it (for peak memory and clean-up).

- floor (direct):         ``benchmarks/_floor_server.py`` (plain asyncio)
- floor (proxy):          ``mitmdump --mode reverse:<floor>`` + streaming script
- mitmproxy replay:       ``mitmdump --server-replay FLOWS`` (reverse mode, lazy connections)
- replayproxy (base URL): ``replayproxy replay --upstream URL`` (CLI subprocess; the engine)
- replayproxy (proxy):    ``replayproxy replay`` (CLI subprocess, forward proxy: mitmproxy)
- replayproxy record:     ``replayproxy record`` (CLI subprocess) in front of the floor
- peers (Reel, VCR.py):   ``_peer_tools.py``
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _harness import Server, bin_path, port_from_file, port_from_log

__all__ = ["HERE", "Target", "Unavailable"]

HERE = Path(__file__).resolve().parent
LOOPBACK = "127.0.0.1"


class Unavailable(Exception):
    """A path cannot be measured in this checkout (e.g. the part has not landed yet)."""


@dataclass
class Target:
    label: str
    port: int
    servers: list[Server] = field(default_factory=list)
    absolute: str | None = None  # "http://host:port" prefix for absolute-form (regular proxy)
    host: str = LOOPBACK

    @property
    def main(self) -> Server:
        return self.servers[0]

    def wait(self, timeout: float = 30.0) -> Target:
        for s in self.servers:
            s.wait(timeout)
        self.port = self.main.port
        return self


def floor(
    label: str, cassette: Path, speed: float, workdir: Path, tls: Path | None = None
) -> Target:
    """The floor server; ``tls``: over HTTPS with this certificate and key (PEM)."""
    argv = [sys.executable, str(HERE / "_floor_server.py"), str(cassette), "--speed", str(speed)]
    if tls is not None:
        argv += ["--tls", str(tls)]
    s = Server(label, argv, port_from_log(r"PORT (\d+)"), workdir)
    return Target(label, 0, [s])


def _mitmdump(label: str, args: list[str], workdir: Path, stream: bool, confdir: Path) -> Server:
    port_file = workdir / f"{label.replace(' ', '_').replace('/', '_')}.port"
    argv = [
        bin_path("mitmdump"),
        "-q",
        "--listen-host", LOOPBACK,
        "--listen-port", "0",
        "--set", f"confdir={confdir}",
        "--set", "connection_strategy=lazy",
        "-s", str(HERE / "_mitm_script.py"),
        *args,
    ]  # fmt: skip
    env = {"BENCH_PORT_FILE": str(port_file), "BENCH_STREAM": "1" if stream else "0"}
    return Server(label, argv, port_from_file(port_file), workdir, env=env)


def mitm_passthrough(label: str, upstream_port: int, workdir: Path, confdir: Path) -> Target:
    """Plain mitmdump streaming every response: the floor for the proxy path."""
    s = _mitmdump(
        label, ["--mode", f"reverse:http://{LOOPBACK}:{upstream_port}"], workdir, True, confdir
    )
    return Target(label, 0, [s])


def mitm_server_replay(
    label: str, flows: Path, dummy_port: int, workdir: Path, confdir: Path
) -> Target:
    """mitmproxy's own ``--server-replay`` of the same streams (whole bodies, no timing)."""
    args = [
        "--mode", f"reverse:http://{LOOPBACK}:{dummy_port}",
        "--server-replay", str(flows),
        "--set", "server_replay_reuse=true",
        "--set", "server_replay_extra=kill",
    ]  # fmt: skip
    s = _mitmdump(label, args, workdir, False, confdir)
    return Target(label, 0, [s])


def replay_cli(
    label: str,
    cassette: Path,
    speed: float,
    workdir: Path,
    confdir: Path,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
    forward: bool = False,
) -> Target:
    """``replayproxy replay`` as a subprocess: base-URL mode (``--upstream``), or with
    ``forward`` the forward-proxy mode (mitmproxy; clients send absolute-form requests).

    ``extra`` are more CLI arguments (e.g. ``--fault coalesce``); ``env`` more environment
    variables (``ab_replay.py`` sets ``PYTHONPATH`` to run another checkout's package).
    """
    mode = [] if forward else ["--upstream", "https://api.openai.com"]
    argv = [
        bin_path("replayproxy"), "replay", str(cassette), *mode,
        "--listen", f"{LOOPBACK}:0",
        "--confdir", str(confdir),
        "--speed", str(speed),
        "--allow-repeats",
        *extra,
    ]  # fmt: skip
    s = Server(label, argv, port_from_log(r"listening on http://[^:\s]+:(\d+)"), workdir, env=env)
    return Target(label, 0, [s], absolute="http://api.openai.com" if forward else None)


def record_cli(
    label: str, cassette: Path, upstream_port: int, workdir: Path, confdir: Path
) -> Target:
    """``replayproxy record`` as a subprocess, reverse mode in front of the floor server."""
    argv = [
        bin_path("replayproxy"), "record", str(cassette),
        "--upstream", f"http://{LOOPBACK}:{upstream_port}",
        "--listen", f"{LOOPBACK}:0",
        "--confdir", str(confdir),
        "--overwrite",
    ]  # fmt: skip
    s = Server(label, argv, port_from_log(r"listening on http://[^:\s]+:(\d+)"), workdir)
    return Target(label, 0, [s])
