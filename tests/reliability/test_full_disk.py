"""Recording on a full disk never loses data silently (issue 28, item 3): the first failed write
is one line naming the file and the interaction, nothing after it is forwarded or recorded, the
run exits non-zero, and the cassette stays readable with every interaction completed before.

Real ``ENOSPC``: a 1 MiB tmpfs of the test's own (tests/reliability/mounts.py; skipped with the
reason where mounting is not permitted), the real ``replayproxy`` CLI as a process, the provider
simulator as the upstream and httpx as the client.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._cli._common import RECORDING_FAILED_EXIT_STATUS
from replayproxy.testing import Simulator

from .mounts import tmpfs

REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")
PATH = "/v1/chat/completions"


def _env() -> dict[str, str]:
    drop = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    return {k: v for k, v in os.environ.items() if k.lower() not in drop}


def _body(n: int) -> dict[str, object]:
    return {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": str(n)}]}


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    """``replayproxy ARGS --listen 127.0.0.1:0`` running, and the URL it listens on."""
    proc = subprocess.Popen(
        [REPLAYPROXY, *args, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        pytest.fail(f"did not start: {line!r} {proc.communicate()[1]!r}")
    return proc, line.split()[-1]


def _fill(disk: Path, leave: int) -> Path:
    """A file taking all but about ``leave`` bytes of ``disk`` (so the disk fills sooner)."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, free - leave))
    return filler


def _show(path: Path) -> list[dict[str, object]]:
    """``cassette show --json``: must succeed with nothing on stderr (no damage, no torn tail)."""
    done = subprocess.run(
        [REPLAYPROXY, "cassette", "show", "--json", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    shown = json.loads(done.stdout)
    return list(shown["interactions"] if isinstance(shown, dict) else shown)


def test_record_stops_at_the_first_failed_write_and_exits_3(tmp_path: Path) -> None:
    """``record`` on a disk that fills up: the error line names the file and ``#N``, the next
    request is refused with a 503 and never reaches the upstream (even once space is free
    again), exit status 3, and ``cassette show`` lists exactly the N completed interactions."""
    with tmpfs(tmp_path / "disk") as disk, Simulator() as sim:
        cassette = disk / "c.cassette"
        filler = _fill(disk, leave=350_000)  # room for about three ~100 KB interactions
        proc, url = _start("record", "--upstream", sim.url, str(cassette))
        statuses: list[int] = []
        try:
            with httpx.Client(timeout=30) as client:
                for n in range(20):
                    statuses.append(client.post(url + PATH, json=_body(n)).status_code)
                    if statuses[-1] != 200:
                        break
                    time.sleep(0.3)  # the recorder writes once the response ended
                reached = len(sim.served)
                filler.unlink()  # space again: the recording stays stopped
                refused = client.post(url + PATH, json=_body(99))
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:  # a failed step above: leave nothing running
                proc.kill()
                proc.communicate()
        assert statuses[-1] == 503, statuses
        assert refused.status_code == 503
        assert "not forwarded, recording stopped" in refused.text
        assert len(sim.served) == reached == statuses.count(200)
        kept = statuses.count(200) - 1  # the last 200 is the one that could not be written
        assert kept >= 1
        assert proc.returncode == RECORDING_FAILED_EXIT_STATUS, err
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert errors[0] == (
            f"error: {cassette}: cannot write interaction #{kept} (POST {sim.url}{PATH}) "
            f"(No space left on device); recording stopped, the {kept} interaction(s) before "
            "it are kept"
        ), err
        assert errors[-1].startswith("error: recording failed: ")
        assert len(_show(cassette)) == kept
        assert len(store.load(cassette).interactions) == kept


def test_replay_record_mode_with_a_command_on_a_full_disk(tmp_path: Path) -> None:
    """``replay --record-mode once -- COMMAND`` whose command passes: exit status 3, and the
    cassette keeps every interaction written before the failure, readable."""
    client = (
        "import httpx, os, time\n"
        "url = os.environ['REPLAYPROXY_URL'] + '/v1/chat/completions'\n"
        "for n in range(20):\n"
        "    body = {'model': 'm', 'stream': True, 'messages': [{'content': str(n)}]}\n"
        "    r = httpx.post(url, json=body, timeout=30)\n"
        "    print(r.status_code, flush=True)\n"
        "    time.sleep(0.3)\n"
    )
    with tmpfs(tmp_path / "disk") as disk, Simulator() as sim:
        cassette = disk / "c.cassette"
        _fill(disk, leave=350_000)
        done = subprocess.run(
            [REPLAYPROXY, "replay", "--record-mode", "once", "--upstream", sim.url,
             "--listen", "127.0.0.1:0", str(cassette), "--", sys.executable, "-c", client],
            capture_output=True, text=True, env=_env(), timeout=120, check=False,
        )  # fmt: skip
        codes = [int(line.split()[-1]) for line in done.stdout.splitlines()[1:]]
        assert done.returncode == RECORDING_FAILED_EXIT_STATUS, done.stderr
        assert 500 in codes, codes
        kept = codes.index(500) - 1
        assert "No space left on device" in done.stderr
        assert f"cannot write interaction #{kept} " in done.stderr
        assert len(sim.served) == codes.index(500)  # nothing forwarded after the failure
        assert len(_show(cassette)) == kept
