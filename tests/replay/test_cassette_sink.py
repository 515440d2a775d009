"""CassetteSink (store/sink.py): a record-mode session's cassette is opened on its first
new interaction, in the session's write mode, and never touched when nothing is recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import CassetteError
from replayproxy._store.sink import CassetteSink
from replayproxy.testing import cassette, interaction

ONE = interaction([b"data: 1\n\n"])
TWO = interaction([b"data: 2\n\n"], url="https://api.openai.invalid/v1/two")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_nothing_recorded_creates_nothing(tmp_path: Path) -> None:
    """A sink that never gets an interaction creates neither the file nor its directory, and
    closes without error."""
    path = tmp_path / "new" / "dir" / "t.cassette"
    sink = CassetteSink(path, CassetteWrite.OVERWRITE)
    sink.close()
    assert not (tmp_path / "new").exists()
    assert (sink.path, sink.write_mode, sink.count) == (path, CassetteWrite.OVERWRITE, 0)


def test_first_append_creates_the_directories_and_the_file(tmp_path: Path) -> None:
    """The first append creates the missing parents and the file; each append is loadable at
    once and counted."""
    path = tmp_path / "a" / "b" / "t.cassette"
    sink = CassetteSink(str(path), CassetteWrite.OVERWRITE)
    sink.append(ONE)
    assert sink.count == 1
    assert store.load(path).interactions == (ONE,)
    sink.append(TWO)
    assert sink.count == 2
    assert store.load(path).interactions == (ONE, TWO)
    sink.close()


@pytest.mark.parametrize(
    ("mode", "expected"), [(CassetteWrite.OVERWRITE, (TWO,)), (CassetteWrite.APPEND, (ONE, TWO))]
)
def test_write_mode_decides_what_happens_to_an_existing_cassette(
    tmp_path: Path, mode: CassetteWrite, expected: tuple[object, ...]
) -> None:
    """CREATE replaces the recorded interactions, APPEND adds after them; either way only once
    the first new interaction arrives."""
    path = tmp_path / "t.cassette"
    store.save(path, cassette(ONE))
    sink = CassetteSink(path, mode)
    assert store.load(path).interactions == (ONE,)  # untouched until something is recorded
    sink.append(TWO)
    sink.close()
    assert store.load(path).interactions == expected


def test_append_to_a_torn_cassette_warns_through_on_warning(tmp_path: Path) -> None:
    """The writer's warning (a torn tail cut off before appending) goes to ``on_warning``."""
    path = tmp_path / "t.cassette"
    store.save(path, cassette(ONE, ONE))
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])  # the second record's last bytes were never written
    warnings: list[str] = []
    sink = CassetteSink(path, CassetteWrite.APPEND, on_warning=warnings.append)
    sink.append(TWO)
    sink.close()
    assert len(warnings) == 1
    assert "torn tail" in warnings[0]
    assert store.load(path).interactions == (ONE, TWO)


def test_a_directory_that_cannot_be_created_is_one_cassette_error(tmp_path: Path) -> None:
    """A parent that is a file: CassetteError naming the directory, the reason and the path."""
    (tmp_path / "file").write_bytes(b"")
    path = tmp_path / "file" / "t.cassette"
    sink = CassetteSink(path, CassetteWrite.OVERWRITE)
    with pytest.raises(CassetteError) as info:
        sink.append(ONE)
    assert info.value.reason == f"cannot create directory {tmp_path / 'file'} (File exists)"
    assert info.value.path == str(path)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert sink.count == 0


def test_close_releases_the_file(tmp_path: Path) -> None:
    """close() closes the cassette's file descriptor (once: a second close does nothing)."""
    before = _open_fds()
    sink = CassetteSink(tmp_path / "t.cassette", CassetteWrite.OVERWRITE)
    sink.append(ONE)
    assert _open_fds() == before + 1
    sink.close()
    assert _open_fds() == before
    sink.close()
    assert _open_fds() == before
