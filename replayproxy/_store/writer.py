"""Appending to a cassette while recording: :class:`CassetteWriter`, one record per write.

Each record goes out in a single ``os.write`` on an ``O_APPEND`` descriptor, so ``kill -9``
leaves at most the record being written torn, and the page cache keeps everything already
written (``fsync`` is for power loss, and is done on close). Writers hold an advisory lock
(``flock``) while they write a record or inspect the file before appending, so two recorders
appending to one cassette never mistake each other's record in flight for a torn tail.
Appending to a damaged cassette is refused and leaves the file untouched: only a torn tail is
ever cut off.

A failed write (disk full, I/O error, a file system gone read-only) is cut back to where its
record began, so the file keeps every interaction written before it and nothing torn, and
raises :class:`~replayproxy._errors.CassetteWriteError` naming the file and the interaction;
the writer then refuses every later append, so a recording never has a hole in the middle.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Interaction
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import CassetteError, CassetteExistsError, CassetteWriteError
from replayproxy._store.files import (
    WarningHandler,
    decode,
    default_warn,
    locked,
    named,
    read_bounded,
    torn_message,
)

__all__ = ["CassetteWriter"]

_write_fd = os.write
"""How records reach the file (a seam: tests put a failing writer here to simulate a full disk)."""


class CassetteWriter:
    """Append-only writer used while recording. Thread-safe; one record per ``os.write``.

    ``mode`` is the write mode (:class:`~replayproxy._core.replay.cassette_write.CassetteWrite`
    or its value): ``"new"`` (refuse an existing file), ``"append"`` (keep what is there; a
    torn tail is cut off first, with a warning, so new records do not land after garbage; a
    damaged or foreign file is refused and left untouched) or ``"overwrite"`` (start a fresh
    file).
    Appended records keep the existing file's format version, so a version 1 cassette stays
    one readable file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: CassetteWrite | str = CassetteWrite.NEW,
        *,
        meta: tuple[tuple[str, str], ...] = (),
        on_warning: WarningHandler | None = None,
    ) -> None:
        try:
            write = CassetteWrite(mode)
        except ValueError:
            raise ValueError(f"unknown write mode {mode!r}") from None
        self.path = Path(path)
        self.count = 0
        self.version = codec.FORMAT_VERSION
        self.failed: str | None = None
        """Why a write failed (``strerror``); ``None`` while every write succeeded."""
        self.failed_at = 0
        self._end = 0  # where our last record ended: the file is never shorter, unless cut
        self._last: tuple[int, bytes] = (0, b"")  # where our last record starts, its first bytes
        self._lock = threading.Lock()
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
        flags |= {
            CassetteWrite.NEW: os.O_EXCL,
            CassetteWrite.APPEND: 0,
            CassetteWrite.OVERWRITE: os.O_TRUNC,
        }[write]
        try:
            self._fd: int | None = os.open(self.path, flags, 0o600)
        except FileExistsError:
            raise CassetteExistsError(
                "already exists; pass --append to add to it or --overwrite to replace it",
                path=self.path,
            ) from None
        except IsADirectoryError:
            raise CassetteError("is a directory, not a cassette file", path=self.path) from None
        except OSError as e:
            raise CassetteError(f"cannot open for writing ({e.strerror})", path=self.path) from None
        try:
            with locked(self._fd):
                self._start(meta, on_warning or default_warn)
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def _start(self, meta: tuple[tuple[str, str], ...], warn: WarningHandler) -> None:
        """Under the lock: a header for an empty file, else check what is there (append)."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size == 0:
            header = codec.encode_header(meta)
            self._write(header)
            self._end = len(header)
            return
        data = read_bounded(self.path, self._fd, size)
        decoded = decode(self.path, data)  # refuses a damaged or foreign file, cuts nothing
        self.count = len(decoded.cassette.interactions)
        self.version = decoded.version
        if decoded.torn_at is not None:
            warn(torn_message(self.path, decoded) + "; cutting it off before appending")
            os.ftruncate(self._fd, decoded.torn_at)
        self._end = min(size, decoded.torn_at or size)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None, "writer is closed"
        view = memoryview(data)
        while view:  # os.write may write less than asked (signals, full disks)
            n = _write_fd(self._fd, view)
            view = view[n:]

    def append(self, interaction: Interaction) -> None:
        """Append one finished interaction; it is loadable as soon as this returns.

        An interaction that breaks the format's rules (docs/reference/cassette-format.md §7) is
        refused with a one-line :class:`CassetteFormatError`, and nothing is written. A write that
        fails is cut back off the file and raises :class:`CassetteWriteError`; so does every append
        after it (the recording has stopped: a later record must not follow a gap).
        """
        try:
            data = codec.encode_interaction(interaction, version=self.version)
        except CassetteError as e:
            raise named(self.path, e) from None
        with self._lock:
            if self.failed is not None:
                raise CassetteWriteError(
                    f"not recording {_described(self.count, interaction)}: recording stopped "
                    f"when interaction #{self.failed_at} could not be written ({self.failed})",
                    path=self.path,
                )
            assert self._fd is not None, "writer is closed"
            with locked(self._fd):
                start = os.fstat(self._fd).st_size  # O_APPEND: this record starts at the end
                if self._lost(start):
                    # Another writer truncated the file (two sessions replacing one cassette,
                    # record mode all): what we wrote is gone; say so rather than go on.
                    self.failed = f"another writer cut the file to {start} bytes"
                    self.failed_at = self.count
                    raise CassetteWriteError(
                        f"cannot write {_described(self.count, interaction)}: "
                        f"{self.failed}, losing interactions recorded here (two recorders "
                        "replacing one cassette?); recording stopped",
                        path=self.path,
                    )
                try:
                    self._write(data)
                except OSError as e:
                    raise self._failed(interaction, start, e) from None
                self._end, self._last = start + len(data), (start, data[:64])
            self.count += 1

    def _lost(self, size: int) -> bool:
        """Under the lock: whether our last record is no longer where we wrote it (its first
        bytes hold a v2 record's CRC, so another record there differs)."""
        at, head = self._last
        return size < self._end or (bool(head) and os.pread(self._fd or 0, len(head), at) != head)

    def _failed(self, interaction: Interaction, start: int, e: OSError) -> CassetteWriteError:
        """Under both locks: cut the partial record off and stop; the one-line error."""
        assert self._fd is not None
        self.failed = e.strerror or type(e).__name__
        self.failed_at = self.count
        kept = f"the {self.count} interaction(s) before it are kept"
        try:
            os.ftruncate(self._fd, start)
        except OSError as cut:
            kept += f" (the partial record could not be cut off: {cut.strerror}; it is skipped "
            kept += "as a torn tail when read)"
        return CassetteWriteError(
            f"cannot write {_described(self.count, interaction)} ({self.failed}); "
            f"recording stopped, {kept}",
            path=self.path,
        )

    def close(self) -> None:
        """Flush to disk (``fsync``) and close; a failing flush raises
        :class:`CassetteWriteError` (the file is closed either way)."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.fsync(fd)
        except OSError as e:
            raise CassetteWriteError(
                f"cannot flush the recording to disk ({e.strerror}); the last interactions "
                "may be lost if the machine goes down",
                path=self.path,
            ) from None
        finally:
            os.close(fd)

    def __enter__(self) -> CassetteWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _described(index: int, interaction: Interaction) -> str:
    """``interaction #N (METHOD URL)``, as ``cassette show`` numbers them (URL shortened)."""
    url = interaction.request.url
    url = url if len(url) <= 200 else url[:197] + "..."
    return f"interaction #{index} ({interaction.request.method} {url})"
