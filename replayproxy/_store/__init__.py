"""Cassette files on disk: the only package that reads or writes them.

- :func:`load` reads a whole cassette, turning codec errors into one-line errors that name the
  file, and reporting a torn tail (left by a killed recorder) as a warning, not an error.
  Reading is bounded (:mod:`.files`): at most :data:`MAX_CASSETTE_BYTES`, and a file that does
  not start like a cassette (``/dev/zero``) is refused after its first bytes.
- :func:`save` writes a whole cassette atomically (temp file + rename), for edits and imports.
- :class:`CassetteWriter` (:mod:`.writer`) appends one interaction at a time for the recorder:
  one locked ``os.write`` per record, crash-safe; a failed write (disk full, I/O error,
  read-only) is cut back off the file and stops the recording with one line.
- :func:`repair` (:mod:`.repair`) salvages the intact records of a damaged cassette into a
  fresh file, keeping the original as a backup.

Every file written here is created mode 0600: cassettes hold prompts and answers.
"""

from __future__ import annotations

import os
from pathlib import Path

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette
from replayproxy._errors import CassetteError
from replayproxy._store.files import (
    MAX_CASSETTE_BYTES,
    WarningHandler,
    check_writable,
    decode,
    default_warn,
    named,
    torn_message,
    write_atomically,
)
from replayproxy._store.repair import Repair, repair
from replayproxy._store.writer import CassetteWriter

__all__ = [
    "MAX_CASSETTE_BYTES",
    "CassetteWriter",
    "Repair",
    "check_writable",
    "load",
    "repair",
    "save",
]


def load(path: str | os.PathLike[str], *, on_warning: WarningHandler | None = None) -> Cassette:
    """Load a cassette. A torn tail is skipped and reported through ``on_warning``.

    Without ``on_warning``, the report is a :class:`CassetteWarning` (Python ``warnings``).
    """
    p = Path(path)
    decoded = decode(p)
    if decoded.torn_at is not None:
        (on_warning or default_warn)(torn_message(p, decoded))
    return decoded.cassette


def save(path: str | os.PathLike[str], cassette: Cassette) -> None:
    """Write a whole cassette atomically: readers see the old file or the new one, never half."""
    p = Path(path)
    try:
        data = codec.encode(cassette)
    except CassetteError as e:
        raise named(p, e) from None
    write_atomically(p, data)
