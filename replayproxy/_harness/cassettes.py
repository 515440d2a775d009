"""Read a cassette for a harness that must look at it before serving it (the fault matrix).

The pytest plugin may not import the store (docs/explanations/architecture.md, import rules); a cell
of the fault matrix resolves its positions on the test's cassette before the test's session starts,
so it reads the cassette here.
"""

from __future__ import annotations

import logging
import os

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette

__all__ = ["existing_cassette"]

log = logging.getLogger("replayproxy")


def existing_cassette(path: str | os.PathLike[str]) -> Cassette | None:
    """The cassette at ``path``, or ``None`` when there is no file; a damaged one raises the
    store's one-line :class:`~replayproxy._errors.CassetteError` (a torn tail is a warning)."""
    if not os.path.exists(path):
        return None
    return store.load(path, on_warning=log.warning)
