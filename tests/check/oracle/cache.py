"""The client outcomes measured once per test session, shared by pytest-xdist workers: the
first worker to ask measures them under a file lock and leaves them as JSON in the session's
shared temporary directory; the others read that file."""

from __future__ import annotations

import dataclasses
import fcntl
import json
from pathlib import Path

from tests.check.oracle.outcome import ClientOutcome
from tests.check.oracle.run import client_outcomes

__all__ = ["shared_outcomes"]


def shared_outcomes(root: Path) -> dict[str, tuple[ClientOutcome, ...]]:
    file = root / "sdk-oracle-outcomes.json"
    with (root / "sdk-oracle.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not file.is_file():
            measured = client_outcomes()
            raw = {k: [dataclasses.asdict(o) for o in v] for k, v in measured.items()}
            file.write_text(json.dumps(raw))
            return measured
    raw = json.loads(file.read_text())
    return {k: tuple(ClientOutcome(**o) for o in v) for k, v in raw.items()}
