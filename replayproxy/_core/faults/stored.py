"""Checking a cassette's stored faults (and, for one built in code, every field) before replay
starts, so that a bad one stops replay up front, naming the interaction, instead of failing
requests later or writing an injected header to a client (pure)."""

from __future__ import annotations

from replayproxy._core import faults
from replayproxy._core.cassette import validate
from replayproxy._core.cassette.model import Cassette
from replayproxy._errors import CassetteFormatError, FaultSpecError

__all__ = ["check_stored_faults"]


def check_stored_faults(cassette: Cassette, path: str | None) -> None:
    """Check every stored fault of ``cassette``, loaded from ``path`` (``None``: built in code,
    not through a loader, so every field is checked as loading a file does). Raises
    CassetteFormatError naming the interaction."""
    for i, interaction in enumerate(cassette.interactions):
        if path is None:
            try:
                validate.check_interaction(interaction)
            except validate.InvalidField as e:  # built in code: no file to name
                raise CassetteFormatError(f"interaction {i}: {e}") from None
        for text in interaction.faults:
            try:
                faults.parse(text)
            except FaultSpecError as e:
                req = interaction.request
                raise CassetteFormatError(
                    f"interaction {i} ({req.method} {req.path}): stored fault {text[:60]!r}: {e}",
                    path=path,
                ) from None
