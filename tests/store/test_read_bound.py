"""Reading a cassette is bounded (store/files.py): a file that does not start like a cassette is
refused after its first 64 KiB, and nothing bigger than ``MAX_CASSETTE_BYTES`` is read, whether
the file has a size (a regular file) or not (``/dev/zero``, a pipe)."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._core.cassette import codec
from replayproxy._errors import CassetteError, CassetteFormatError
from replayproxy._store import files
from replayproxy.testing import cassette, interaction


def test_dev_zero_is_refused_after_its_first_bytes() -> None:
    """``/dev/zero`` (endless, no size) is one line at byte 0, read with a few KiB of memory
    held at most, not until memory runs out."""
    tracemalloc.start()
    try:
        with pytest.raises(CassetteFormatError) as caught:
            store.load("/dev/zero")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (
        "/dev/zero at byte 0: not a replayproxy cassette (no 'replayproxy-cassette' header)"
    )
    assert peak < 16 * 1024 * 1024  # was: all memory (1.45 GB in 4.5 s, issue 28)


@settings(max_examples=25, deadline=None)
@given(start=st.binary(max_size=300), fill=st.sampled_from([b"\0", b"\xff", b"a", b"\x91"]))
def test_any_big_foreign_file_is_refused_at_byte_0(start: bytes, fill: bytes) -> None:
    """A file of any first bytes that are not the header record, longer than the probe, is
    refused at byte 0, never a traceback."""
    if start.startswith(codec.encode_header()):
        return
    junk = start + fill * files.PROBE_BYTES
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cassette") as f:
        f.write(junk)
        f.flush()
        with pytest.raises(CassetteError, match=r"at byte 0: "):
            store.load(f.name)


def test_a_big_cassette_still_loads(tmp_path: Path) -> None:
    """A real cassette far bigger than the probe loads whole (the probe only reads ahead)."""
    path = tmp_path / "big.cassette"
    frames = [os.urandom(50_000) for _ in range(8)]
    store.save(path, cassette(interaction(frames)))
    assert path.stat().st_size > 4 * files.PROBE_BYTES
    (loaded,) = store.load(path).interactions
    assert loaded.response is not None
    assert loaded.response.body == b"".join(frames)


def test_a_file_over_the_maximum_is_refused_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file bigger than the maximum is refused before anything is read, naming the
    limit and where it is set."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction([b"x" * 5000])))
    monkeypatch.setattr(files, "MAX_CASSETTE_BYTES", 1000)
    with pytest.raises(CassetteError) as caught:
        store.load(path)
    assert str(caught.value) == (
        f"{path}: larger than 1000 bytes, the most a cassette may be "
        "(replayproxy._store.MAX_CASSETTE_BYTES); is this the right file?"
    )


def test_a_pipe_is_read_no_further_than_the_maximum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO has no size: a cassette header followed by endless bytes stops at the maximum."""
    monkeypatch.setattr(files, "MAX_CASSETTE_BYTES", 300_000)
    fifo = tmp_path / "c.cassette"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        try:
            with open(fifo, "wb") as f:
                f.write(codec.encode_header())
                while not stop.is_set():
                    f.write(b"\0" * 65536)
        except BrokenPipeError:
            pass  # the reader gave up: what the test wants

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        with pytest.raises(CassetteError, match="larger than 300000 bytes"):
            store.load(fifo)
    finally:
        stop.set()
        writer.join(5)
    assert not writer.is_alive()
