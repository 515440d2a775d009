"""``cassette import-flows``: a flow file recorded for real by ``mitmdump -w`` (reverse proxy in
front of the simulator, the openai SDK as client; this venv's mitmproxy, 11 or 12) imports
and replays to the openai SDK with the same text, one frame per event, head and end times from
mitmproxy's timestamps, losses listed; a file that is not a flow file is refused by name."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import openai
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.wire.sse import parse_events
from replayproxy.testing import Behavior, Simulator
from tests.cassette.import_helpers import MESSAGES, replayed_text

MITMDUMP = str(Path(sys.executable).parent / "mitmdump")


def rp(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def record_flows(tmp_path: Path, flows: Path) -> str:
    """Run mitmdump -w as a reverse proxy to the simulator; stream one chat; the text read."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    with Simulator() as sim:
        sim.behavior = Behavior(ttfb_s=0.2, gap_s=0.002)
        args = [
            MITMDUMP, "-w", str(flows), "--set", f"confdir={tmp_path / 'mitm'}",
            "--mode", f"reverse:{sim.url}", "--listen-host", "127.0.0.1", "--listen-port", "0",
        ]  # fmt: skip
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        try:
            assert proc.stdout is not None
            port, seen, deadline = None, [], time.monotonic() + 20
            while port is None and time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                seen.append(line)
                if m := re.search(r"listening at 127\.0\.0\.1:(\d+)", line):
                    port = int(m.group(1))
            assert port is not None, seen
            client = openai.OpenAI(
                base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-live", max_retries=0
            )
            stream = client.chat.completions.create(
                model="gpt-4.1-nano",
                messages=MESSAGES,
                stream=True,  # type: ignore[arg-type]
            )
            text = "".join(c.delta.content or "" for chunk in stream for c in chunk.choices)
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=15)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)
    return text


def test_a_recorded_flow_file_replays_to_the_openai_sdk(tmp_path: Path) -> None:
    """Same text; one frame per event; the head at mitmproxy's response start (the simulator's
    0.2 s time to first byte) and the last frame at its end; the key redacted; losses shown."""
    flows = tmp_path / "session.flows"
    original = record_flows(tmp_path, flows)
    assert original and flows.stat().st_size > 0
    code, output = rp("cassette", "import-flows", str(flows))
    assert code == 0, output
    out = tmp_path / "session.cassette"
    assert "1 interactions, 1 streams" in output
    assert replayed_text(out) == original
    x = store.load(out).interactions[0]
    assert x.response is not None
    assert len(x.frames) == len(parse_events(x.response.body)) > 100
    assert 0.15e9 < x.response.head_offset_ns < 10e9  # generous: a shared, noisy machine
    assert x.frames[-1].offset_ns >= x.response.head_offset_ns
    assert b"sk-live" not in out.read_bytes()
    code, shown = rp("cassette", "show", str(out))
    assert "interaction 0 lost: frame boundaries (one frame per event); per-event timing" in shown


def test_a_file_that_is_not_a_flow_file_is_named(tmp_path: Path) -> None:
    """One line naming the file; nothing written."""
    path = tmp_path / "x.flows"
    path.write_bytes(b"not a flow file at all")
    code, output = rp("cassette", "import-flows", str(path))
    assert code != 0 and f"{path}: not a mitmproxy flow file" in output
    assert not (tmp_path / "x.cassette").exists()
