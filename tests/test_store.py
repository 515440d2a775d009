"""Cassette files on disk (replayproxy._store): errors, torn tails, append/new/overwrite,
crashes."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import msgpack
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import (
    Cassette,
    Interaction,
)
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import (
    CassetteError,
    CassetteExistsError,
    CassetteFormatError,
    CassetteVersionError,
    CassetteWarning,
)
from replayproxy.testing import interaction


def _interaction(n: int) -> Interaction:
    """Interaction ``n``: three events 1 ms apart from 0, recorded at a known time."""
    return interaction(
        [f"data: {n}.{i}\n\n".encode() for i in range(3)],
        url=f"https://api.example.test/v1/{n}",
        body=b"{}",
        reason="OK",
        head_ms=0,
        at_ms=range(3),
        end_after_ms=3,
        recorded_at=1_700_000_000.0 + n,
    )


def _write(path: Path, n: int) -> list[int]:
    """Write a cassette of ``n`` interactions; return each record's end offset."""
    ends = []
    with store.CassetteWriter(path, "overwrite") as writer:
        for i in range(n):
            writer.append(_interaction(i))
            ends.append(path.stat().st_size)
    return ends


def _load_collecting(path: Path) -> tuple[Cassette, list[str]]:
    messages: list[str] = []
    return store.load(path, on_warning=messages.append), messages


# -- errors ---------------------------------------------------------------------------------


def test_corrupt_record_is_one_line_naming_file_and_offset(tmp_path: Path) -> None:
    """Garbage after valid records: one-line CassetteFormatError with the path and byte offset."""
    path = tmp_path / "c.cassette"
    ends = _write(path, 2)
    with path.open("ab") as f:
        f.write(b"\xc1\xc1\xc1 not msgpack")
    with pytest.raises(CassetteFormatError) as info:
        store.load(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path} at byte {ends[-1]}: ")
    assert info.value.offset == ends[-1] and info.value.path == str(path)


def test_not_a_cassette_and_empty_file(tmp_path: Path) -> None:
    """A foreign file or an empty one is refused at byte 0, naming the file."""
    foreign = tmp_path / "notes.txt"
    foreign.write_bytes(b"hello")
    empty = tmp_path / "empty.cassette"
    empty.write_bytes(b"")
    for path in (foreign, empty):
        with pytest.raises(CassetteFormatError, match=rf"^{path} at byte 0: "):
            store.load(path)


