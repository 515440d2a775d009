"""The cassette path of a test, by default ``cassettes/{module}/{test}.cassette`` (pure).

Like pytest-recording's default (``cassettes/{module}/{test}.yaml``). The test name keeps the
parametrization id, made filesystem-safe: characters outside ``A-Za-z0-9._-[]=`` become
``_``, and a short hash of the original name is added whenever anything was replaced, so two
ids that differ only in such characters still get distinct files.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

__all__ = ["CASSETTE_SUFFIX", "cassette_name", "cassette_path"]

CASSETTE_SUFFIX = ".cassette"

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]=]")
_MAX = 150  # well under the 255 bytes most file systems allow for a name


def cassette_name(test_name: str, class_name: str | None = None) -> str:
    """``TestChat.test_stream[openai-sync].cassette`` for a test (and its class, if any)."""
    name = f"{class_name}.{test_name}" if class_name else test_name
    safe = _UNSAFE.sub("_", name).lstrip(".") or "_"
    if safe != name or len(safe) > _MAX:
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe[:_MAX]}-{digest}"
    return safe + CASSETTE_SUFFIX


def cassette_path(
    test_file: Path,
    class_name: str | None,
    test_name: str,
    cassette: str | os.PathLike[str] | None,
    cassette_dir: Path,
) -> Path:
    """The cassette a test uses: ``cassette`` (a marker's ``cassette=``, relative to the test
    file), else the default file in ``cassette_dir``."""
    if cassette is None:
        return cassette_dir / cassette_name(test_name, class_name)
    path = Path(cassette)
    return path if path.is_absolute() else test_file.parent / path
