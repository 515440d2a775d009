"""`--append` never destroys data: damage is refused untouched, torn tails are the only cut,
concurrent and killed writers lose nothing, and `cassette repair` keeps every intact record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._errors import CassetteFormatError
from replayproxy.testing import interaction


def _interaction(n: int, size: int = 3) -> Interaction:
    """Interaction ``n``: ``size`` events 1 ms apart from 0, the head at 0."""
    return interaction(
        [f"data: {n}.{i}\n\n".encode() for i in range(size)],
        url=f"https://api.example.test/v1/{n}",
        body=b"{}",
        reason="OK",
        head_ms=0,
        at_ms=range(size),
    )


def _file(path: Path, n: int, version: int = codec.FORMAT_VERSION) -> list[int]:
    """A cassette of ``n`` interactions in ``version``; returns each record's start offset."""
    head = codec.encode_header(version=version)
    records = [codec.encode_interaction(_interaction(i), version=version) for i in range(n)]
    starts, at = [], len(head)
    for r in records:
        starts.append(at)
        at += len(r)
    path.write_bytes(head + b"".join(records))
    return starts


def _flip(path: Path, at: int, mask: int = 0x10) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= mask
    path.write_bytes(bytes(data))


def _record_append(path: Path, tmp_path: Path) -> tuple[int, str]:
    conf = tmp_path / "conf"
    args = ["record", "--append", "--listen", "127.0.0.1:0", "--confdir", str(conf), str(path)]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


# -- damage in the middle ------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_flipped_length_in_the_middle_is_damage_not_a_torn_tail(
    tmp_path: Path, version: int
) -> None:
    """Issue 9's case: a flipped bit in interaction 2 of 5 makes it look cut short; it is
    reported as damage (in v1 too), and `record --append` refuses, touching nothing."""
    path = tmp_path / "c.cassette"
    starts = _file(path, 5, version)
    # The first frame's bin length: bigger, so the record seems to run past the file's end.
    data = path.read_bytes()
    body = b"data: 2.0\n\n"
    at = data.index(body, starts[2]) - 1
    assert data[at] == len(body) and data[at - 1] == 0xC4  # bin8 length byte
    damaged = bytearray(data)
    damaged[at - 1] = 0xC6  # bin32: the length now reads as ~190 MB
    path.write_bytes(bytes(damaged))
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError, match=rf"at byte {starts[2]}: damaged record"):
        store.load(path)
    code, output = _record_append(path, tmp_path)
    assert code == 2, output
    assert output.startswith(f"error: {path} at byte {starts[2]}: damaged record")
    assert len(output.strip().splitlines()) == 1
    assert path.read_bytes() == before
    assert not (tmp_path / "conf").exists()


def test_flipped_body_bit_is_refused_by_append(tmp_path: Path) -> None:
    """A flipped bit in a frame body (v2): the writer refuses to append and cuts nothing."""
    path = tmp_path / "c.cassette"
    starts = _file(path, 5)
    _flip(path, path.read_bytes().index(b"data: 2.1"))
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError, match=rf"at byte {starts[2]}: .*CRC-32"):
        store.CassetteWriter(path, "append")
    assert path.read_bytes() == before


def test_damaged_last_record_is_not_cut_as_a_torn_tail(tmp_path: Path) -> None:
    """A complete last record with a bad CRC is damage: append refuses instead of cutting it."""
    path = tmp_path / "c.cassette"
    _file(path, 3)
    _flip(path, len(path.read_bytes()) - 20)
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError, match="damaged record"):
        store.CassetteWriter(path, "append")
    assert path.read_bytes() == before


