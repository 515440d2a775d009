"""What the cassette files of :mod:`replayproxy._store` share: reading within a bound, decoding
with the file's name in the error, the advisory lock appends hold, and atomic whole-file writes.

Reading is bounded: a cassette is at most :data:`MAX_CASSETTE_BYTES`, and a file that does not
start like one (``/dev/zero``, a video) is refused after its first :data:`PROBE_BYTES`, so a
wrong path never fills memory.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack

from replayproxy._core.cassette import codec, records
from replayproxy._errors import CassetteError, CassetteFormatError, CassetteWarning

__all__ = [
    "MAX_CASSETTE_BYTES",
    "PROBE_BYTES",
    "WarningHandler",
    "check_writable",
    "decode",
    "default_warn",
    "locked",
    "named",
    "read",
    "read_bounded",
    "torn_message",
    "write_atomically",
]

try:  # POSIX; elsewhere appends are not locked (one recorder per cassette)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

WarningHandler = Callable[[str], None]

MAX_CASSETTE_BYTES = 4 * 1024**3
"""The largest cassette read (4 GiB): loading holds the file and its decoded frames in memory,
so a bigger file is refused with one line rather than read until memory runs out."""

PROBE_BYTES = 64 * 1024
"""Read first, and checked for a cassette header before the rest is read."""


def default_warn(message: str) -> None:
    warnings.warn(message, CassetteWarning, stacklevel=3)


def read(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            return read_bounded(path, f.fileno())
    except FileNotFoundError:
        raise CassetteError("no such cassette file", path=path) from None
    except IsADirectoryError:
        raise CassetteError("is a directory, not a cassette file", path=path) from None
    except OSError as e:
        raise CassetteError(f"cannot read ({e.strerror})", path=path) from None


def too_big(path: Path) -> CassetteError:
    return CassetteError(
        f"larger than {MAX_CASSETTE_BYTES} bytes, the most a cassette may be "
        "(replayproxy._store.MAX_CASSETTE_BYTES); is this the right file?",
        path=path,
    )


def read_bounded(path: Path, fd: int, size: int | None = None) -> bytes:
    """The file's bytes, reading no more than :data:`MAX_CASSETTE_BYTES` (``/dev/zero`` and
    pipes have no size to check first), and refusing after the first :data:`PROBE_BYTES` a
    file that does not begin with a cassette header."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_CASSETTE_BYTES:
        raise too_big(path)
    head = os.pread(fd, PROBE_BYTES, 0) if size is not None else os.read(fd, PROBE_BYTES)
    if len(head) == PROBE_BYTES:  # more may follow: check before reading it all
        check_head(path, head)
    chunks, total = [head], len(head)
    while len(chunks[-1]) and (size is None or total < size):
        want = min(8 * 1024 * 1024, MAX_CASSETTE_BYTES + 1 - total)
        chunk = os.pread(fd, want, total) if size is not None else os.read(fd, want)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_CASSETTE_BYTES:
            raise too_big(path)
    return b"".join(chunks)


def check_head(path: Path, head: bytes) -> None:
    """Refuse bytes that do not start with a cassette's header record (the codec says more
    about a file that does, once it is read)."""
    try:
        value, _ = records.unpack_one(head)
    except msgpack.OutOfData:
        return  # a header longer than the probe: unusual, but the full read decides
    except ValueError:
        value = None
    if not (isinstance(value, dict) and value.get("format") == codec.FORMAT_NAME):
        raise CassetteFormatError(
            f"not a replayproxy cassette (no {codec.FORMAT_NAME!r} header)", path=path, offset=0
        )


def named(path: Path, e: CassetteError) -> CassetteError:
    return e if e.path is not None else e.with_path(path)


def decode(path: Path, data: bytes | None = None) -> codec.Decoded:
    try:
        return codec.decode(read(path) if data is None else data)
    except CassetteError as e:
        raise named(path, e) from None


@contextlib.contextmanager
def locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock on the open file ``fd`` (released by the kernel if we die)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def torn_message(path: Path, decoded: codec.Decoded) -> str:
    n = len(decoded.cassette.interactions)
    return (
        f"{path}: torn tail at byte {decoded.torn_at} skipped "
        f"(an interaction was being written when the recorder stopped); {n} interaction(s) loaded"
    )


def write_atomically(p: Path, data: bytes) -> None:
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


def check_writable(path: Path) -> None:
    """Raise the one-line :class:`CassetteError` a writer would, if ``path`` cannot be written,
    without changing it: an existing file is opened for writing (not truncated), else a file is
    created and removed in its directory (permission bits do not stop root, a read-only
    mount or a full inode table does)."""
    try:
        if path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
            return
        directory = path.parent if str(path.parent) else Path(".")
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except IsADirectoryError:
        raise CassetteError("is a directory, not a cassette file", path=path) from None
    except OSError as e:
        raise CassetteError(f"cannot open for writing ({e.strerror})", path=path) from None
