"""The option table as typed keywords (pure): what ``use_cassette(**options)`` and
``ReplayServer(cassette, **options)`` accept, for type checkers and editors.

Each key is a row of :data:`replayproxy._core.replay.options.OPTIONS` that the front end takes
(``OptionDef.fronts``), typed by its kind; ``tests/integration/test_option_fronts.py`` fails
when these and the table disagree (a row added to the table needs its key here). The values
are checked at run time by the table's parsers, whatever their static type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from replayproxy._core.faults import FaultSpec

__all__ = ["CassetteOptions", "ServerOptions"]

_Names = Sequence[str | tuple[str, str]]
"""Names to redact, each alone or as ``(name, replacement)``."""


class ServerOptions(TypedDict, total=False):
    """The keywords of ``ReplayServer`` taken from the table, besides its own ``speed`` and
    ``faults`` parameters: matching and the connection limits."""

    ignore_query: Sequence[str]
    ignore_body_field: Sequence[str]
    allow_repeats: bool
    match_host: bool
    no_equivalence: bool
    head_timeout: float
    body_timeout: float
    max_connections: int
    http_version: str


class CassetteOptions(ServerOptions, total=False):
    """The keywords of ``use_cassette()``: every option of the table."""

    record_mode: str
    speed: float
    faults: Sequence[str | FaultSpec]
    redact_header: _Names
    redact_query: _Names
    redact_body_field: _Names
    no_redact: bool
    record_tls_failures: bool
