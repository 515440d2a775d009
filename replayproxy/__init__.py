"""replayproxy: record and replay streaming LLM API responses byte for byte, with their timing.

The public Python API. Submodules: :mod:`replayproxy._core` (pure model, codec, parsers,
schedules), :mod:`replayproxy._store` (cassette files), :mod:`replayproxy._mitm.addons` (mitmproxy
addons), :mod:`replayproxy._harness` (:func:`use_cassette`: replay and record around Python code;
the pytest plugin is built on it), :mod:`replayproxy.testing` (a local provider simulator).
"""

from __future__ import annotations

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.replay.seen import SeenRequest
from replayproxy._engine.server import ReplayServer
from replayproxy._errors import (
    CassetteError,
    CassetteExistsError,
    CassetteFormatError,
    CassetteVersionError,
    CassetteWarning,
    CassetteWriteError,
    FaultSpecError,
    ReplayProxyError,
    UpstreamError,
    UsageError,
)
from replayproxy._harness.context import CassetteUse, use_cassette
from replayproxy._store import CassetteWriter, load, save

__version__ = "0.1.0"

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
    "CassetteUse",
    "CassetteVersionError",
    "CassetteWarning",
    "CassetteWriteError",
    "CassetteWriter",
    "EndKind",
    "Ending",
    "FaultSpecError",
    "Frame",
    "Interaction",
    "ReplayProxyError",
    "ReplayServer",
    "Request",
    "Response",
    "SeenRequest",
    "UpstreamError",
    "UsageError",
    "__version__",
    "load",
    "save",
    "use_cassette",
]