def test_unknown_version_is_one_line_naming_file_and_offset(tmp_path: Path) -> None:
    """A cassette from a future version: CassetteVersionError naming file, offset and version."""
    path = tmp_path / "future.cassette"
    path.write_bytes(msgpack.packb({"format": codec.FORMAT_NAME, "version": 99, "meta": {}}))
    with pytest.raises(CassetteVersionError) as info:
        store.load(path)
    assert str(info.value).startswith(f"{path} at byte 0: unknown cassette format version 99")
    assert "\n" not in str(info.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    """A missing file or a directory gives a CassetteError naming it."""
    with pytest.raises(CassetteError, match="no such cassette file"):
        store.load(tmp_path / "nope.cassette")
    with pytest.raises(CassetteError, match="is a directory"):
        store.load(tmp_path)


@pytest.mark.parametrize("kind", ["corrupt", "version"])
def test_cli_reports_bad_cassettes_in_one_line(tmp_path: Path, kind: str) -> None:
    """`record --append` onto a corrupt or future cassette: `error: PATH at byte N: ...`, exit 2."""
    path = tmp_path / "c.cassette"
    if kind == "corrupt":
        ends = _write(path, 1)
        path.write_bytes(path.read_bytes() + b"\xc1")
        expected = f"error: {path} at byte {ends[-1]}: damaged record"
    else:
        path.write_bytes(msgpack.packb({"format": codec.FORMAT_NAME, "version": 7, "meta": {}}))
        expected = f"error: {path} at byte 0: unknown cassette format version 7"
    before = path.read_bytes()
    conf = tmp_path / "conf"
    args = ["record", "--append", "--listen", "127.0.0.1:0", "--confdir", str(conf), str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.output.strip().startswith(expected)
    assert len(result.output.strip().splitlines()) == 1
    assert path.read_bytes() == before  # nothing was cut or appended


# -- torn tails (a recorder killed mid-write) ------------------------------------------------


def test_torn_tail_warns_once_with_offset_and_keeps_the_rest(tmp_path: Path) -> None:
    """A half-written last record: one warning line naming the offset; the rest loads."""
    path = tmp_path / "c.cassette"
    ends = _write(path, 3)
    data = path.read_bytes()
    path.write_bytes(data[: ends[1] + (ends[2] - ends[1]) // 2])
    cassette, messages = _load_collecting(path)
    assert [i.request.url for i in cassette.interactions] == [
        _interaction(0).request.url,
        _interaction(1).request.url,
    ]
    assert len(messages) == 1 and "\n" not in messages[0]
    assert messages[0].startswith(f"{path}: torn tail at byte {ends[1]} skipped")
    with pytest.warns(CassetteWarning, match=f"torn tail at byte {ends[1]}"):
        store.load(path)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_every_cut_loads_a_prefix(tmp_path: Path, data: st.DataObject) -> None:
    """Cutting the file anywhere after the header loads the records before the cut."""
    path = tmp_path / "cut.cassette"
    ends = _write(path, 3)
    header_end = len(codec.encode_header())
    whole = path.read_bytes()
    cut = data.draw(st.integers(header_end, len(whole)))
    path.write_bytes(whole[:cut])
    cassette, messages = _load_collecting(path)
    complete = sum(1 for end in ends if end <= cut)
    assert len(cassette.interactions) == complete
    assert cassette.interactions == tuple(_interaction(i) for i in range(complete))
    assert len(messages) == (0 if cut in (header_end, *ends) else 1)


def test_append_cuts_a_torn_tail_first(tmp_path: Path) -> None:
    """Appending to a torn cassette warns, cuts the torn bytes, and the result loads cleanly."""
    path = tmp_path / "c.cassette"
    ends = _write(path, 2)
    path.write_bytes(path.read_bytes()[: ends[1] - 3])
    messages: list[str] = []
    with store.CassetteWriter(path, "append", on_warning=messages.append) as writer:
        assert writer.count == 1
        writer.append(_interaction(7))
    assert len(messages) == 1 and f"torn tail at byte {ends[0]}" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cassette = store.load(path)
    assert cassette.interactions == (_interaction(0), _interaction(7))


# -- modes ----------------------------------------------------------------------------------


def test_new_refuses_an_existing_file(tmp_path: Path) -> None:
    """Mode `new` refuses an existing file (one line naming it) and leaves it untouched."""
    path = tmp_path / "c.cassette"
    _write(path, 1)
    before = path.read_bytes()
    with pytest.raises(CassetteExistsError) as info:
        store.CassetteWriter(path, "new")
    assert str(info.value).startswith(f"{path}: already exists")
    assert path.read_bytes() == before


def test_new_append_overwrite(tmp_path: Path) -> None:
    """`new` creates, `append` adds after what is there, `overwrite` starts over."""
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path, "new") as w:
        w.append(_interaction(0))
    with store.CassetteWriter(path, "append") as w:
        w.append(_interaction(1))
    assert store.load(path).interactions == (_interaction(0), _interaction(1))
    with store.CassetteWriter(path, "overwrite") as w:
        w.append(_interaction(2))
    assert store.load(path).interactions == (_interaction(2),)
    with store.CassetteWriter(tmp_path / "fresh.cassette", "append") as w:
        w.append(_interaction(3))
    assert store.load(tmp_path / "fresh.cassette").interactions == (_interaction(3),)


def test_write_modes_are_cassette_write_values(tmp_path: Path) -> None:
    """The writer takes a CassetteWrite as well as its value; anything else is refused."""
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path, CassetteWrite.NEW) as w:
        w.append(_interaction(0))
    with store.CassetteWriter(path, CassetteWrite.OVERWRITE) as w:
        w.append(_interaction(1))
    assert store.load(path).interactions == (_interaction(1),)
    with pytest.raises(ValueError, match="unknown write mode 'once'"):
        store.CassetteWriter(path, "once")  # a record mode is not a write mode
    assert store.load(path).interactions == (_interaction(1),)


def test_records_are_loadable_as_soon_as_appended(tmp_path: Path) -> None:
    """Each append is on disk before the writer is closed (what a killed recorder keeps)."""
    path = tmp_path / "c.cassette"
    writer = store.CassetteWriter(path, "new")
    try:
        for i in range(3):
            writer.append(_interaction(i))
            assert len(store.load(path).interactions) == i + 1
    finally:
        writer.close()


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    """Appends from several threads each land whole: every record loads, none is torn."""
    path = tmp_path / "c.cassette"
    with store.CassetteWriter(path, "new") as writer:
        threads = [
            threading.Thread(
                target=lambda k=k: [writer.append(_interaction(k * 10 + i)) for i in range(10)]
            )
            for k in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    cassette, messages = _load_collecting(path)
    assert messages == []
    assert sorted(i.request.url for i in cassette.interactions) == sorted(
        _interaction(n).request.url for n in range(40)
    )


def test_save_is_atomic_and_round_trips(tmp_path: Path) -> None:
    """`save` replaces the file whole and leaves no temporary files behind."""
    path = tmp_path / "c.cassette"
    _write(path, 2)
    cassette = Cassette((_interaction(5),), meta=(("source", "test"),))
    store.save(path, cassette)
    assert store.load(path) == cassette
    assert [p.name for p in tmp_path.iterdir()] == ["c.cassette"]
