"""Record a Realtime session through the real ``replayproxy record`` CLI, for replay tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from replayproxy.testing._realtime import RealtimeSimulator

ROOT = Path(__file__).resolve().parents[2]
REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")


def record_realtime(
    cassette: Path, confdir: Path, *, client: str = "tests.websocket.clients", **sim: Any
) -> list[tuple[float, Any]]:
    """Run ``replayproxy record --upstream SIM cassette -- python -m CLIENT`` against a fresh
    Realtime simulator; return what the client received (its JSON output)."""
    with RealtimeSimulator(**sim) as simulator:
        proc = subprocess.run(
            [REPLAYPROXY, "record", "--upstream", simulator.url, "--listen", "127.0.0.1:0",
             "--confdir", str(confdir), str(cassette), "--", sys.executable, "-m", client],
            capture_output=True, text=True, timeout=90, cwd=ROOT,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    return [(t, e) for t, e in json.loads(last)]
