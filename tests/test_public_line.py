"""The docs and the examples import only the public API.

Every `import` / `from ... import` of replayproxy in the README's and docs/'s Python code blocks
and in `examples/**/*.py` names a public module (:data:`PUBLIC`) and no underscore name, and no
code there reaches into a private module by attribute (`replayproxy._engine...`). What a reader
copies from the docs must keep working when the private modules change.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = frozenset(
    {
        "replayproxy",
        "replayproxy.testing",
        "replayproxy.testing.strategies",
        "replayproxy.testing.simulator",
        "replayproxy.checking",
        "replayproxy.pytest_plugin.plugin",
    }
)
_PRIVATE_PATH = re.compile(r"\breplayproxy(?:\.\w+)*\._\w+")
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+(\S+)\s+import\s+(.+)|import\s+(.+))$")


def _code_blocks(markdown: str) -> Iterator[tuple[int, str]]:
    """The Python code blocks of a page, with the line each starts on."""
    for m in re.finditer(r"^```(?:python|py)\n(.*?)^```", markdown, re.S | re.M):
        yield markdown.count("\n", 0, m.start()) + 2, m[1]


def _imports(code: str) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names) of each import in ``code``; by lines when it is not Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        for n, line in enumerate(code.splitlines(), 1):
            m = _IMPORT_LINE.match(line)
            if m and m[1]:
                yield n, m[1], [x.strip().split(" as ")[0] for x in m[2].strip("()").split(",")]
            elif m:
                for module in m[3].split(","):
                    yield n, module.strip().split(" as ")[0], []
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [alias.name for alias in node.names]


def violations(code: str) -> Iterator[str]:
    """Each private name the code imports or reaches, as ``line: what``."""
    flagged = set()
    for line, module, names in _imports(code):
        if module != "replayproxy" and not module.startswith("replayproxy."):
            continue
        if module not in PUBLIC:
            # `from replayproxy.pytest_plugin import plugin` names a public module
            if not names or not all(f"{module}.{n}" in PUBLIC for n in names):
                flagged.add(line)
                yield f"{line}: imports {module}, which is not public"
            continue
        for name in names:
            if name.startswith("_"):
                flagged.add(line)
                yield f"{line}: imports the private name {module}.{name}"
            elif f"{module}.{name}" not in PUBLIC and name in _submodules(module):
                flagged.add(line)
                yield f"{line}: imports the module {module}.{name}, which is not public"
    for n, text in enumerate(code.splitlines(), 1):
        if n not in flagged:
            yield from (f"{n}: names {m[0]}" for m in _PRIVATE_PATH.finditer(text))


def _submodules(module: str) -> set[str]:
    """The names of the modules and packages directly inside ``module``."""
    folder = ROOT.joinpath(*module.split("."))
    if not folder.is_dir():
        return set()
    return {p.stem for p in folder.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


def _sources() -> list[tuple[str, str]]:
    """(where, code) for every Python code block of the docs and every example file."""
    out = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for start, code in _code_blocks(page.read_text("utf-8")):
            out.append((f"{page.relative_to(ROOT)}:{start}", code))
    for path in sorted((ROOT / "examples").rglob("*.py")):
        out.append((str(path.relative_to(ROOT)), path.read_text("utf-8")))
    return out


@pytest.mark.parametrize(("where", "code"), _sources(), ids=[w for w, _ in _sources()])
def test_docs_and_examples_import_only_public_names(where: str, code: str) -> None:
    """The code block or example file imports public modules and names only."""
    assert list(violations(code)) == []


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("from replayproxy import ReplayServer, use_cassette", 0),
        ("import replayproxy\nfrom replayproxy.testing import capture_url", 0),
        ("from replayproxy._engine.server import ReplayServer", 1),
        ("from replayproxy.testing._capture_assert import upstream_incomplete", 1),
        ("from replayproxy.testing import _capture_assert", 1),
        ("from replayproxy import _store as store", 1),
        ("x = replayproxy._core.faults.parse('reset')", 1),
        ("from replayproxy.pytest_plugin import plugin", 0),
        ("from replayproxy.pytest_plugin.plugin import replayproxy", 0),
        ("from replayproxy import store\n...", 0),  # not a module any more: a name check's job
        ("with ReplayServer(x) as s:\n    ...\nfrom replayproxy._core import check", 1),
        ("import replayproxy._cli", 1),
        ("replayproxy.url + '/v1'  # the fixture", 0),
    ],
)
def test_the_scan_finds_private_imports(code: str, found: int) -> None:
    """Imports of private modules or names, and private dotted paths, are each found once."""
    assert len(list(violations(code))) == found, list(violations(code))
