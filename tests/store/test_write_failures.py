"""A failed append (disk full, I/O error) is cut back off the file, named in one line, and ends
the recording: the cassette keeps exactly the interactions written before it (store/writer.py).

The failures are injected where records reach the file (``replayproxy._store.writer._write_fd``),
so every split of a record (nothing written, part of it, all but the last byte) is tried; the
real full disk is in tests/reliability/test_full_disk.py.
"""

from __future__ import annotations

import errno
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Interaction
from replayproxy._errors import CassetteWriteError
from replayproxy._store import writer as writer_module
from replayproxy.testing import interaction, sse_frames


def _interaction(n: int) -> Interaction:
    return interaction(sse_frames(3), url=f"http://api.example.test/v1/{n}", body=b"{}")


def _failing_after(budget: int, err: int = errno.ENOSPC) -> Callable[[int, memoryview], int]:
    """An ``os.write`` that writes ``budget`` more bytes in all, then fails with ``err``, as a
    disk does when it fills up part-way through a record."""
    left = [budget]

    def write(fd: int, data: memoryview) -> int:
        if left[0] <= 0:
            raise OSError(err, os.strerror(err))
        n = os.write(fd, data[: left[0]])
        left[0] -= n
        return n

    return write


def _load_clean(path: Path) -> list[Interaction]:
    """The cassette's interactions, failing on any warning (a torn tail would be one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return list(store.load(path).interactions)


def test_a_failed_append_names_the_file_and_the_interaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC on the third record: one line with the path, ``#2``, method and URL, the errno
    text and what was kept; the file holds the first two interactions and nothing more."""
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path) as w:
        w.append(_interaction(0))
        w.append(_interaction(1))
        good = path.stat().st_size
        monkeypatch.setattr(writer_module, "_write_fd", _failing_after(10))
        with pytest.raises(CassetteWriteError) as caught:
            w.append(_interaction(2))
    message = str(caught.value)
    assert message == (
        f"{path}: cannot write interaction #2 (POST http://api.example.test/v1/2) "
        "(No space left on device); recording stopped, the 2 interaction(s) before it are kept"
    )
    assert "\n" not in message
    assert path.stat().st_size == good
    assert [i.request.url for i in _load_clean(path)] == [
        "http://api.example.test/v1/0",
        "http://api.example.test/v1/1",
    ]


def test_every_append_after_a_failure_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Space comes back after the failure: the next append is still refused (a later record
    after a lost one would leave a hole in the recording), naming the one that failed."""
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path) as w:
        w.append(_interaction(0))
        monkeypatch.setattr(writer_module, "_write_fd", _failing_after(0, errno.EIO))
        with pytest.raises(CassetteWriteError, match=r"interaction #1 .*Input/output error"):
            w.append(_interaction(1))
        monkeypatch.setattr(writer_module, "_write_fd", os.write)  # the disk is fine again
        with pytest.raises(CassetteWriteError) as later:
            w.append(_interaction(2))
        assert w.count == 1
    assert str(later.value) == (
        f"{path}: not recording interaction #1 (POST http://api.example.test/v1/2): "
        "recording stopped when interaction #1 could not be written (Input/output error)"
    )
    assert [i.request.url for i in _load_clean(path)] == ["http://api.example.test/v1/0"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.floats(min_value=0.0, max_value=0.999))
def test_any_split_of_the_failed_record_leaves_the_file_as_it_was(
    tmp_path_factory: pytest.TempPathFactory, cut: float
) -> None:
    """Whatever part of a record reached the disk before the error, the file afterwards is
    byte for byte the file before it."""
    path = tmp_path_factory.mktemp("split") / "c.cassette"
    record = codec.encode_interaction(_interaction(1))
    with store.CassetteWriter(path) as w:
        w.append(_interaction(0))
        before = path.read_bytes()
        original = writer_module._write_fd
        writer_module._write_fd = _failing_after(int(cut * len(record)))
        try:
            with pytest.raises(CassetteWriteError):
                w.append(_interaction(1))
        finally:
            writer_module._write_fd = original
    assert path.read_bytes() == before


def test_a_failing_flush_on_close_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fsync`` failing at close (EIO) is a CassetteWriteError naming the file; the
    descriptor is closed anyway."""
    path = tmp_path / "c.cassette"
    w = store.CassetteWriter(path)
    w.append(_interaction(0))

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(CassetteWriteError, match=r"cannot flush the recording to disk"):
        w.close()
    monkeypatch.undo()
    w.close()  # closed already: nothing to do
    assert len(_load_clean(path)) == 1


def test_check_writable_refuses_a_directory_and_changes_nothing(tmp_path: Path) -> None:
    """``check_writable`` on a directory is the writer's one line; on an existing cassette
    it leaves the bytes as they were; on a new path it creates nothing."""
    with pytest.raises(Exception, match="is a directory, not a cassette file"):
        store.check_writable(tmp_path)
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path) as w:
        w.append(_interaction(0))
    before = path.read_bytes()
    store.check_writable(path)
    assert path.read_bytes() == before
    fresh = tmp_path / "new.cassette"
    store.check_writable(fresh)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.cassette"]


def test_a_writer_whose_file_another_writer_cut_stops_loudly(tmp_path: Path) -> None:
    """Two writers replacing one cassette (record mode ``all`` in two processes): the one whose
    records the other's truncation removed fails its next append, naming what happened,
    instead of going on with a cassette that silently lost them."""
    path = tmp_path / "c.cassette"
    first = store.CassetteWriter(path, "overwrite")
    first.append(_interaction(0))
    with store.CassetteWriter(path, "overwrite") as second:  # truncates: #0 is gone
        second.append(_interaction(1))
        with pytest.raises(CassetteWriteError) as caught:
            first.append(_interaction(2))
        second.append(_interaction(3))  # the writer that replaced it goes on
    first.close()
    assert "another writer cut the file" in str(caught.value)
    assert "two recorders replacing one cassette?" in str(caught.value)
    assert [i.request.url[-1] for i in _load_clean(path)] == ["1", "3"]
