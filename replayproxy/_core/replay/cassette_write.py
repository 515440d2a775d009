"""Write modes: how a recorder opens its cassette file (pure).

Not to be confused with the record modes (:mod:`replayproxy._core.replay.record_mode`, VCR.py's
``none``/``once``/``new_episodes``/``all``), which decide *whether* a request is replayed or
forwarded and recorded. A write mode only says what happens to the file when the first new
interaction is written: ``replayproxy record`` takes one from ``--append`` / ``--overwrite``
(``new`` without either), a record mode's session gets one from its
:class:`~replayproxy._core.replay.record_mode.RecordPolicy`.
"""

from __future__ import annotations

import enum

__all__ = ["CassetteWrite"]


class CassetteWrite(enum.StrEnum):
    """How the cassette file is opened for the first recorded interaction (the write mode).

    The values are what :class:`replayproxy._store.CassetteWriter` and the recorder addon's
    ``replayproxy_write_mode`` option take.
    """

    NEW = "new"
    """Create the file; refuse one that exists (``replayproxy record`` without flags)."""
    APPEND = "append"
    """Keep the recorded interactions and add the new ones after them (``--append``)."""
    OVERWRITE = "overwrite"
    """Start a fresh file, replacing one that exists (``--overwrite``)."""
