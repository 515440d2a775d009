"""Fault names are listed in one place: the registry. The package source is scanned for lists.

A name in a docstring, an error message or a help text is fine; a name used as data is not:
string literals of fault names in tuples, lists, sets or dict keys, compared with a ``name``
(``spec.name == "split"``, ``name in (...)``) or matched by ``case``. Fault names are common
words ("error", "status", "close"), so modules that do not use the faults package are only
checked for collections holding a name that is nothing but a fault ("ttfb", "coalesce", ...).
``docs/guides/faults.md`` has a row for every fault.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import replayproxy
from replayproxy._core.faults import FAULTS

PACKAGE = Path(replayproxy.__file__).resolve().parent
ROOT = PACKAGE.parent
REGISTRY = PACKAGE / "core" / "faults" / "registry.py"
ORDINARY = frozenset({"close", "drop", "error", "hang", "reset", "split", "status"})
"""Fault names that are also ordinary words of the code (finish kinds, severities, ...)."""


def _uses_faults(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("replayproxy._core.faults"):
                return True
            if node.module == "replayproxy._core" and any(a.name == "faults" for a in node.names):
                return True
    return False


def _names_in(node: ast.AST) -> list[str]:
    """The fault names among the string literals directly in ``node`` (a collection or one)."""
    if isinstance(node, ast.Constant):
        items: list[ast.expr | None] = [node]
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    else:
        return []
    return [
        i.value
        for i in items
        if isinstance(i, ast.Constant) and isinstance(i.value, str) and i.value in FAULTS
    ]


def _is_a_name(node: ast.expr) -> bool:
    """``spec.name``, ``name``: what a fault name is compared with."""
    return (isinstance(node, ast.Attribute) and node.attr == "name") or (
        isinstance(node, ast.Name) and node.id == "name"
    )


def _exports(tree: ast.Module) -> set[int]:
    """The ``__all__`` lists: names of functions (``appliers.drop``), not of faults."""
    return {
        id(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    }


def listed(source: str, *, uses_faults: bool) -> list[tuple[int, str]]:
    """``(line, name)`` for every fault name ``source`` uses as data."""
    tree = ast.parse(source)
    uses_faults = uses_faults or _uses_faults(tree)
    exports = _exports(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if id(node) in exports:
            continue
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            names = _names_in(node)
            if len(names) < 2 or not (uses_faults or set(names) - ORDINARY):
                names = []
        elif isinstance(node, ast.Compare) and uses_faults:
            sides = (node.left, *node.comparators)
            if any(_is_a_name(side) for side in sides):
                names = [n for side in sides for n in _names_in(side)]
        elif isinstance(node, ast.MatchValue) and uses_faults:
            names = _names_in(node.value)
        found.extend((getattr(node, "lineno", 0), n) for n in names)
    return sorted(set(found))  # a comparison with a tuple is found twice


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != REGISTRY)


def test_no_module_but_the_registry_lists_fault_names() -> None:
    """No source file of the package uses a fault name as data outside the registry."""
    found = []
    for path in _sources():
        in_faults = path.parent == REGISTRY.parent
        for line, name in listed(path.read_text("utf-8"), uses_faults=in_faults):
            found.append(f"{path.relative_to(ROOT)}:{line}: {name!r}")
    assert found == [], "list fault names only in core/faults/registry.py:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "uses_faults", "expected"),
    [
        ('_EDITS = ("drop", "duplicate")', True, [(1, "drop"), (1, "duplicate")]),
        ('if spec.name == "status":\n    pass', True, [(1, "status")]),
        ('if spec.name in ("truncate", "error"):\n    pass', True, [(1, "error"), (1, "truncate")]),
        ('_FINISH = {"reset": 1, "hang": 2}', True, [(1, "hang"), (1, "reset")]),
        ('match name:\n    case "linger":\n        pass', True, [(2, "linger")]),
        ("from replayproxy._core.faults import parse\nx = frozenset({'jitter', 'split'})", False,
         [(2, "jitter"), (2, "split")]),
        ('_SEEDED = frozenset({"jitter", "split"})', False, [(1, "jitter"), (1, "split")]),
        # Ordinary words, in a module that has nothing to do with faults: not a listing.
        ('Finish = Literal["complete", "reset", "close", "hang"]', False, []),
        ('if kind == "error":\n    pass', False, []),
        ('if v.severity == "error":\n    pass', True, []),
        ('__all__ = ["drop", "duplicate", "ttfb"]', True, []),
        ('if name != "split":\n    pass', True, [(1, "split")]),
        # Docstrings and messages may name faults.
        ('"""The status and ttfb faults."""\nraise E("use split:bytes=K")', True, []),
        ('ONE = ("ttfb",)', True, []),
    ],
)  # fmt: skip
def test_the_scan_finds_listings_and_only_them(
    source: str, uses_faults: bool, expected: list[tuple[int, str]]
) -> None:
    """Tuples, sets, dict keys, comparisons and case patterns of fault names are found; docs,
    messages, single names and ordinary words elsewhere are not."""
    assert listed(source, uses_faults=uses_faults) == expected


def _doc_rows() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "reference" / "faults.md").read_text("utf-8")
    catalogue = text.split("\n## Catalogue\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in catalogue.splitlines():
        m = re.match(r"^\| `([a-z-]+)` \|", line)
        if m:
            rows[m.group(1)] = [cell.strip() for cell in line.strip("|").split(" | ")]
    return rows


def test_the_docs_have_a_row_for_every_fault_with_its_outcome() -> None:
    """docs/guides/faults.md's catalogue has one row per registered fault, in the registry's order,
    whose outcome column is the definition's outcome class."""
    rows = _doc_rows()
    assert list(rows) == list(FAULTS)
    assert {name: row[1] for name, row in rows.items()} == {
        name: d.outcome.value for name, d in FAULTS.items()
    }
