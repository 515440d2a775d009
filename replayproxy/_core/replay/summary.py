"""The totals of a replay session: what was served, what missed, what was never asked for.

:class:`Summary` is what :meth:`replayproxy._engine.session.ReplaySession.summary` returns (and
where it is re-exported), with the one line every shell prints at exit.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Summary"]


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals of a session: what was served, what missed, what was never asked for.

    ``recorded`` counts the interactions the session started with; ``new`` those recorded
    during it (record modes), which never count as unused.
    """

    served: int
    unmatched: int
    unused: tuple[int, ...]
    recorded: int
    new: int = 0
    errors: int = 0
    """Requests answered with the explained 500 because replay itself failed (fail closed)."""

    def line(self) -> str:
        """The one-line summary printed to stderr on exit."""
        unused = f"{len(self.unused)} of {_count(self.recorded, 'recorded interaction')} never used"
        if self.unused:
            shown = ", ".join(f"#{n}" for n in self.unused[:10])
            unused += f" ({shown}{', ...' if len(self.unused) > 10 else ''})"
        new = f", {_count(self.new, 'new interaction')} recorded" if self.new else ""
        errors = f"{_count(self.errors, 'replay error')}, " if self.errors else ""
        return (
            f"replayproxy: {_count(self.served, 'interaction')} served, "
            f"{_count(self.unmatched, 'unmatched request')}, {errors}{unused}{new}"
        )


def _count(n: int, noun: str) -> str:
    """``1 interaction``, ``2 interactions`` (English plural, the nouns used here)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