@pytest.mark.parametrize("version", [1, 2])
def test_a_cut_record_followed_by_an_intact_one_is_damage(tmp_path: Path, version: int) -> None:
    """A big record whose write was cut short, then another writer's small record after it:
    the short one looks like it runs past the end, but cutting it would delete the intact one;
    it is damage, append refuses, and repair keeps the intact record."""
    path = tmp_path / "c.cassette"
    head = codec.encode_header(version=version)
    first = codec.encode_interaction(_interaction(0), version=version)
    big = codec.encode_interaction(_interaction(1, size=200), version=version)
    small = codec.encode_interaction(_interaction(2), version=version)
    assert len(small) < len(big) - 100
    path.write_bytes(head + first + big[:100] + small)
    before = path.read_bytes()
    at = len(head) + len(first)
    with pytest.raises(CassetteFormatError, match=rf"at byte {at}: damaged record"):
        store.CassetteWriter(path, "append")
    assert path.read_bytes() == before
    assert store.repair(path).kept == 2
    assert store.load(path).interactions == (_interaction(0), _interaction(2))


@pytest.mark.parametrize("version", [1, 2])
def test_torn_tail_is_still_cut_and_appended_after(tmp_path: Path, version: int) -> None:
    """A last record cut short (a killed recorder) is cut off, and appends keep the version."""
    path = tmp_path / "c.cassette"
    starts = _file(path, 3, version)
    path.write_bytes(path.read_bytes()[: starts[2] + 25])
    warnings: list[str] = []
    with store.CassetteWriter(path, "append", on_warning=warnings.append) as w:
        assert w.version == version
        w.append(_interaction(9))
    assert len(warnings) == 1 and f"torn tail at byte {starts[2]}" in warnings[0]
    decoded = codec.decode(path.read_bytes())
    assert decoded.version == version and decoded.torn_at is None
    assert decoded.cassette.interactions == (_interaction(0), _interaction(1), _interaction(9))


# -- repair ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_repair_keeps_every_intact_record_and_a_backup(tmp_path: Path, version: int) -> None:
    """`cassette repair` drops only the damaged record, keeps the original as .bak, and the
    repaired cassette (current version) takes appends again."""
    path = tmp_path / "c.cassette"
    starts = _file(path, 5, version)
    _flip(path, starts[2] + 2, 0x01)  # the record's first bytes
    original = path.read_bytes()
    result = CliRunner().invoke(cli, ["cassette", "repair", "--dry-run", str(path)])
    assert result.exit_code == 1 and "4 intact interaction(s) kept" in result.output
    assert path.read_bytes() == original and not path.with_name("c.cassette.bak").exists()
    result = CliRunner().invoke(cli, ["cassette", "repair", str(path)])
    assert result.exit_code == 0, result.output
    assert f"bytes {starts[2]}-{starts[3]}" in result.output
    assert path.with_name("c.cassette.bak").read_bytes() == original
    assert [x.request.url for x in store.load(path).interactions] == [
        _interaction(i).request.url for i in (0, 1, 3, 4)
    ]
    assert codec.decode(path.read_bytes()).version == codec.FORMAT_VERSION
    with store.CassetteWriter(path, "append") as w:
        w.append(_interaction(5))
    assert len(store.load(path).interactions) == 5
    again = CliRunner().invoke(cli, ["cassette", "repair", str(path)])
    assert again.exit_code == 0 and "nothing to repair" in again.output
    assert not path.with_name("c.cassette.bak.1").exists()


