"""What an import could not recover, kept in the cassette's free-form ``meta`` (pure).

Keys: ``import.source`` (the format and file), ``import.timing`` (the ``--timing`` model used
where the source had none) and ``import.lost.N`` for interaction ``N`` (``"; "``-joined, e.g.
``frame boundaries (one frame per event); timing (--timing zero); end state (assumed
complete)``). ``cassette show`` prints them; :func:`summary` is the one line per imported file.
"""

from __future__ import annotations

from collections.abc import Sequence

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.importers.build import Built
from replayproxy._core.importers.timing import TimingModel

__all__ = ["assemble", "lost", "summary"]

_PREFIX = "import.lost."


def assemble(built: Sequence[Built], source: str, model: TimingModel) -> Cassette:
    """The cassette of ``built`` with its losses in ``meta``."""
    meta = [("import.source", source), ("import.timing", str(model))]
    meta += [(f"{_PREFIX}{i}", "; ".join(b.losses)) for i, b in enumerate(built) if b.losses]
    return Cassette(tuple(b.interaction for b in built), tuple(meta))


def lost(cassette: Cassette) -> dict[int, str]:
    """Interaction index -> what its import lost (empty for a recorded cassette)."""
    out: dict[int, str] = {}
    for key, value in cassette.meta:
        if key.startswith(_PREFIX) and key[len(_PREFIX) :].isdigit():
            out[int(key[len(_PREFIX) :])] = value
    return out


def summary(cassette: Cassette) -> str:
    """``3 interactions, 2 streams (412 frames); lost: frame boundaries 2, timing 3, ...``."""
    n = len(cassette.interactions)
    streams = [x for x in cassette.interactions if len(x.frames) > 1]
    counts: dict[str, int] = {}
    for text in lost(cassette).values():
        for item in text.split("; "):
            name = item.split(" (")[0]
            counts[name] = counts.get(name, 0) + 1
    losses = ", ".join(f"{k} {v}" for k, v in counts.items()) or "nothing"
    frames = sum(len(x.frames) for x in streams)
    return f"{n} interactions, {len(streams)} streams ({frames} frames); lost: {losses}"
