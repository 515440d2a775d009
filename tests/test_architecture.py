"""The layering and size rules of docs/explanations/architecture.md, checked against every module of
the package.

The import rules are read from the table in docs/explanations/architecture.md, so the page and this
test cannot disagree: a rule changes in one place.
"""

from __future__ import annotations

import ast
import warnings
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "replayproxy"
DOC = ROOT / "docs" / "explanations" / "architecture.md"

MAX_LINES = 400
MAX_MODULES = 15


def _rules(doc: str) -> dict[str, tuple[set[str], set[str]]]:
    """layer -> (our layers it may import, modules it may not), from the Import rules table."""
    section = doc.split("## Import rules", 1)[1].split("\n## ", 1)[0]
    rules = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        names = [set(re.findall(r"`([\w.]+)`", c)) for c in cells]
        (layer,) = names[0]
        rules[layer] = (names[1], names[2])
    return rules


RULES = _rules(DOC.read_text())
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "payloads" not in p.parts)


def _layer(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py")


def _our_layer(module: str, name: str | None = None) -> str:
    """The layer an absolute import of ``module`` (``from module import name``) reaches."""
    parts = module.split(".")
    if len(parts) > 1:
        return parts[1]
    if name is not None and (
        (PACKAGE / f"{name}.py").exists() or (PACKAGE / name / "__init__.py").exists()
    ):
        return name
    return "__init__"


def _imports(source: str) -> list[tuple[int, str, str | None]]:
    """(line, module, imported name) for every absolute import, including those in functions."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module, a.name) for a in node.names]
    return sorted(found, key=lambda f: f[0])


def violations(
    path: Path, rules: dict[str, tuple[set[str], set[str]]], source: str | None = None
) -> list[str]:
    """Every import of ``path`` (or of ``source``, as if it were that file) that its layer's rule
    does not allow, as ``file:line: why``."""
    layer = _layer(path)
    allowed, forbidden = rules[layer]
    where = path.relative_to(ROOT)
    out = []
    for line, module, name in _imports(path.read_text() if source is None else source):
        top = module.split(".")[0]
        if top == "replayproxy":
            target = _our_layer(module, name)
            if target != layer and target not in allowed:
                out.append(f"{where}:{line}: {layer} imports {target} ({module})")
        elif top in forbidden:
            out.append(f"{where}:{line}: {layer} imports {top}")
    return out


def test_the_table_has_a_rule_for_every_layer() -> None:
    """Every top-level module and package of replayproxy has a row in the import rules."""
    assert {_layer(p) for p in MODULES} - set(RULES) == set()
    assert "mitmproxy" not in RULES["_core"][0]


def test_every_import_follows_its_layers_rule() -> None:
    """No module imports a layer above it, or a module its layer may not use (the core no
    I/O or clock, the engine no mitmproxy, only mitm/ imports mitmproxy)."""
    assert [v for p in MODULES for v in violations(p, RULES)] == []


def test_only_mitm_may_import_mitmproxy() -> None:
    """Every layer but mitm/ forbids mitmproxy in the table, so the rule above enforces it."""
    assert [layer for layer, (_, no) in RULES.items() if "mitmproxy" not in no] == [
        "_mitm",
        "__main__",
    ]


def test_the_checker_catches_a_layer_violation() -> None:
    """A core module that imports the engine, asyncio or mitmproxy (even inside a function) is
    reported, with its line; the same imports from mitm/ are not."""
    source = (
        "import asyncio\n"
        "from replayproxy._engine import session\n"
        "def f():\n"
        "    import mitmproxy.http\n"
        "from replayproxy import _store\n"
    )
    core = PACKAGE / "_core" / "probe.py"
    assert violations(core, RULES, source) == [
        "replayproxy/_core/probe.py:1: _core imports asyncio",
        "replayproxy/_core/probe.py:2: _core imports _engine (replayproxy._engine)",
        "replayproxy/_core/probe.py:4: _core imports mitmproxy",
        "replayproxy/_core/probe.py:5: _core imports _store (replayproxy)",
    ]
    assert violations(PACKAGE / "_mitm" / "probe.py", RULES, source) == []


def test_size_guides_are_printed_as_warnings() -> None:
    """Modules over 400 lines and folders over 15 modules are reported as warnings, not failures:
    a size is a hint to look at a module's job, never a reason to split it by line count."""
    long = [
        f"{p.relative_to(PACKAGE)} ({n} lines)"
        for p in MODULES
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    per_folder = Counter(p.parent.relative_to(ROOT) for p in MODULES if p.name != "__init__.py")
    crowded = [f"{d} ({n} modules)" for d, n in sorted(per_folder.items()) if n > MAX_MODULES]
    for what in long + crowded:
        warnings.warn(f"size guide: {what}", stacklevel=1)
    assert all(" lines)" in w for w in long)


def test_one_name_for_one_job() -> None:
    """No two modules share the names that meant different jobs in neighbouring layers
    (framing, recording, session)."""
    names = Counter(p.stem for p in MODULES)
    assert {n: names[n] for n in ("framing", "recording", "session") if names[n] > 1} == {}


# Built from pieces so this file does not match itself.
_OUTSIDE = re.compile(
    "|".join(
        [
            "/work" + "/",
            "mitmproxy" + "-notes",
            "shared/" + "(?:reference|provider-streams)",
            "faults" + "-in-the-wild",
            "wire-formats" + "-and-peers",
        ]
    )
)
_CITES_INTERNALS = re.compile(r"mitmproxy-internals(?:\.md)?\s+§(\d+)")


def _project_texts() -> list[Path]:
    """The project's own sources and documents (the changelog records history as it was)."""
    out = []
    for folder in ("replayproxy", "tests", "docs", "scripts", "benchmarks"):
        for p in (ROOT / folder).rglob("*"):
            if p.is_file() and p.suffix in {".py", ".md", ".txt", ".toml", ".mjs"}:
                out.append(p)
    return [*out, ROOT / "README.md", ROOT / "pyproject.toml"]


def test_nothing_cites_a_file_outside_the_repository() -> None:
    """Comments and docs cite pages a reader of the project can open (docs/...), never notes
    or paths outside the repository."""
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in _project_texts()
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if _OUTSIDE.search(line)
    ]
    assert found == []


def test_every_citation_of_the_mitmproxy_page_names_one_of_its_sections() -> None:
    """``docs/contributing/mitmproxy-internals.md §N`` in code and docs points at a section that
    exists."""
    page = (ROOT / "docs" / "contributing" / "mitmproxy-internals.md").read_text()
    sections = set(re.findall(r"^## §(\d+) ", page, re.M))
    cited = {
        (str(p.relative_to(ROOT)), n)
        for p in _project_texts()
        for n in _CITES_INTERNALS.findall(p.read_text(errors="replace"))
    }
    assert cited, "no citation found: the pattern is stale"
    assert {c for c in cited if c[1] not in sections} == set()
