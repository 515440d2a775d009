"""The one error hierarchy of replayproxy.

Every error a user can cause (bad cassette, bad option, bad fault spec, unmatched request,
unreachable upstream) is a :class:`ReplayProxyError`. Its ``str()`` is a single line meant to be
shown as is: the CLI prints ``error: <message>`` and exits non-zero, never a traceback.

Like h11's ``LocalProtocolError`` / ``RemoteProtocolError`` split, the hierarchy separates
what the *user* got wrong (:class:`UsageError` and its children) from what the *outside world*
did (:class:`UpstreamError`) and from bad *data on disk* (:class:`CassetteError`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CassetteError",
    "CassetteExistsError",
    "CassetteFormatError",
    "CassetteVersionError",
    "CassetteWarning",
    "CassetteWriteError",
    "FaultSpecError",
    "ReplayProxyError",
    "UpstreamError",
    "UsageError",
]


class ReplayProxyError(Exception):
    """Base class: a one-line, user-facing problem."""


class UsageError(ReplayProxyError):
    """The caller asked for something invalid (an option, a spec, an argument)."""


class FaultSpecError(UsageError, ValueError):
    """A fault spec (``NAME:PARAM=VALUE,...``) is malformed or names unknown things."""


class UpstreamError(ReplayProxyError):
    """The upstream could not be reached or misbehaved before any response existed."""


class CassetteError(ReplayProxyError):
    """A cassette file cannot be used. Carries the path and, when known, the byte offset."""

    def __init__(self, message: str, *, path: str | Path | None = None, offset: int | None = None):
        self.reason = message
        self.path = None if path is None else str(path)
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path or "cassette"
        if self.offset is not None:
            where += f" at byte {self.offset}"
        return f"{where}: {self.reason}"

    def with_path(self, path: str | Path) -> CassetteError:
        """Return a copy of this error that names ``path`` (the codec does not know it)."""
        return type(self)(self.reason, path=path, offset=self.offset)


class CassetteFormatError(CassetteError):
    """The bytes are not a valid cassette (corrupt, wrong structure, not msgpack)."""


class CassetteVersionError(CassetteError):
    """The cassette declares a format version this replayproxy cannot read."""


class CassetteWriteError(CassetteError):
    """Writing a recorded interaction failed (disk full, I/O error, read-only): recording stops,
    and the cassette keeps every interaction written before it."""


class CassetteExistsError(CassetteError, UsageError):
    """Refusing to write over an existing cassette without ``--append`` or ``--overwrite``."""


class CassetteWarning(UserWarning):
    """Something was skipped while loading (a torn tail after a crash), but the rest loaded."""
