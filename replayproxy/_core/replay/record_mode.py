"""Record modes: when a proxy replays from its cassette and when it forwards and records (pure).

The names and meanings are VCR.py's, so a user of VCR.py / pytest-recording reads them at once:

====================  ==========================  ==========================================
mode                  cassette missing            cassette exists
====================  ==========================  ==========================================
``none``              every request is a miss     replay; a new request is a miss
``once``              forward and record all      replay; a new request is a miss
``new_episodes``      forward and record all      replay what matches, forward and append
                                                  the rest
``all``               forward and record all      never replay; forward and record all,
                                                  replacing the cassette's interactions
``rewrite``           forward and record all      like ``all``, but into a temporary file
                                                  that replaces the cassette when the
                                                  session ends (pytest-recording's name)
====================  ==========================  ==========================================

``rewrite`` is pytest-recording's "delete the cassette and record it anew", made safe: the old
cassette stays in place until the session closes with at least one new interaction, so a run
that crashes, or records nothing, leaves the old cassette as it was.

A :class:`RecordPolicy` is decided once per cassette (:func:`policy_for`), from the mode and
whether the cassette file exists when the session starts; the session then asks it what to do
with each request, and opens the file in the policy's write mode
(:class:`~replayproxy._core.replay.cassette_write.CassetteWrite`, how the file is opened, which
is not a record mode). Nothing here touches files: the caller says whether the cassette exists.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import UsageError

__all__ = ["RecordMode", "RecordPolicy", "parse_record_mode", "policy_for"]


class RecordMode(enum.StrEnum):
    """When to forward and record instead of replaying (VCR.py's names)."""

    NONE = "none"
    """Replay only; an unmatched request is a miss (the CI mode)."""
    ONCE = "once"
    """Record everything if the cassette does not exist; replay only if it does."""
    NEW_EPISODES = "new_episodes"
    """Replay what matches; forward, stream and append what does not."""
    ALL = "all"
    """Forward and record everything, replacing the cassette's interactions."""
    REWRITE = "rewrite"
    """Like ``all``, recorded into a temporary file that replaces the cassette at the end."""


def parse_record_mode(value: str | RecordMode) -> RecordMode:
    """``value`` as a :class:`RecordMode`, else a one-line UsageError naming the choices."""
    try:
        return RecordMode(str(value).strip().lower().replace("-", "_"))
    except ValueError:
        choices = ", ".join(m.value for m in RecordMode)
        raise UsageError(f"record mode must be one of {choices}, got {value!r}") from None


@dataclass(frozen=True, slots=True)
class RecordPolicy:
    """What one session does with requests, decided when it starts.

    ``replay``: requests are matched against the cassette. ``forward_misses``: a request that
    does not match is forwarded upstream and recorded instead of being a miss. ``write_mode``:
    how the file is opened for the first new interaction, never ``new`` (``None``: nothing is
    ever recorded). ``replaces``: record into a temporary file beside the cassette and move it
    over the cassette when the session closes (``rewrite``).
    """

    mode: RecordMode
    replay: bool
    forward_misses: bool
    write_mode: CassetteWrite | None
    replaces: bool = False

    @property
    def records(self) -> bool:
        """Whether this session may forward requests upstream and record them."""
        return self.write_mode is not None


def policy_for(mode: RecordMode, cassette_exists: bool) -> RecordPolicy:
    """The policy of a session in ``mode`` for a cassette that exists or not."""
    if mode is RecordMode.NONE or (mode is RecordMode.ONCE and cassette_exists):
        return RecordPolicy(mode, replay=True, forward_misses=False, write_mode=None)
    if mode is RecordMode.NEW_EPISODES and cassette_exists:
        return RecordPolicy(mode, replay=True, forward_misses=True, write_mode=CassetteWrite.APPEND)
    # once / new_episodes without a cassette: record everything into a new file (the session's
    # sink appends to it should another writer create it meanwhile: xdist workers sharing one
    # cassette); all and rewrite: into a fresh file (overwrite: `all` replaces the cassette).
    fresh = mode in (RecordMode.ONCE, RecordMode.NEW_EPISODES)
    return RecordPolicy(
        mode,
        replay=False,
        forward_misses=True,
        write_mode=CassetteWrite.NEW if fresh else CassetteWrite.OVERWRITE,
        replaces=mode is RecordMode.REWRITE,
    )
