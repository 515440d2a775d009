"""Where a session's newly recorded interactions go: a cassette file opened on first use.

A session in a record mode (:mod:`replayproxy.core.replay.record_mode`) may record nothing at all (a
test that makes no request, ``once`` with every request replayed...). The file is therefore
opened only when the first interaction arrives, so such a session never creates, empties or
touches a cassette. Appending goes through :class:`replayproxy.store.CassetteWriter`: one
``os.write`` per interaction, so a killed test run loses at most the interaction in flight.

With ``replaces`` (record mode ``rewrite``) the interactions go to a temporary file beside the
cassette (``NAME.rewrite-tmp``), moved over the cassette by :meth:`CassetteSink.close`
(``os.replace``: atomic on one filesystem). Until then the old cassette is untouched, so a run
that is killed, or records nothing, keeps it as it was (a killed run leaves the temporary file,
overwritten by the next rewrite).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from replayproxy.core.cassette.model import Interaction
from replayproxy.core.replay.cassette_write import CassetteWrite
from replayproxy.errors import CassetteError
from replayproxy.store import CassetteWriter

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
        self._writer: CassetteWriter | None = None
        self._lock = threading.Lock()

    def append(self, interaction: Interaction) -> None:
        """Write ``interaction`` (loadable as soon as this returns)."""
        with self._lock:
            if self._writer is None:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise CassetteError(
                        f"cannot create directory {self.path.parent} ({e.strerror})",
                        path=self.path,
                    ) from None
                self._writer = CassetteWriter(
                    self.temporary if self.replaces else self.path,
                    CassetteWrite.OVERWRITE if self.replaces else self.write_mode,
                    on_warning=self._on_warning,
                )
            self._writer.append(interaction)
            self.count += 1

    @property
    def temporary(self) -> Path:
        """Where a replacing sink records until :meth:`close` moves the file over the cassette."""
        return self.path.with_name(self.path.name + ".rewrite-tmp")

    def close(self) -> None:
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            if self.replaces:
                try:
                    os.replace(self.temporary, self.path)
                except OSError as e:
                    raise CassetteError(
                        f"cannot replace the cassette with {self.temporary} ({e.strerror})",
                        path=self.path,
                    ) from None
