"""Cassette files on disk: the only module that reads or writes them.

- :func:`load` reads a whole cassette, turning codec errors into one-line errors that name the
  file, and reporting a torn tail (left by a killed recorder) as a warning, not an error.
- :func:`save` writes a whole cassette atomically (temp file + rename), for edits and imports.
- :class:`CassetteWriter` appends one interaction at a time for the recorder. Each record goes
  out in a single ``os.write`` on an ``O_APPEND`` descriptor, so ``kill -9`` leaves at most the
  record being written torn, and the page cache keeps everything already written (``fsync`` is
  for power loss, and is done on close).
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from replayproxy.core import codec
from replayproxy.core.model import Cassette, Interaction
from replayproxy.errors import CassetteError, CassetteExistsError, CassetteWarning

__all__ = ["CassetteWriter", "load", "save"]

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


def _decode(path: Path) -> codec.Decoded:
    try:
        return codec.decode(_read(path))
    except CassetteError as e:
        if e.path is not None:
            raise
        raise e.with_path(path) from None


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
    data = codec.encode(cassette)
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
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class CassetteWriter:
    """Append-only writer used while recording. Thread-safe; one record per ``os.write``.

    ``mode`` is ``"new"`` (refuse an existing file), ``"append"`` (keep what is there; a torn
    tail is cut off first, with a warning, so new records do not land after garbage) or
    ``"overwrite"`` (start a fresh file).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str = "new",
        *,
        meta: tuple[tuple[str, str], ...] = (),
        on_warning: WarningHandler | None = None,
    ) -> None:
        if mode not in ("new", "append", "overwrite"):
            raise ValueError(f"unknown writer mode {mode!r}")
        self.path = Path(path)
        self.count = 0
        self._lock = threading.Lock()
        warn = on_warning or _default_warn
        exists = self.path.exists()
        if exists and mode == "new":
            raise CassetteExistsError(
                "already exists; pass --append to add to it or --overwrite to replace it",
                path=self.path,
            )
        if exists and mode == "append":
            decoded = _decode(self.path)  # refuses to append to a corrupt or foreign file
            self.count = len(decoded.cassette.interactions)
            if decoded.torn_at is not None:
                warn(_torn_message(self.path, decoded) + "; cutting it off before appending")
                os.truncate(self.path, decoded.torn_at)
            flags = os.O_WRONLY | os.O_APPEND
        else:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC
        try:
            self._fd: int | None = os.open(self.path, flags, 0o644)
        except OSError as e:
            raise CassetteError(f"cannot open for writing ({e.strerror})", path=self.path) from None
        if not (exists and mode == "append"):
            self._write(codec.encode_header(meta))

    def _write(self, data: bytes) -> None:
        assert self._fd is not None, "writer is closed"
        view = memoryview(data)
        while view:  # os.write may write less than asked (signals, full disks)
            n = os.write(self._fd, view)
            view = view[n:]

    def append(self, interaction: Interaction) -> None:
        """Append one finished interaction; it is loadable as soon as this returns."""
        data = codec.encode_interaction(interaction)
        with self._lock:
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
