"""The serving process's startup heap is kept out of the cyclic collector's full passes.

A full pass over the ~85,000 objects a replay process holds at startup stopped the event loop
for 25-90 ms, in every stream's gaps (engine/memory.py). The CLI freezes that heap once it
serves; the library's ``ReplayServer`` must not, since the process is its host's.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import httpx

from replayproxy import _store as store
from replayproxy._engine.server import ReplayServer
from replayproxy.testing import cassette, interaction

# The CLI as a user runs it, reporting its frozen-object count on exit.
CLI = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
    "from replayproxy._cli import main\n"
    "main()\n"
)


def _frozen(stderr: str) -> int:
    line = next(x for x in stderr.splitlines() if x.startswith("frozen "))
    return int(line.split()[1])


def test_replay_cli_freezes_its_startup_heap_before_serving(tmp_path: Path) -> None:
    """``replayproxy replay --upstream URL`` (the engine) has frozen its startup heap by the
    time it serves: the wrapped command's request is answered, and the count is not zero."""
    path = tmp_path / "chat.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"], gap_ms=5)))
    script = (
        "import os, httpx\n"
        "r = httpx.post(os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions',\n"
        '               content=b\'{"model":"m","stream":true}\')\n'
        "assert r.text == 'data: 1\\n\\n', r.text\n"
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", CLI, "replay", str(path), "--upstream", "https://api.openai.invalid",
         "--listen", "127.0.0.1:0", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _frozen(done.stderr) > 0, done.stderr


def test_freeze_startup_heap_exempts_what_is_alive_in_a_fresh_process() -> None:
    """freeze_startup_heap() returns the frozen count, which covers an object made before it
    (the cassette's frames are such objects) and not one made after."""
    code = (
        "import gc\n"
        "from replayproxy._engine.memory import freeze_startup_heap\n"
        "before = [object() for _ in range(3)], {'frames': [(1, b'x')]}\n"
        "n = freeze_startup_heap()\n"
        "after = {'late': [1]}\n"
        "print(n == gc.get_freeze_count(), n > 0, gc.is_tracked(before[1]),\n"
        "      any(o is before[1] for o in gc.get_objects()),\n"
        "      any(o is after for o in gc.get_objects()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    # Frozen objects leave the collector's generations (gc.get_objects() no longer lists them).
    assert done.stdout.split() == ["True", "True", "True", "False", "True"]


def test_replay_server_in_a_host_process_freezes_nothing() -> None:
    """Serving through ReplayServer (library use, e.g. inside a test run) leaves the host
    process's collector alone."""
    before = gc.get_freeze_count()
    with ReplayServer(cassette(interaction([b"data: 1\n\n"], gap_ms=5))) as server:
        r = httpx.post(server.url + "/v1/chat/completions", content=b'{"model":"m","stream":true}')
    assert r.text == "data: 1\n\n"
    assert gc.get_freeze_count() == before
