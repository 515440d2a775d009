"""docs/explanations/architecture.md, "Where to add things", proved: a fault and an option added
to a copy of the source tree at the places listed there, and nowhere else, pass the checks that
guard those registries; leaving out any one listed step makes one of them fail.

Each test copies the package, the tests, the docs and the cassettes to a temporary directory,
edits the copy as a contributor would (programmatically), and runs the checks in a subprocess
with ``PYTHONPATH`` on the copy (so ``replayproxy`` is the copy's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import replayproxy

ROOT = Path(replayproxy.__file__).resolve().parents[1]
COPIED = ("replayproxy", "tests", "docs", "cassettes")

Step = Callable[[Path], None]


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in COPIED:
        shutil.copytree(ROOT / name, tree / name, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _edit(path: Path, old: str, new: str) -> None:
    """Replace the one ``old`` in ``path`` (the anchor must be there exactly once)."""
    text = path.read_text("utf-8")
    assert text.count(old) == 1, f"{path}: anchor {old!r} found {text.count(old)} times"
    path.write_text(text.replace(old, new), "utf-8")


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text("utf-8") + text, "utf-8")


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=300
    )


def _pytest(tree: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    return _run(tree, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *paths)


def _regenerate_docs(tree: Path) -> None:
    # Not asserted: with a step left out it may fail (the registry does not import), and
    # tests/test_generated_docs.py, among the checks run, fails on a table left stale.
    _run(tree, "-m", "tests.generated_docs")


# -- a fault ------------------------------------------------------------------------------------

FAULTS = "replayproxy/_core/faults"


def _fault_http_applier(tree: Path) -> None:
    _append(
        tree / FAULTS / "http_appliers.py",
        "\n\ndef snip(schedule: Schedule, step: Step) -> Schedule:\n"
        "    at = cut(schedule, step)\n"
        "    return transport.end_at(schedule, at, FinishKind.COMPLETE)\n",
    )


def _fault_ws_applier(tree: Path) -> None:
    _append(
        tree / FAULTS / "ws_appliers.py",
        "\n\ndef snip(state: WsState, step: Step) -> WsState:\n"
        "    k, at = cut(state, step)\n"
        '    return _end(state, WsClose(at, WsCloseKind.CLOSE, 1000, "", False), k)\n',
    )


def _fault_definition(tree: Path, ws: str = "ws.snip") -> None:
    _edit(
        tree / FAULTS / "registry.py",
        ")  # fmt: skip\n\nFAULTS",
        "    FaultDef(\n"
        '        "snip", "clean end at the position, wherever it is",\n'
        f'        Phase.ENDING, Outcome.INCOMPLETE, http.snip, {ws}, "snip:events=2",\n'
        "        positioned=True,\n"
        "    ),\n"
        ")  # fmt: skip\n\nFAULTS",
    )


def _fault_docs_row(tree: Path) -> None:
    faults_md = tree / "docs" / "reference" / "faults.md"
    text = faults_md.read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `status` | provider"))
    _edit(
        faults_md,
        row + "\n",
        row + "\n| `snip` | incomplete | position (middle event) | body up to the position, "
        "then a clean end | a test's fault |\n",
    )


def _fault_websocket_row(tree: Path) -> None:
    _edit(
        tree / "docs" / "guides" / "websocket.md",
        "| `linger` | every message, never a close |\n",
        "| `linger` | every message, never a close |\n"
        "| `snip:events=N` | N messages, then a normal 1000 close |\n",
    )


def _fault_tests(tree: Path) -> None:
    (tree / "tests" / "core" / "faults" / "test_snip.py").write_text(
        '"""The snip fault: a clean end at the position."""\n\n'
        "from replayproxy._core.faults import parse, plan\n"
        "from replayproxy._core.schedule.model import FinishKind\n"
        "from tests.faults.builders import interaction\n\n\n"
        "def test_snip_ends_cleanly_at_the_position() -> None:\n"
        '    """The stream ends cleanly, before the recorded body is all sent."""\n'
        '    it = interaction("anthropic-text")\n'
        '    got = plan(it, 0, faults=[parse("snip:events=2")])\n'
        "    assert got.finish.kind is FinishKind.COMPLETE\n"
        "    assert len(got.body) < len(it.response.body)\n",
        "utf-8",
    )


FAULT_STEPS: dict[str, Step] = {
    "http applier": _fault_http_applier,
    "websocket applier": _fault_ws_applier,
    "definition": _fault_definition,
    "docs row": _fault_docs_row,
    "websocket docs row": _fault_websocket_row,
    "generated docs": _regenerate_docs,
    "tests": _fault_tests,
}
"""The steps of "A fault", in order; each one a function editing the copy."""

FAULT_CHECKS = (
    "tests/core/faults/test_registry.py",
    "tests/core/faults/test_fault_names.py",
    "tests/core/matrix/test_cells.py",
    "tests/test_generated_docs.py",
)
"""The checks that guard the fault registry."""

FAULT_CAUGHT_BY = {
    "http applier": (FAULT_CHECKS[0], "has no attribute 'snip'"),  # the registry won't import
    "websocket applier": (FAULT_CHECKS[0], "test_every_definition_is_complete[snip]"),
    "docs row": (FAULT_CHECKS[1], "test_the_docs_have_a_row_for_every_fault_with_its_outcome"),
    "websocket docs row": (FAULT_CHECKS[1], "test_the_websocket_docs_name_every_fault"),
    "generated docs": (FAULT_CHECKS[3], "test_each_generated_block_is_its_rendering[faults]"),
}
"""Which check fails when a step is left out, and what its output then names (the definition
is the fault itself, and a test of the fault's own behaviour is for its author to write)."""


def _add(tree: Path, steps: dict[str, Step], leave_out: str = "") -> None:
    for name, step in steps.items():
        if name != leave_out:
            step(tree)


def _without_ws(tree: Path) -> None:
    """The definition of a contributor who left the WebSocket applier out: ``ws=None``,
    without the reason the registry asks for."""
    _fault_definition(tree, ws="None")


def test_a_fault_added_at_the_listed_places_passes_every_check(tmp_path: Path) -> None:
    """The copy with a new fault (appliers, definition, docs rows, regenerated tables, its test)
    passes the registry, name, matrix and docs checks, and the fault joins the ``cuts`` set at
    the four default positions with no edit of the matrix."""
    tree = _copy(tmp_path)
    _add(tree, FAULT_STEPS)
    done = _pytest(tree, *FAULT_CHECKS, "tests/core/faults/test_snip.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    shown = _run(
        tree,
        "-c",
        "import replayproxy; from replayproxy._core.matrix import SETS; "
        "print(replayproxy.__file__); print([c.spec for c in SETS['cuts'] if c.name == 'snip'])",
    )
    where, cells = shown.stdout.splitlines()
    assert where.startswith(str(tree))  # the copy was tested, not this checkout
    assert cells == str([f"snip:events={w}" for w in ("0", "1", "middle", "before-terminal")])


@pytest.mark.parametrize("left_out", list(FAULT_CAUGHT_BY))
def test_a_fault_missing_a_listed_step_fails_a_check(tmp_path: Path, left_out: str) -> None:
    """Leaving out one listed step makes the check that guards it fail."""
    tree = _copy(tmp_path)
    steps = dict(FAULT_STEPS)
    if left_out == "websocket applier":  # else its definition names ws.snip, which is absent
        steps["definition"] = _without_ws
    _add(tree, steps, leave_out=left_out)
    check, named = FAULT_CAUGHT_BY[left_out]
    done = _pytest(tree, check)
    assert done.returncode != 0, f"leaving out {left_out!r} went unnoticed:\n{done.stdout[-2000:]}"
    assert named in done.stdout + done.stderr, done.stdout[-3000:]


# -- an option ----------------------------------------------------------------------------------

REPLAY = "replayproxy/_core/replay"


def _option_row(tree: Path) -> None:
    _edit(
        tree / REPLAY / "options.py",
        '    OptionDef(\n        "redact_header",',
        "    OptionDef(\n"
        '        "idle_limit",\n'
        "        Kind.NUMBER,\n"
        "        60.0,\n"
        '        "Seconds a kept-alive connection may stay idle.",\n'
        '        metavar="SECONDS",\n'
        "        parse=parse.seconds,\n"
        '        setting="connections.idle_limit",\n'
        '        example="3",\n'
        "    ),\n"
        '    OptionDef(\n        "redact_header",',
    )


def _option_setting(tree: Path) -> None:
    _edit(
        tree / REPLAY / "options.py",
        "    max_connections: int = 1000\n",
        "    max_connections: int = 1000\n    idle_limit: float = 60.0\n",
    )


def _option_keywords(tree: Path) -> None:
    _edit(
        tree / REPLAY / "option_keywords.py",
        "    max_connections: int\n",
        "    max_connections: int\n    idle_limit: float\n",
    )


OPTION_STEPS: dict[str, Step] = {
    "row": _option_row,
    "setting": _option_setting,
    "typed keywords": _option_keywords,
    "generated docs": _regenerate_docs,
}
"""The steps of "An option", in order."""

OPTION_CHECKS = (
    "tests/core/replay/test_options.py",
    "tests/integration/test_option_fronts.py",
    "tests/test_generated_docs.py",
)

OPTION_CAUGHT_BY = {
    "setting": (OPTION_CHECKS[0], "test_each_row_sets_its_own_field_of_the_settings"),
    "typed keywords": (OPTION_CHECKS[1], "test_the_typed_keywords_are_the_tables"),
    "generated docs": (OPTION_CHECKS[2], "test_each_generated_block_is_its_rendering[pytest"),
}
"""Which check fails when a step is left out, and what its output then names."""


def test_an_option_added_at_the_listed_places_passes_every_check(tmp_path: Path) -> None:
    """The copy with a new replay option (row, settings field, typed keywords, regenerated
    tables) passes the option and front-end checks, and `replayproxy matrix` takes its flag."""
    tree = _copy(tmp_path)
    _add(tree, OPTION_STEPS)
    done = _pytest(tree, *OPTION_CHECKS)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    shown = _run(tree, "-c", "from replayproxy._cli import main; main()", "matrix", "--help")
    assert "--idle-limit SECONDS" in shown.stdout


@pytest.mark.parametrize("left_out", list(OPTION_CAUGHT_BY))
def test_an_option_missing_a_listed_step_fails_a_check(tmp_path: Path, left_out: str) -> None:
    """Leaving out one listed step makes the check that guards it fail."""
    tree = _copy(tmp_path)
    _add(tree, OPTION_STEPS, leave_out=left_out)
    check, named = OPTION_CAUGHT_BY[left_out]
    done = _pytest(tree, check)
    assert done.returncode != 0, f"leaving out {left_out!r} went unnoticed:\n{done.stdout[-2000:]}"
    assert named in done.stdout + done.stderr, done.stdout[-3000:]
