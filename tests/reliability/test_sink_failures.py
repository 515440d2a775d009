"""The session's cassette sink (store/sink.py) before and after a failed write: the
target is checked without being changed, a cassette created meanwhile by another writer is
joined, and after a failed write nothing more is opened, written or (for ``rewrite``) moved."""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Interaction
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import CassetteError, CassetteWriteError
from replayproxy._store import writer as writer_module
from replayproxy._store.sink import CassetteSink
from replayproxy.testing import cassette, interaction, sse_frames


def _interaction(n: int) -> Interaction:
    return interaction(sse_frames(2), url=f"http://api.example.test/v1/{n}", body=b"{}")


def _full_disk(fd: int, data: memoryview) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _urls(path: Path) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return [i.request.url for i in store.load(path).interactions]


def test_open_checks_an_existing_cassette_without_changing_it(tmp_path: Path) -> None:
    """``all`` (overwrite): opening before the first forward leaves the old cassette as it
    was; only the first interaction replaces it."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(_interaction(0)))
    before = path.read_bytes()
    sink = CassetteSink(path, CassetteWrite.OVERWRITE)
    sink.open()
    assert path.read_bytes() == before
    sink.append(_interaction(1))
    sink.close()
    assert _urls(path) == ["http://api.example.test/v1/1"]


def test_open_on_a_missing_cassette_creates_nothing(tmp_path: Path) -> None:
    """A session that forwards but never records (the request failed before any hook) leaves
    no file behind; the parent directories it may need are made."""
    path = tmp_path / "new" / "c.cassette"
    sink = CassetteSink(path, CassetteWrite.NEW)
    sink.open()
    sink.close()
    assert list((tmp_path / "new").iterdir()) == []


def test_new_joins_a_cassette_another_writer_created(tmp_path: Path) -> None:
    """Write mode ``new`` (the session found no cassette) appends to one created since, and
    keeps the other writer's interactions."""
    path = tmp_path / "c.cassette"
    other = CassetteSink(path, CassetteWrite.NEW)
    other.append(_interaction(0))
    mine = CassetteSink(path, CassetteWrite.NEW)
    mine.append(_interaction(1))
    other.append(_interaction(2))
    mine.close()
    other.close()
    assert sorted(_urls(path)) == [f"http://api.example.test/v1/{n}" for n in range(3)]


def test_after_a_failed_write_open_refuses_and_reports_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failed append raises CassetteWriteError; from then on :meth:`open` (what runs
    before a request would be forwarded) refuses every time, reporting the line once."""
    path = tmp_path / "c.cassette"
    sink = CassetteSink(path, CassetteWrite.NEW)
    sink.append(_interaction(0))
    monkeypatch.setattr(writer_module, "_write_fd", _full_disk)
    with pytest.raises(CassetteWriteError, match=r"cannot write interaction #1 "):
        sink.append(_interaction(1))
    monkeypatch.undo()
    reported: list[str] = []
    for _ in range(2):
        with pytest.raises(CassetteWriteError) as refused:
            sink.open(reported.append)
    assert reported == [str(refused.value)]
    assert str(refused.value) == (
        f"{path}: recording stopped when interaction #1 could not be written (No space left on "
        "device); nothing more is recorded or forwarded"
    )
    sink.close()
    assert _urls(path) == ["http://api.example.test/v1/0"]


def test_a_failed_rewrite_keeps_the_old_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Record mode ``rewrite``: a write that fails means the temporary file is not moved over
    the cassette; the old one stays whole."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(_interaction(0)))
    sink = CassetteSink(path, CassetteWrite.OVERWRITE, replaces=True)
    sink.append(_interaction(1))
    monkeypatch.setattr(writer_module, "_write_fd", _full_disk)
    with pytest.raises(CassetteWriteError):
        sink.append(_interaction(2))
    monkeypatch.undo()
    sink.close()
    assert _urls(path) == ["http://api.example.test/v1/0"]


def test_open_names_a_directory_in_the_way(tmp_path: Path) -> None:
    """The cassette path is a directory: one line before anything is forwarded."""
    (tmp_path / "c.cassette").mkdir()
    with pytest.raises(CassetteError, match=r"is a directory, not a cassette file"):
        CassetteSink(tmp_path / "c.cassette", CassetteWrite.NEW).open()
