"""The docs tables generated from the registries, and the blocks of the docs that hold them.

A block is the lines between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``
in a docs page; :data:`BLOCKS` says which page holds which block and renders its text from the
code (the fault registry, the fault matrix's sets, the option table).
``tests/test_generated_docs.py`` fails when a block differs from its rendering;
``python -m tests.generated_docs`` rewrites the blocks.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from replayproxy._core.faults import definitions
from replayproxy._core.faults.registry import FaultDef
from replayproxy._core.matrix import SETS
from replayproxy._core.matrix.cells import set_of
from tests.integration.option_docs import pytest_rows, recording_rows

ROOT = Path(__file__).resolve().parents[1]


def _default(value: object) -> str:
    return "" if value is None else f" (`{value}`)"


def _params(d: FaultDef) -> str:
    own = [f"`{name}`{_default(p.default)}" for name, p in d.params.items()]
    if d.positioned:
        own.append("a position")
    return ", ".join(own) or "—"


def faults_table() -> str:
    """docs/reference/faults.md: one row per registered fault, in registry order."""
    lines = [
        "| fault | what it does | phase | outcome | parameters (default) | WebSocket "
        "| matrix set |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in definitions():
        ws = "yes" if d.ws is not None else "no"
        lines.append(
            f"| `{d.name}` | {d.summary} | {d.phase.value} | {d.outcome.value} | {_params(d)} "
            f"| {ws} | `{set_of(d)}` |"
        )
    return "\n".join(lines)


def matrix_sets() -> str:
    """docs/guides/matrix.md: every set with its cells and their outcome classes."""
    lines = ["| set | cells (outcome) |", "|---|---|"]
    for name, found in SETS.items():
        if name == "all":
            lines.append(f"| `all` | every cell above ({len(found)} cells) |")
        else:
            shown = "<br>".join(f"`{c.spec}` ({c.outcome})" for c in found)
            lines.append(f"| `{name}` | {shown} |")
    return "\n".join(lines)


BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "faults": ("docs/reference/faults.md", faults_table),
    "matrix-sets": ("docs/guides/matrix.md", matrix_sets),
    "pytest-options": ("docs/reference/options.md", pytest_rows),
    "record-options": ("docs/reference/options.md", recording_rows),
}
"""Block name: (the page that holds it, its rendering)."""


def _pattern(name: str) -> re.Pattern[str]:
    quoted = re.escape(name)
    return re.compile(
        rf"(<!-- generated: {quoted} -->\n)(.*?)(<!-- end generated: {quoted} -->)", re.S
    )


def block(text: str, name: str) -> str | None:
    """The text of block ``name`` in ``text`` (without its marker lines), or None."""
    found = _pattern(name).search(text)
    return None if found is None else found.group(2).rstrip("\n")


def without_blocks(text: str) -> str:
    """``text`` without any generated block (what is written by hand)."""
    return re.sub(r"<!-- generated: (\S+) -->\n.*?<!-- end generated: \1 -->", "", text, flags=re.S)


def rewritten(text: str, name: str, body: str) -> str:
    """``text`` with block ``name`` holding ``body``."""
    return _pattern(name).sub(lambda m: m.group(1) + body + "\n" + m.group(3), text)


def main(root: Path = ROOT) -> int:
    """Rewrite every block in the docs under ``root``; a page without its markers is an error."""
    for name, (page, render) in BLOCKS.items():
        path = root / page
        text = path.read_text("utf-8")
        if block(text, name) is None:
            print(f"{page}: no <!-- generated: {name} --> block", file=sys.stderr)
            return 1
        path.write_text(rewritten(text, name, render()), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
