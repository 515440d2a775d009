"""Cassette files on disk: the only module that reads or writes them.

- :func:`load` reads a whole cassette, turning codec errors into one-line errors that name the
  file, and reporting a torn tail (left by a killed recorder) as a warning, not an error.
- :func:`save` writes a whole cassette atomically (temp file + rename), for edits and imports.
- :class:`CassetteWriter` appends one interaction at a time for the recorder. Each record goes
  out in a single ``os.write`` on an ``O_APPEND`` descriptor, so ``kill -9`` leaves at most the
  record being written torn, and the page cache keeps everything already written (``fsync`` is
  for power loss, and is done on close). Writers hold an advisory lock (``flock``) while they
  write a record or inspect the file before appending, so two recorders appending to one
  cassette never mistake each other's record in flight for a torn tail. Appending to a damaged
  cassette is refused and leaves the file untouched: only a torn tail is ever cut off.
- :func:`repair` salvages the intact records of a damaged cassette into a fresh file, keeping
  the original as a backup.

Every file written here is created mode 0600: cassettes hold prompts and answers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from replayproxy.core.cassette import codec
from replayproxy.core.cassette.model import Cassette, Interaction
from replayproxy.core.replay.cassette_write import CassetteWrite
from replayproxy.errors import CassetteError, CassetteExistsError, CassetteWarning

try:  # POSIX; elsewhere appends are not locked (one recorder per cassette)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["CassetteWriter", "Repair", "load", "repair", "save"]

WarningHandler = Callable[[str], None]


def _default_warn(message: str) -> None:
    warnings.warn(message, CassetteWarning, stacklevel=3)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CassetteError("no such cassette file", path=path) from None
    except IsADirectoryError:
        raise CassetteError("is a directory, not a cassette file", path=path) from None
    except OSError as e:
        raise CassetteError(f"cannot read ({e.strerror})", path=path) from None


def _named(path: Path, e: CassetteError) -> CassetteError:
    return e if e.path is not None else e.with_path(path)


def _decode(path: Path, data: bytes | None = None) -> codec.Decoded:
    try:
        return codec.decode(_read(path) if data is None else data)
    except CassetteError as e:
        raise _named(path, e) from None


@contextlib.contextmanager
def _locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock on the open file ``fd`` (released by the kernel if we die)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _torn_message(path: Path, decoded: codec.Decoded) -> str:
    n = len(decoded.cassette.interactions)
    return (
        f"{path}: torn tail at byte {decoded.torn_at} skipped "
        f"(an interaction was being written when the recorder stopped); {n} interaction(s) loaded"
    )


def load(path: str | os.PathLike[str], *, on_warning: WarningHandler | None = None) -> Cassette:
    """Load a cassette. A torn tail is skipped and reported through ``on_warning``.

    Without ``on_warning``, the report is a :class:`CassetteWarning` (Python ``warnings``).
    """
    p = Path(path)
    decoded = _decode(p)
    if decoded.torn_at is not None:
        (on_warning or _default_warn)(_torn_message(p, decoded))
    return decoded.cassette


def save(path: str | os.PathLike[str], cassette: Cassette) -> None:
    """Write a whole cassette atomically: readers see the old file or the new one, never half."""
    p = Path(path)
    try:
        data = codec.encode(cassette)
    except CassetteError as e:
        raise _named(p, e) from None
    _write_atomically(p, data)


def _write_atomically(p: Path, data: bytes) -> None:
    directory = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise CassetteError(f"cannot write ({e.strerror})", path=p) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise CassetteError(f"cannot write ({e.strerror})", path=p) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class CassetteWriter:
    """Append-only writer used while recording. Thread-safe; one record per ``os.write``.

    ``mode`` is the write mode (:class:`~replayproxy.core.replay.cassette_write.CassetteWrite`
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
            with _locked(self._fd):
                self._start(meta, on_warning or _default_warn)
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def _start(self, meta: tuple[tuple[str, str], ...], warn: WarningHandler) -> None:
        """Under the lock: a header for an empty file, else check what is there (append)."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size == 0:
            self._write(codec.encode_header(meta))
            return
        data = os.pread(self._fd, size, 0)
        decoded = _decode(self.path, data)  # refuses a damaged or foreign file, cuts nothing
        self.count = len(decoded.cassette.interactions)
        self.version = decoded.version
        if decoded.torn_at is not None:
            warn(_torn_message(self.path, decoded) + "; cutting it off before appending")
            os.ftruncate(self._fd, decoded.torn_at)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None, "writer is closed"
        view = memoryview(data)
        while view:  # os.write may write less than asked (signals, full disks)
            n = os.write(self._fd, view)
            view = view[n:]

    def append(self, interaction: Interaction) -> None:
        """Append one finished interaction; it is loadable as soon as this returns.

        An interaction that breaks the format's rules (docs/cassette-format.md §7) is refused
        with a one-line :class:`CassetteFormatError`, and nothing is written.
        """
        try:
            data = codec.encode_interaction(interaction, version=self.version)
        except CassetteError as e:
            raise _named(self.path, e) from None
        with self._lock:
            assert self._fd is not None, "writer is closed"
            with _locked(self._fd):
                self._write(data)
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> CassetteWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- repair ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Repair:
    """What :func:`repair` found and did."""

    path: Path
    kept: int
    """Interactions kept (every intact one)."""
    damage: tuple[codec.Damage, ...]
    """Byte ranges that held no intact record, in file order."""
    torn_at: int | None
    """Where a torn tail began (cut off by the repair)."""
    output: Path | None = None
    """Where the repaired cassette was written (``None``: nothing written)."""
    backup: Path | None = None
    """Where the original file was kept (``None``: not moved)."""

    @property
    def needed(self) -> bool:
        return bool(self.damage) or self.torn_at is not None

    @property
    def skipped_bytes(self) -> int:
        return sum(d.end - d.offset for d in self.damage)


def _backup_name(path: Path) -> Path:
    candidate = path.with_name(path.name + ".bak")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    return candidate


def _keep_original(path: Path, data: bytes) -> Path:
    """Keep the original file under a fresh ``.bak`` name: a hard link to the very file (any
    late append lands there too), or a copy of the bytes that were read where links fail."""
    while True:
        backup = _backup_name(path)
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            continue  # taken meanwhile: try the next name
        except OSError:
            break
    try:
        fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise CassetteError(f"cannot write the backup ({e.strerror})", path=backup) from None
    return backup


def repair(
    path: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
) -> Repair:
    """Salvage every intact interaction of a damaged or torn cassette.

    Without ``output`` the repaired cassette replaces ``path`` and the original is kept as
    ``PATH.bak`` (``.bak.1``, ... if taken); with ``output`` it is written there and ``path``
    is not touched. A cassette with nothing to repair is left alone (nothing written).
    ``dry_run`` only reports. The result is written in the current format version.
    """
    p = Path(path)
    data = _read(p)
    try:
        salvaged = codec.salvage(data)
    except CassetteError as e:
        raise _named(p, e) from None
    decoded = salvaged.decoded
    found = Repair(p, len(decoded.cassette.interactions), salvaged.damage, decoded.torn_at)
    if dry_run or (not found.needed and output is None):
        return found
    target = p if output is None else Path(output)
    fresh = codec.encode(decoded.cassette)
    if output is not None:
        _write_atomically(target, fresh)
        return Repair(p, found.kept, found.damage, found.torn_at, output=target)
    backup = _keep_original(p, data)
    _write_atomically(p, fresh)
    return Repair(p, found.kept, found.damage, found.torn_at, output=p, backup=backup)
