"""Where a session's newly recorded interactions go: a cassette file, opened before the first
request is forwarded.

A session in a record mode (:mod:`replayproxy._core.replay.record_mode`) may record nothing at
all (a
test that makes no request, ``once`` with every request replayed...). The file is therefore
created (or, for ``all``, replaced) only by the first interaction, so such a session never
creates, empties or touches a cassette; but it is checked writable when the session first
decides to forward a request (:meth:`CassetteSink.open`, before the request leaves), so a
target that cannot be written (a read-only directory) fails that request before any
credentials go upstream. Appending goes through :class:`replayproxy._store.CassetteWriter`: one
``os.write`` per interaction, so a killed test run loses at most the interaction in flight, and
a failed write (disk full) stops the recording: :meth:`CassetteSink.open` refuses from then on,
so nothing more is forwarded, and the cassette keeps every interaction written before it.

Write mode ``new`` here means "this session found no cassette": should another writer have
created it since (two pytest-xdist workers recording one shared cassette), the sink appends to
that file instead (under the writers' lock), so both keep every interaction.

With ``replaces`` (record mode ``rewrite``) the interactions go to a temporary file beside the
cassette (``NAME.rewrite-tmp``), moved over the cassette by :meth:`CassetteSink.close`
(``os.replace``: atomic on one filesystem). Until then the old cassette is untouched, so a run
that is killed, records nothing or fails to write keeps it as it was (the temporary file is
left; the next rewrite overwrites it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._errors import CassetteError, CassetteExistsError, CassetteWriteError
from replayproxy._store.files import check_writable
from replayproxy._store.writer import CassetteWriter

__all__ = ["CassetteSink"]


class CassetteSink:
    """Appends interactions to ``path``, opening it in ``write_mode`` on the first one.

    Missing parent directories are created (a per-test cassette path usually has none yet).
    Thread-safe: the recorder calls :meth:`append` on the proxy thread, a test closes it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        write_mode: CassetteWrite,
        *,
        on_warning: Callable[[str], None] | None = None,
        replaces: bool = False,
    ) -> None:
        self.path = Path(path)
        self.write_mode = write_mode
        self.replaces = replaces
        self.count = 0
        self._on_warning = on_warning
        self.failed: str | None = None
        """Which interaction could not be written, and why; from then on nothing more is
        recorded (``None`` while every write succeeded)."""
        self._writer: CassetteWriter | None = None
        self._reported = False
        self._checked = False
        self._lock = threading.Lock()

    def open(self, report: Callable[[str], None] | None = None) -> None:
        """Make sure the cassette can be written (idempotent; thread-safe), without changing it.

        Called before a request is forwarded, so a target that cannot be written fails that
        request, not its recording: the file is opened for writing if it exists, else a file is
        created and removed beside it (:func:`replayproxy._store.check_writable`); the cassette
        itself is created, or replaced (``all``), by the first interaction. Raises
        :class:`~replayproxy._errors.CassetteError` (the first time also passed to ``report``),
        and once a write has failed :class:`~replayproxy._errors.CassetteWriteError` every
        time: the recording has stopped.
        """
        with self._lock:
            try:
                self._check()
            except CassetteError as e:
                if report is not None and not self._reported:
                    self._reported = True
                    report(str(e))
                raise

    def _check(self) -> None:
        if self.failed is not None:
            raise CassetteWriteError(
                f"recording stopped when {self.failed}; nothing more is recorded or forwarded",
                path=self.path,
            )
        if self._checked:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CassetteError(
                f"cannot create directory {self.path.parent} ({e.strerror})", path=self.path
            ) from None
        check_writable(self.temporary if self.replaces else self.path)
        self._checked = True

    def _open(self) -> CassetteWriter:
        self._check()
        if self._writer is not None:
            return self._writer
        if self.replaces:
            target, mode = self.temporary, CassetteWrite.OVERWRITE
        else:
            target, mode = self.path, self.write_mode
        try:
            self._writer = CassetteWriter(target, mode, on_warning=self._on_warning)
        except CassetteExistsError:
            # Created since this session found none: another writer records into it too.
            self._writer = CassetteWriter(target, CassetteWrite.APPEND, on_warning=self._on_warning)
        return self._writer

    def append(self, interaction: Interaction) -> None:
        """Write ``interaction`` (loadable as soon as this returns); a failed write raises
        :class:`~replayproxy._errors.CassetteWriteError` and stops the recording."""
        with self._lock:
            writer = self._open()
            try:
                writer.append(interaction)
            except CassetteWriteError:
                if self.failed is None:
                    self.failed = f"interaction #{writer.failed_at} could not be written "
                    self.failed += f"({writer.failed})"
                raise
            self.count += 1

    @property
    def temporary(self) -> Path:
        """Where a replacing sink records until :meth:`close` moves the file over the cassette."""
        return self.path.with_name(self.path.name + ".rewrite-tmp")

    def close(self) -> None:
        """Close the file (``fsync``); a replacing sink then moves it over the cassette, unless
        a write failed (the old cassette is kept). Raises
        :class:`~replayproxy._errors.CassetteWriteError` if the flush fails."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is None:
            return
        writer.close()
        if self.replaces and self.failed is None:
            try:
                os.replace(self.temporary, self.path)
            except OSError as e:
                raise CassetteError(
                    f"cannot replace the cassette with {self.temporary} ({e.strerror})",
                    path=self.path,
                ) from None