def test_repair_to_output_leaves_the_original_untouched(tmp_path: Path) -> None:
    """`repair -o FILE` writes the salvage there; the damaged file stays as it was."""
    path, out = tmp_path / "c.cassette", tmp_path / "fixed.cassette"
    starts = _file(path, 3)
    path.write_bytes(
        path.read_bytes()[: starts[1] + 5] + b"\xff" + path.read_bytes()[starts[1] + 6 :]
    )
    original = path.read_bytes()
    result = CliRunner().invoke(cli, ["cassette", "repair", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == original
    assert store.load(out).interactions == (_interaction(0), _interaction(2))
    assert not list(tmp_path.glob("*.bak*"))


def test_repair_of_an_unreadable_header_is_one_line(tmp_path: Path) -> None:
    """Without a header nothing says how to read the rest: one line, exit 2, nothing written."""
    path = tmp_path / "c.cassette"
    _file(path, 2)
    path.write_bytes(b"\x00" + path.read_bytes()[1:])
    result = CliRunner().invoke(cli, ["cassette", "repair", str(path)])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {path} at byte 0: not a replayproxy cassette")
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.cassette"]


# -- concurrent and killed writers (real processes) ----------------------------------------

_WRITER = """
import sys
from replayproxy import _store as store
from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy.testing import interaction
path, first, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with store.CassetteWriter(path, "append") as w:
    print("ready", flush=True)
    sys.stdin.readline()  # "go": both writers start at once
    for n in range(first, first + count):
        frames = tuple(Frame(i, bytes([65 + i % 26]) * size) for i in range(20))
        w.append(Interaction(
            Request("POST", f"https://api.example.test/v1/{n}", body=b"{}"),
            Response(200, "OK", frames=frames),
            Ending(EndKind.COMPLETE, 20),
        ))
"""


def _writer(path: Path, first: int, count: int, size: int = 10) -> subprocess.Popen[str]:
    """A process appending ``count`` interactions of 20 frames of ``size`` bytes each."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(first), str(count), str(size)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_recorders_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    """Two processes appending to one cassette at once: every record of both loads, intact."""
    path = tmp_path / "c.cassette"
    _file(path, 1)
    procs = [_writer(path, 1000, 400), _writer(path, 2000, 400)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.wait(60) == 0
    decoded = codec.decode(path.read_bytes())
    assert decoded.torn_at is None
    urls = sorted(x.request.url for x in decoded.cassette.interactions)
    numbers = (0, *range(1000, 1400), *range(2000, 2400))
    expected = [f"https://api.example.test/v1/{i}" for i in numbers]
    assert urls == sorted(expected)


def test_kill_9_while_appending_then_append_again_loses_nothing(tmp_path: Path) -> None:
    """kill -9 at random moments while big records are written: what was written loads (at most
    a torn tail), the next append cuts only the torn tail, and nothing intact is ever lost."""
    path = tmp_path / "c.cassette"
    _file(path, 1)
    kept = 1
    for trial in range(8):
        proc = _writer(path, 100 * (trial + 1), 40, size=20_000)  # 400 KB per record
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(0.01 * (trial % 4))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        decoded = codec.decode(path.read_bytes())  # never damage, only maybe a torn tail
        assert len(decoded.cassette.interactions) >= kept
        kept = len(decoded.cassette.interactions)
        with store.CassetteWriter(path, "append", on_warning=lambda m: None) as w:
            w.append(_interaction(9000 + trial))
        kept += 1
    final = codec.decode(path.read_bytes())
    assert final.torn_at is None and len(final.cassette.interactions) == kept
    assert [x.request.url for x in final.cassette.interactions[:1]] == [_interaction(0).request.url]


def test_new_mode_refuses_a_file_created_meanwhile(tmp_path: Path) -> None:
    """`new` creates exclusively: a file that appeared after the check is not truncated."""
    path = tmp_path / "c.cassette"
    _file(path, 2)
    before = path.read_bytes()
    with pytest.raises(Exception, match="already exists"):
        store.CassetteWriter(path, "new")
    assert path.read_bytes() == before


def test_cassette_files_are_private(tmp_path: Path) -> None:
    """Recorded, saved and repaired cassettes are created mode 0600 (they hold prompts)."""
    recorded, saved = tmp_path / "r.cassette", tmp_path / "s.cassette"
    with store.CassetteWriter(recorded, "new") as w:
        w.append(_interaction(0))
    store.save(saved, Cassette((_interaction(1),)))
    for p in (recorded, saved):
        assert p.stat().st_mode & 0o777 == 0o600
