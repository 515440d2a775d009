"""The recorder on a failing disk, in-process and without root (tests/reliability has the real
full tmpfs): a write error is one line naming the file and the interaction, every later request
is refused instead of forwarded unrecorded, and the cassette keeps what was written.

The failure is injected where records reach the file (``replayproxy._store.writer._write_fd``),
behind a real mitmproxy, the simulator and httpx.
"""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._errors import ReplayProxyError
from replayproxy._harness.context import use_cassette
from replayproxy._harness.hosts import HostPool
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy._store import writer as writer_module
from replayproxy.testing import Simulator

from .helpers import load_quiet, wait_for_interactions

PATH = "/v1/chat/completions"


def _body(n: int) -> dict[str, object]:
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": str(n)}]}


def _disk_full_after(records: int) -> Callable[[int, memoryview], int]:
    """An ``os.write`` for cassettes: the header and ``records`` records go through, the next
    write puts half its bytes on disk and fails with ENOSPC, as a filling disk does."""
    calls = [0]

    def write(fd: int, data: memoryview) -> int:
        calls[0] += 1
        if calls[0] <= records + 1:
            return os.write(fd, data)
        if calls[0] == records + 2 and len(data) > 1:
            return os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write


@pytest.fixture
def pool() -> Iterator[HostPool]:
    """A pool of our own, closed after the test (one embedded mitmproxy per process: the
    default pool would keep its proxy running for the CLI tests that follow)."""
    p = HostPool()
    try:
        yield p
    finally:
        p.close()


def _until(done: Callable[[], object], timeout: float = 5.0) -> None:
    """Wait until ``done()`` is true: the recorder writes once mitmproxy's response hook ran,
    a moment after the client read the last byte."""
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_recorder_stops_and_refuses_after_a_failed_write(
    tmp_path: Path,
    confdir: Path,
    plain_sim: Simulator,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Reverse mode, two interactions written, the third fails: one error line for it, the
    fourth request gets a 503 and never reaches the simulator, and the file holds two clean
    interactions."""
    monkeypatch.setattr(writer_module, "_write_fd", _disk_full_after(2))
    cassette = tmp_path / "c.cassette"
    recorder = Recorder()
    opts = {"replayproxy_record": str(cassette), "connection_strategy": "lazy"}
    with (
        caplog.at_level(logging.ERROR, logger="replayproxy.record"),
        EmbeddedProxy(
            [recorder], mode=f"reverse:{plain_sim.url}", confdir=confdir, options=opts
        ) as proxy,
        httpx.Client(timeout=10) as client,
    ):
        for n in range(3):
            assert client.post(proxy.url + PATH, json=_body(n)).status_code == 200
            if n < 2:
                wait_for_interactions(cassette, n + 1)
        _until(lambda: recorder.failure is not None)
        refused = client.post(proxy.url + PATH, json=_body(3))
    assert refused.status_code == 503
    assert "not forwarded, recording stopped" in refused.text
    assert len(plain_sim.served) == 3
    line = (
        f"{cassette}: cannot write interaction #2 (POST {plain_sim.url}{PATH}) "
        "(No space left on device); recording stopped, the 2 interaction(s) before it are kept"
    )
    assert recorder.failure == line
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [line]
    assert recorder.count == 2
    assert len(load_quiet(cassette).interactions) == 2


def test_use_cassette_recording_into_a_full_disk_raises_on_exit(
    tmp_path: Path, plain_sim: Simulator, monkeypatch: pytest.MonkeyPatch, pool: HostPool
) -> None:
    """Record mode ``once`` through ``use_cassette()``: after the failed write the next request
    is not forwarded (explained 500), and leaving the block raises the line."""
    monkeypatch.setattr(writer_module, "_write_fd", _disk_full_after(1))
    cassette = tmp_path / "c.cassette"
    statuses = []
    with (
        pytest.raises(ReplayProxyError) as caught,
        use_cassette(cassette, upstream=plain_sim.url, record_mode="once", pool=pool) as rp,
    ):
        for n in range(3):
            statuses.append(httpx.post(rp.url + PATH, json=_body(n), timeout=10).status_code)
            _until(lambda n=n: rp.session.summary().new + len(rp.session.errors) > n)
    assert statuses == [200, 200, 500]
    assert len(plain_sim.served) == 2
    message = str(caught.value)
    assert message.startswith(f"recording failed: {cassette}: cannot write interaction #1 (POST ")
    assert "(No space left on device)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(store.load(cassette).interactions) == 1


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="permission bits do not stop root (see "
    "tests/reliability/test_read_only_target.py for a read-only mount)",
)
def test_record_cli_to_a_read_only_directory_without_root(tmp_path: Path) -> None:
    """Non-root: a directory without write permission; ``record`` exits 2 with the line."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "replayproxy"), "record", "--listen",
             "127.0.0.1:0", str(folder / "c.cassette")],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        folder.chmod(0o700)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {folder / 'c.cassette'}: cannot open for writing (Permission denied)\n"
    )
