"""The Node readers: the openai and anthropic Node SDKs and the Vercel AI SDK, in one Node
process for the whole batch (``node/read.mjs``: a JSON list of streams on stdin, a JSON list of
outcomes on stdout).

The packages (``node/package.json`` with its committed ``package-lock.json``) are installed with
``npm ci`` into the git-ignored ``.oracle-node/`` at the repository root, once per lock file and
under a file lock so parallel pytest workers install once. (Not under ``tests/``: the
repository's text checks read every file there.)
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.check.oracle.outcome import Delivered, canonical_args
from tests.check.oracle.streams import OracleStream, key_of
from tests.check.oracle.truth import Reading

__all__ = ["NodeRaised", "NodeResult", "install", "read_all"]

HERE = Path(__file__).resolve().parent / "node"
ROOT = HERE.parents[3]
PREFIX = ROOT / ".oracle-node"
_FILES = ("package.json", "package-lock.json", "read.mjs")


class NodeRaised(Exception):
    """What a Node client threw (its JS class name in :attr:`type_name`)."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


@dataclass(frozen=True, slots=True)
class NodeResult:
    raw: dict[str, Any]

    def value(self) -> Delivered:
        if "error" in self.raw:
            e = self.raw["error"]
            raise NodeRaised(e["type"], e["message"])
        d = self.raw["delivered"]
        return Delivered(
            text=d.get("text"),
            tool_args=None
            if d.get("tool_args") is None
            else tuple(map(canonical_args, d["tool_args"])),
            usage=d.get("usage"),
            has_usage=d.get("has_usage", True),
            finish=d.get("finish"),
            has_finish=d.get("has_finish", True),
            role=d.get("role"),
        )


def install() -> Path:
    """``npm ci`` into ``.oracle-node/`` unless it already holds this lock file's install."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"the SDK oracle needs Node 20+ and npm on the PATH ({' and '.join(missing)} not "
            "found) to read streams with the Node SDKs in tests/check/oracle/node"
        )
    PREFIX.mkdir(exist_ok=True)
    with (PREFIX / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lockfile = (HERE / "package-lock.json").read_bytes()
        stamp = PREFIX / "node_modules" / ".oracle-installed"
        if not stamp.is_file() or stamp.read_bytes() != lockfile:
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(HERE / name, PREFIX / name)
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=PREFIX,
                check=True,
                capture_output=True,
                timeout=300,
            )
            stamp.write_bytes(lockfile)
        shutil.copyfile(HERE / "read.mjs", PREFIX / "read.mjs")
    return PREFIX


def read_all(
    base_url: str, streams: Sequence[OracleStream], truths: Sequence[Reading | None]
) -> Iterator[tuple[int, str, str, NodeResult]]:
    """(stream index, client, way, result) for every Node way that reads a stream's provider."""
    batch = [
        {"index": i, "key": key_of(i), "provider": s.provider, "dialect": s.dialect}
        for i, (s, t) in enumerate(zip(streams, truths, strict=True))
        if t is not None
    ]
    prefix = install()
    done = subprocess.run(
        ["node", str(prefix / "read.mjs"), base_url],
        input=json.dumps(batch).encode(),
        capture_output=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"node read.mjs failed (exit {done.returncode}): {tail}")
    for row in json.loads(done.stdout.splitlines()[-1]):
        yield row["index"], row["client"], row["way"], NodeResult(row)
