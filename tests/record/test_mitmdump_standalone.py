"""The recording script works standalone in mitmproxy's own `mitmdump -s`."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from replayproxy._core.cassette.model import EndKind
from replayproxy.testing import Behavior, Simulator

from .conftest import REPLAYPROXY, clean_env
from .helpers import assert_like_served, load_quiet

MITMDUMP = str(Path(sys.executable).parent / "mitmdump")


def test_mitmdump_records_with_the_printed_script(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """`mitmdump -s $(replayproxy addon-path record) --set replayproxy_record=...` records."""
    script = subprocess.run(
        [REPLAYPROXY, "addon-path", "record"], capture_output=True, text=True, check=True
    ).stdout.strip()
    cassette = tmp_path / "c.cassette"
    plain_sim.behavior = Behavior(gap_s=0.02)
    args = [
        MITMDUMP,
        "-s",
        script,
        "--set",
        f"replayproxy_record={cassette}",
        "--set",
        "replayproxy_redact_headers=x-team-token",
        "--set",
        f"confdir={confdir}",
        "--mode",
        f"reverse:{plain_sim.url}",
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        "0",
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env()
    )
    try:
        assert proc.stdout is not None
        port = None
        deadline = time.monotonic() + 20
        seen = []
        while port is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if m := re.search(r"listening at 127\.0\.0\.1:(\d+)", line):
                port = int(m.group(1))
        assert port is not None, seen
        base = f"http://127.0.0.1:{port}"
        headers = {"x-team-token": "TEAMSECRET", "authorization": "Bearer sk-SECRET"}
        with (
            httpx.Client(timeout=10) as client,
            client.stream("POST", base + "/v1/messages", json={}, headers=headers) as r,
        ):
            received = b"".join(r.iter_raw())
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    (served,) = plain_sim.served
    (interaction,) = load_quiet(cassette).interactions
    assert received == served.body
    assert interaction.end.kind is EndKind.COMPLETE
    assert_like_served(interaction, served)
    data = cassette.read_bytes()
    assert b"TEAMSECRET" not in data and b"sk-SECRET" not in data
