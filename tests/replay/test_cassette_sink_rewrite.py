"""CassetteSink with ``replaces`` (record mode rewrite): the recording goes to a temporary file
beside the cassette and replaces it only when the sink closes; until then, and when nothing
was recorded, the old cassette stays as it was."""

from __future__ import annotations

from pathlib import Path

from replayproxy import _store as store
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._store.sink import CassetteSink
from replayproxy.testing import cassette, interaction

OLD = interaction([b"data: old\n\n"], url="https://api.openai.invalid/v1/old")
NEW = interaction([b"data: new\n\n"], url="https://api.openai.invalid/v1/new")


def _old_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "t.cassette"
    store.save(path, cassette(OLD))
    return path


def test_the_old_cassette_stays_until_close_then_is_replaced(tmp_path: Path) -> None:
    """While recording, the cassette still holds the old interaction and the new ones are in
    NAME.rewrite-tmp; close moves the temporary file over it (only the new one left)."""
    path = _old_cassette(tmp_path)
    sink = CassetteSink(path, CassetteWrite.OVERWRITE, replaces=True)
    sink.append(NEW)
    assert store.load(path).interactions == (OLD,)
    assert store.load(sink.temporary).interactions == (NEW,)
    sink.close()
    assert store.load(path).interactions == (NEW,)
    assert not sink.temporary.exists()


def test_nothing_recorded_keeps_the_old_cassette(tmp_path: Path) -> None:
    """A rewrite that records nothing (the test failed before its first request) leaves the
    cassette as it was and creates no temporary file."""
    path = _old_cassette(tmp_path)
    before = path.read_bytes()
    sink = CassetteSink(path, CassetteWrite.OVERWRITE, replaces=True)
    sink.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_rewrite_of_a_missing_cassette_creates_it(tmp_path: Path) -> None:
    """With no cassette yet, the closed sink leaves the new one at the path (directories made)."""
    path = tmp_path / "sub" / "t.cassette"
    sink = CassetteSink(path, CassetteWrite.OVERWRITE, replaces=True)
    sink.append(NEW)
    sink.close()
    assert store.load(path).interactions == (NEW,)
