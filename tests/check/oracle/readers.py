"""The shape every reader module gives the runner: per provider id, the ways its client reads
a stream, each a callable from the stream's ``x-oracle-stream`` key to what it delivered."""

from __future__ import annotations

from collections.abc import Callable

from tests.check.oracle.outcome import Delivered

__all__ = ["Read", "Readers"]

Read = tuple[str, str, Callable[[str], Delivered]]  # (client, way, read)
Readers = dict[str, list[Read]]
