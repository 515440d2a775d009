"""Salvaging a damaged cassette: :func:`repair` keeps every intact record, and the original."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from replayproxy._core.cassette import codec
from replayproxy._errors import CassetteError
from replayproxy._store.files import named, read, write_atomically

__all__ = ["Repair", "repair"]


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
    data = read(p)
    try:
        salvaged = codec.salvage(data)
    except CassetteError as e:
        raise named(p, e) from None
    decoded = salvaged.decoded
    found = Repair(p, len(decoded.cassette.interactions), salvaged.damage, decoded.torn_at)
    if dry_run or (not found.needed and output is None):
        return found
    target = p if output is None else Path(output)
    fresh = codec.encode(decoded.cassette)
    if output is not None:
        write_atomically(target, fresh)
        return Repair(p, found.kept, found.damage, found.torn_at, output=target)
    backup = _keep_original(p, data)
    write_atomically(p, fresh)
    return Repair(p, found.kept, found.damage, found.torn_at, output=p, backup=backup)
