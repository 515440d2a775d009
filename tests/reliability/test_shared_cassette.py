"""Two recorders of one shared cassette keep every interaction (issue 28: two pytest-xdist
workers recording one cassette kept 9 of 10, both tests passing).

A session that found no cassette (record mode ``once`` / ``new_episodes``) creates it with its
first interaction; if another writer created it meanwhile, it appends to that file under the
writers' lock instead of truncating it (store/sink.py). Here two real ``replay
--record-mode once -- COMMAND`` processes record into one path at the same time, their
requests interleaved.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy.testing import Simulator

REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")

CLIENT = """
import httpx, os, pathlib, sys, time
go = pathlib.Path(os.environ["GO"])
while not go.exists():
    time.sleep(0.02)
url = os.environ["REPLAYPROXY_URL"] + "/v1/chat/completions"
for n in range(5):
    body = {"model": "m", "stream": True, "messages": [{"content": sys.argv[1] + str(n)}]}
    assert httpx.post(url, json=body, timeout=30).status_code == 200
    time.sleep(0.15)
"""


def _env(go: Path) -> dict[str, str]:
    drop = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    env = {k: v for k, v in os.environ.items() if k.lower() not in drop}
    env["GO"] = str(go)
    return env


def _start(mode: str, upstream: str, cassette: Path, go: Path, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [REPLAYPROXY, "replay", "--record-mode", mode, "--upstream", upstream,
         "--listen", "127.0.0.1:0", str(cassette), "--", sys.executable, "-c", CLIENT, name],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(go),
    )  # fmt: skip


def _record_both(tmp_path: Path, mode: str) -> tuple[list[int], list[str], list[bytes]]:
    """Run the two recorders at once: their exit statuses, stderr, and the prompts kept."""
    cassette, go = tmp_path / "shared.cassette", tmp_path / "go"
    with Simulator() as sim:
        procs = [_start(mode, sim.url, cassette, go, name) for name in ("a", "b")]
        try:
            for proc in procs:  # both listening (their commands wait for `go`)
                assert proc.stdout is not None
                assert proc.stdout.readline().startswith("listening on ")
            time.sleep(0.1)
            go.touch()
            errs = [proc.communicate(timeout=120)[1] for proc in procs]
        finally:
            for proc in procs:  # a failed step above: leave nothing running
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
    prompts = sorted(
        i.request.body.split(b'"content":"')[1].split(b'"')[0]
        for i in store.load(cassette).interactions
    )
    return [proc.returncode for proc in procs], errs, prompts


EVERY = sorted(f"{name}{n}".encode() for name in "ab" for n in range(5))


@pytest.mark.parametrize("mode", ["once", "new_episodes"])
def test_two_recorders_of_one_missing_cassette_keep_every_interaction(
    tmp_path: Path, mode: str
) -> None:
    """Both processes exit 0 and the cassette holds all ten interactions, readable."""
    statuses, errs, prompts = _record_both(tmp_path, mode)
    assert statuses == [0, 0], errs
    assert prompts == EVERY


def test_two_recorders_replacing_one_cassette_never_lose_silently(tmp_path: Path) -> None:
    """Record mode ``all`` twice at once: each replaces the cassette, so one may cut the
    other's records off; then that one stops, saying so, and its run fails (3, or its
    command's own status: the requests after it get the explained 500). Either way, nothing
    is missing without a failed run."""
    store.save(tmp_path / "shared.cassette", store.load(_OLD))
    statuses, errs, prompts = _record_both(tmp_path, "all")
    if prompts != EVERY:
        assert any(status != 0 for status in statuses), (statuses, errs, prompts)
        assert any("another writer cut the file" in err for err in errs), errs
    else:
        assert statuses == [0, 0], errs


_OLD = Path(__file__).parents[2] / "cassettes" / "gemini-text.cassette"
