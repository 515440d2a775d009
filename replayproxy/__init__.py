"""replayproxy: record and replay streaming LLM API responses byte for byte, with their timing.

The public Python API: cassettes (:class:`Cassette` and its parts, :func:`load`, :func:`save`,
:class:`CassetteWriter`), serving them (:class:`ReplayServer` for a base URL,
:func:`use_cassette` to replay and record around a block of code; both hand back the same
shape: ``url``, ``requests``, ``misses``, ``explain()``, ``summary()``) and the one error
hierarchy (:class:`ReplayProxyError`). Also public: :mod:`replayproxy.testing` (builders, the
provider simulator, the capture of your own endpoint), :mod:`replayproxy.checking` (the stream
checker) and the pytest plugin. Every module whose path has a part starting with ``_`` is
private. docs/reference/api.md lists every public name.
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
from replayproxy._core.matching.explanation import Miss
from replayproxy._core.replay.seen import SeenRequest
from replayproxy._core.replay.summary import Summary
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
    "Miss",
    "ReplayProxyError",
    "ReplayServer",
    "Request",
    "Response",
    "SeenRequest",
    "Summary",
    "UpstreamError",
    "UsageError",
    "__version__",
    "load",
    "save",
    "use_cassette",
]
