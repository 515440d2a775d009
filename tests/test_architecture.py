"""The layering and size rules of docs/explanations/architecture.md, checked against every module of
the package.

The import rules are read from the table in docs/explanations/architecture.md, so the page and this
test cannot disagree: a rule changes in one place.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import Counter
from pathlib import Path

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


CORE = PACKAGE / "_core"


def _core_order(doc: str) -> list[str]:
    """Core's subpackages, lowest first, from the Core order table (its numbers must count 1, 2,
    3, ... down the table, so a row cannot be misplaced silently)."""
    section = doc.split("### Core order", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            (name,) = re.findall(r"`(\w+)`", cells[1])
            rows.append((int(cells[0]), name))
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1)), rows
    return [name for _, name in rows]


ORDER = _core_order(DOC.read_text())


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolved_imports(path: Path, source: str) -> list[tuple[int, str, str | None]]:
    """(line, absolute module, imported name) for every import of ``source`` as if it were
    ``path``: relative imports resolved, imports inside functions and ``if TYPE_CHECKING:``
    included."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found += [(node.lineno, module, a.name) for a in node.names]
    return sorted(found, key=lambda f: f[0])


def _core_subpackage(module: str, name: str | None) -> str | None:
    """The core subpackage an import of ``module`` (``from module import name``) reaches."""
    parts = module.split(".")
    if parts[:2] != ["replayproxy", "_core"]:
        return None
    if len(parts) > 2:
        return parts[2]
    if name is not None and (CORE / name / "__init__.py").exists():
        return name
    return None  # the core package itself: only its docstring


def core_order_violations(path: Path, order: list[str], source: str | None = None) -> list[str]:
    """Every import of ``path`` (or of ``source``, as if it were that file) into another core
    subpackage listed after its own in ``order`` (or not listed), as ``file:line: why``."""
    inside = path.relative_to(CORE).parts
    if len(inside) < 2:
        return []
    here = inside[0]
    rank = {name: i for i, name in enumerate(order)}
    where = path.relative_to(ROOT)
    out = []
    text = path.read_text() if source is None else source
    for line, module, name in _resolved_imports(path, text):
        target = _core_subpackage(module, name)
        if target is None or target == here:
            continue
        if rank.get(target, len(order)) > rank.get(here, -1):
            out.append(f"{where}:{line}: core/{here} imports core/{target}, listed after it")
    return out


def test_the_core_order_lists_every_subpackage_once() -> None:
    """Every subpackage of core/ has one row in the Core order, and every row is a subpackage."""
    subpackages = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
    assert sorted(ORDER) == subpackages


def test_every_core_import_goes_down_the_core_order() -> None:
    """No core subpackage imports one listed after it in the Core order (even inside a
    function): the order has no cycle, so neither do the imports between subpackages."""
    core = [p for p in MODULES if CORE in p.parents]
    assert [v for p in core for v in core_order_violations(p, ORDER)] == []


def test_the_checker_catches_an_import_up_the_core_order() -> None:
    """An import from a subpackage into one listed after it is reported with its line,
    in every spelling (absolute, ``from replayproxy._core import x``, relative, in a function);
    imports within the subpackage and into those above it are not."""
    source = (
        "from replayproxy._core.cassette.model import Interaction\n"
        "from replayproxy._core.faults import FaultSpec\n"
        "from replayproxy._core import tools\n"
        "def f():\n"
        "    import replayproxy._core.replay.options\n"
        "from ..matching import matcher\n"
        "from . import spec\n"
        "from replayproxy._core.schedule.model import Schedule\n"
    )
    probe = CORE / "faults" / "probe.py"
    assert core_order_violations(probe, ORDER, source) == [
        "replayproxy/_core/faults/probe.py:3: core/faults imports core/tools, listed after it",
        "replayproxy/_core/faults/probe.py:5: core/faults imports core/replay, listed after it",
        "replayproxy/_core/faults/probe.py:6: core/faults imports core/matching, listed after it",
    ]
    # The same imports from the top of the order are all allowed.
    assert core_order_violations(CORE / ORDER[-1] / "probe.py", ORDER, source) == []


def _module_graph(
    sources: dict[str, tuple[Path, str]],
) -> dict[str, set[str]]:
    """module -> the modules among ``sources`` it imports (``from package import module``
    names the module; any other name of a package, its ``__init__``)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, (path, source) in sources.items():
        for _, module, imported in _resolved_imports(path, source):
            if imported is not None and f"{module}.{imported}" in sources:
                graph[name].add(f"{module}.{imported}")
            elif module in sources:
                graph[name].add(module)
    return graph


def import_cycles(sources: dict[str, tuple[Path, str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's
    strongly connected components of more than one module, or a module importing itself)."""
    graph = _module_graph(sources)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1 or node in graph[node]:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def _sources(folder: Path) -> dict[str, tuple[Path, str]]:
    return {_module_name(p): (p, p.read_text()) for p in MODULES if p.parent == folder}


def test_no_import_cycle_between_the_modules_of_testing() -> None:
    """No two modules of replayproxy/testing import each other, directly or through others,
    counting imports inside functions and under ``TYPE_CHECKING``: each imports plainly."""
    assert import_cycles(_sources(PACKAGE / "testing")) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_import() -> None:
    """Two modules that import each other (one inside a function) are one cycle; a module that
    only imports them is not part of it."""
    folder = PACKAGE / "testing"
    sources = {
        "replayproxy.testing._a": (folder / "_a.py", "from replayproxy.testing._b import x\n"),
        "replayproxy.testing._b": (
            folder / "_b.py",
            "def f():\n    from replayproxy.testing import _a\n",
        ),
        "replayproxy.testing._c": (folder / "_c.py", "from replayproxy.testing._a import y\n"),
    }
    assert import_cycles(sources) == [["replayproxy.testing._a", "replayproxy.testing._b"]]
    del sources["replayproxy.testing._b"]
    assert import_cycles(sources) == []


_IMPORTERS = {"import_module", "__import__"}


def imports_by_name(source: str) -> list[int]:
    """The lines of ``source`` that import one of our modules from a string
    (``importlib.import_module("replayproxy...")``, an f-string or a relative name), which
    would hide the import from the checks above."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = node.args[0]
        if isinstance(first, ast.JoinedStr) and first.values:
            first = first.values[0]
        if (
            called in _IMPORTERS
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and (first.value.startswith(("replayproxy", ".")))
        ):
            lines.append(node.lineno)
    return lines


def test_no_module_imports_ours_by_name() -> None:
    """Every import of our own modules is an import statement the checks above can see."""
    found = {
        str(p.relative_to(ROOT)): lines
        for p in MODULES
        if (lines := imports_by_name(p.read_text()))
    }
    assert found == {}


def test_the_checker_catches_an_import_by_name() -> None:
    """``import_module`` and ``__import__`` of our modules (literal or f-string, absolute or
    relative) are reported by line; of a third-party module they are not."""
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        'a = importlib.import_module("replayproxy.testing._snapshot")\n'
        'b = import_module(f"replayproxy._cli.{name}")\n'
        'c = import_module("._snapshot", "replayproxy.testing")\n'
        'd = __import__("replayproxy")\n'
        'e = import_module("zstandard")\n'
        "f = import_module(name)\n"
    )
    assert imports_by_name(source) == [3, 4, 5, 6]


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
