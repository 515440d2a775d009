"""An edited cassette replays with the edit visible to a real client (httpx via replayproxy)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.wire.events import event_spans

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "cassettes" / "openai-chat-text.cassette"
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]

# Streams the recorded request through the replay proxy; writes the raw body it received and
# how the stream ended ("ok" or the exception's class name).
CLIENT = """
import os, sys, httpx
body, path, out = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3]
got, how = bytearray(), "ok"
try:
    with httpx.stream("POST", os.environ["REPLAYPROXY_URL"] + path, content=body,
                      headers={"content-type": "application/json"}, timeout=30) as r:
        for chunk in r.iter_raw():
            got += chunk
except Exception as e:
    how = type(e).__name__
open(out, "wb").write(bytes(got))
open(out + ".how", "w").write(how)
"""

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="example cassette not present")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run(
        [*REPLAYPROXY, *args], capture_output=True, text=True, timeout=90, env=env
    )


def replay_and_fetch(cassette: Path, tmp_path: Path) -> tuple[bytes, str]:
    """Replay ``cassette`` at --speed 0 in base-URL mode and fetch its first request with httpx."""
    x = store.load(cassette).interactions[0]
    (tmp_path / "req.json").write_bytes(x.request.body)
    out = tmp_path / "got.bin"
    done = run(
        "replay", str(cassette), "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0",
        "--speed", "0", "--", sys.executable, "-c", CLIENT,
        str(tmp_path / "req.json"), x.request.path, str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out.read_bytes(), Path(str(out) + ".how").read_text()


def test_dropped_event_is_missing_for_the_client(tmp_path: Path) -> None:
    """Dropping event 2 with `cassette edit` removes exactly its bytes from what httpx receives."""
    edited = tmp_path / "edited.cassette"
    done = run("cassette", "edit", str(EXAMPLE), "-o", str(edited), "--drop-event", "2")
    assert done.returncode == 0, done.stderr
    resp = store.load(EXAMPLE).interactions[0].response
    assert resp is not None
    spans = event_spans(resp.body, resp.header("content-type"))
    expected = resp.body[: spans[2].start] + resp.body[spans[2].end :]
    got, how = replay_and_fetch(edited, tmp_path)
    assert how == "ok"
    assert got == expected
    assert got != resp.body


def test_truncated_and_reset_stream_fails_the_client(tmp_path: Path) -> None:
    """--truncate events=3 --end reset: httpx gets the first 3 events, then a connection error."""
    edited = tmp_path / "edited.cassette"
    done = run(
        "cassette", "edit", str(EXAMPLE), "-o", str(edited), "--truncate", "events=3",
        "--end", "reset",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    resp = store.load(EXAMPLE).interactions[0].response
    assert resp is not None
    spans = event_spans(resp.body, resp.header("content-type"))
    got, how = replay_and_fetch(edited, tmp_path)
    assert got == resp.body[: spans[2].end]
    assert how in ("RemoteProtocolError", "ReadError")
