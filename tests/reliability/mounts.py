"""Small file systems of the reliability tests' own: a tmpfs of a given size, optionally
read-only, mounted under the test's directory and unmounted after it.

Mounting needs root (or CAP_SYS_ADMIN); where it is not permitted the test is skipped with the
reason, never passed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["tmpfs"]


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "1m", *, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (created), read-only if asked."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the disk-full and read-only cases)")
    options = f"size={size},mode=0755" + (",ro" if read_only else "")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
