"""The default cassette path of a test: ``cassettes/{module}/{test}.cassette`` (pure).

Like pytest-recording's default (``cassettes/{module}/{test}.yaml``). The test name keeps the
parametrization id, made filesystem-safe: characters outside ``A-Za-z0-9._-[]=`` become
``_``, and a short hash of the original name is added whenever anything was replaced, so two
ids that differ only in such characters still get distinct files.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["CASSETTE_SUFFIX", "cassette_name"]

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
