"""The turns of the chat endpoint in SQLite: one row per turn, written once it ends."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    turn_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,              -- streaming | committed | rejected
    text TEXT NOT NULL DEFAULT '',
    finish_reason TEXT,
    truncated INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    message_id TEXT,
    record_version INTEGER NOT NULL DEFAULT 0
)
"""


class DuplicateTurn(Exception):
    """A turn with this id exists already."""


@dataclass
class TurnStore:
    """Turns in one SQLite file; every call opens its own connection (any thread may call)."""

    path: Path

    def __post_init__(self) -> None:
        with self._db() as db:
            db.execute(SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, isolation_level=None)  # autocommit
        db.row_factory = sqlite3.Row
        try:
            yield db
        finally:
            db.close()

    def start(self, turn_id: str) -> None:
        """Create the turn as streaming; :class:`DuplicateTurn` when the id is taken."""
        try:
            with self._db() as db:
                db.execute(
                    "INSERT INTO turns (turn_id, status) VALUES (?, 'streaming')", (turn_id,)
                )
        except sqlite3.IntegrityError:
            raise DuplicateTurn(turn_id) from None

    def commit(self, turn_id: str, text: str, finish_reason: str) -> dict[str, Any]:
        """Store the finished turn; returns the row as stored (what the committed event says)."""
        with self._db() as db:
            db.execute(
                "UPDATE turns SET status='committed', text=?, finish_reason=?, truncated=?, "
                "message_id=?, record_version=record_version+1 WHERE turn_id=?",
                (text, finish_reason, finish_reason == "length", f"m_{turn_id}", turn_id),
            )
        return self.get(turn_id) or {}

    def reject(self, turn_id: str, reason: str, text: str) -> None:
        """Store the turn as rejected: it is never shown as an answer."""
        with self._db() as db:
            db.execute(
                "UPDATE turns SET status='rejected', reason=?, text=? WHERE turn_id=?",
                (reason, text, turn_id),
            )

    def get(self, turn_id: str) -> dict[str, Any] | None:
        """The turn's row, or ``None``."""
        with self._db() as db:
            row = db.execute("SELECT * FROM turns WHERE turn_id=?", (turn_id,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["truncated"] = bool(out["truncated"])
        return out
