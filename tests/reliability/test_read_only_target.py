"""A cassette that cannot be written fails before anything is forwarded (issue 28, item 4): the
upstream counts no connection, so no credentials leave, and the run fails with one line.

The target is a read-only tmpfs of the test's own (tests/reliability/mounts.py): permission
bits do not stop root, a read-only mount does. The ``upstream`` fixture (conftest.py) asserts
that the fake upstream got 0 connections.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy._cli._common import RECORDING_FAILED_EXIT_STATUS
from replayproxy._errors import ReplayProxyError
from replayproxy._harness.context import use_cassette
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import CountingUpstream

from .mounts import tmpfs

REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")
CURL_BASE = 'curl -s -o /dev/null -w "%{http_code}" -H "authorization: Bearer sk-real" '


def _env() -> dict[str, str]:
    drop = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    return {k: v for k, v in os.environ.items() if k.lower() not in drop}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REPLAYPROXY, *args], capture_output=True, text=True, env=_env(), timeout=60, check=False
    )


@pytest.fixture
def pool() -> Iterator[HostPool]:
    """A pool of our own, closed after the test (one embedded mitmproxy per process: the
    default pool would keep its proxy running for the CLI tests that follow)."""
    p = HostPool()
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "ro", read_only=True) as where:
        yield where


@pytest.mark.parametrize("forward", [False, True], ids=["reverse", "forward"])
def test_record_to_a_read_only_target_stops_before_serving(
    read_only: Path, upstream: CountingUpstream, forward: bool
) -> None:
    """``record`` (both modes) exits 2 with the one line before it listens: the command never
    runs, the upstream is never contacted."""
    cassette = read_only / "c.cassette"
    mode = [] if forward else ["--upstream", upstream.url]
    done = _run(
        "record", *mode, "--listen", "127.0.0.1:0", str(cassette),
        "--", "sh", "-c", CURL_BASE + upstream.url + "/v1/x",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"error: {cassette}: cannot open for writing (Read-only file system)\n"
    assert done.stdout == ""  # not even "listening on"
    assert not cassette.exists()


@pytest.mark.parametrize("forward", [False, True], ids=["base-url", "forward"])
def test_replay_record_mode_to_a_read_only_target_forwards_nothing(
    read_only: Path, upstream: CountingUpstream, forward: bool
) -> None:
    """``replay --record-mode once -- COMMAND``: the request the session would forward gets the
    explained 500 instead, exit status 3, and the line names the file and the reason."""
    cassette = read_only / "c.cassette"
    if forward:
        mode, target = [], upstream.url + "/v1/x"
    else:
        mode, target = ["--upstream", upstream.url], "$REPLAYPROXY_URL/v1/x"
    done = _run(
        "replay", "--record-mode", "once", *mode, "--listen", "127.0.0.1:0", str(cassette),
        "--", "sh", "-c", CURL_BASE + target,
    )  # fmt: skip
    assert done.returncode == RECORDING_FAILED_EXIT_STATUS, done.stderr
    assert done.stdout.splitlines()[-1].endswith("500"), done.stdout
    line = f"{cassette}: cannot open for writing (Read-only file system)"
    assert f"error: recording failed: {line}" in done.stderr.splitlines()
    assert not cassette.exists()


def test_use_cassette_raises_on_exit_and_forwards_nothing(
    read_only: Path, upstream: CountingUpstream, pool: HostPool
) -> None:
    """``use_cassette(record_mode="once")`` on a read-only target: the client gets the
    explained 500, and leaving the block raises the one line."""
    cassette = read_only / "c.cassette"
    statuses = []
    with (
        pytest.raises(ReplayProxyError) as caught,
        use_cassette(cassette, upstream=upstream.url, record_mode="once", pool=pool) as rp,
    ):
        r = httpx.post(rp.url + "/v1/x", json={}, headers={"authorization": "Bearer sk"})
        statuses.append(r.status_code)
    assert statuses == [500]
    assert str(caught.value) == (
        f"recording failed: {cassette}: cannot open for writing (Read-only file system)"
    )
