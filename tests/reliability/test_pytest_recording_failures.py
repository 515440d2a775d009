"""Through the pytest plugin, a test whose recording fails fails with the line naming the file
(issue 28: a full disk used to leave the test passing while 13 of 20 interactions were lost).

Inner projects from tests/pytest_plugin/project.py, run by pytester in a subprocess; the
targets are tmpfs mounts of the test's own (tests/reliability/mounts.py).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import HEADER, run

from .mounts import tmpfs


@pytest.fixture(autouse=True)
def _restore_environ() -> Iterator[None]:
    """``project.run`` sets the inner run's settings in os.environ: put it back afterwards."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_a_read_only_cassette_dir_fails_the_test_and_sends_nothing(
    pytester: pytest.Pytester, tmp_path: Path, upstream: CountingUpstream
) -> None:
    """Record mode ``once`` into a read-only directory: the inner test fails with "recording
    failed: PATH: cannot create directory ... (Read-only file system)"; the upstream (the
    ``upstream`` fixture) is never contacted."""
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        pytester.makepyfile(
            test_example=HEADER
            + textwrap.dedent("""
            def test_one(replayproxy):
                chat(replayproxy, "one")
            """)
        )
        result = run(
            pytester, "--replayproxy-record-mode=once", f"--replayproxy-cassette-dir={ro}",
            upstream=upstream.url,
        )  # fmt: skip
    result.assert_outcomes(failed=1)
    cassette, folder = ro / "test_example" / "test_one.cassette", ro / "test_example"
    result.stdout.fnmatch_lines([
        f"replayproxy: recording failed: {cassette}: cannot create directory {folder} "
        "(Read-only file system)"
    ])  # fmt: skip


def test_a_full_disk_fails_the_test_and_keeps_what_was_written(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Twenty chats into a disk with room for a few: the test fails naming the interaction
    that could not be written, and the cassette holds the ones before it, readable."""
    with tmpfs(tmp_path / "disk") as disk, Simulator() as sim:
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        (disk / "filler").write_bytes(b"\0" * (free - 350_000))
        pytester.makepyfile(
            test_example=HEADER
            + textwrap.dedent("""
            import time

            def test_many(replayproxy):
                for n in range(20):
                    chat(replayproxy, str(n))
                    time.sleep(0.2)
            """)
        )
        result = run(
            pytester, "--replayproxy-record-mode=once", f"--replayproxy-cassette-dir={disk}",
            upstream=sim.url,
        )  # fmt: skip
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            ["*replayproxy: recording failed: *cannot write interaction #* (No space left on*"]
        )
        (cassette,) = disk.rglob("*.cassette")
        kept = store.load(cassette).interactions
        assert 1 <= len(kept) < 20
        assert len(sim.served) == len(kept) + 1  # the one that could not be written; no more
