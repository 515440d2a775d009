"""Fault names are listed in one place: the registry. The package source is scanned for lists.

A name in a docstring, an error message or a help text is fine; a name used as data is not:
string literals of fault names in tuples, lists, sets or dict keys, compared with a ``name``
(``spec.name == "split"``, ``name in (...)``) or matched by ``case``. Fault names are common
words ("error", "status", "close"), so in modules that do not use the faults package only
collections of two names or more count, and a ``Literal[...]`` type is a type, not a listing.
``docs/reference/faults.md`` has a row for every fault. The examples of the scan take their
names from the registry too: no test lists fault names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import replayproxy
from replayproxy._core.faults import FAULTS, definitions
from tests.generated_docs import without_blocks

PACKAGE = Path(replayproxy.__file__).resolve().parent
ROOT = PACKAGE.parent
REGISTRY = PACKAGE / "_core" / "faults" / "registry.py"
A, B = sorted(FAULTS)[:2]
"""Two registered names, for the examples of the scan."""


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
    """The ``__all__`` lists (names of functions, ``appliers.drop``, not of faults) and the
    ``Literal[...]`` types (a finish kind ``"reset"`` is a word of its own type)."""
    exports = {
        id(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    }
    literals = {
        id(node.slice)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name | ast.Attribute)
        and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "Literal"
    }
    return exports | literals


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
            if len(names) < 2:
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
        (f'_EDITS = ("{A}", "{B}")', True, [(1, A), (1, B)]),
        (f'if spec.name == "{A}":\n    pass', True, [(1, A)]),
        (f'if spec.name in ("{A}", "{B}"):\n    pass', True, [(1, A), (1, B)]),
        (f'_FINISH = {{"{A}": 1, "{B}": 2}}', True, [(1, A), (1, B)]),
        (f'match name:\n    case "{A}":\n        pass', True, [(2, A)]),
        (f"from replayproxy._core.faults import parse\nx = frozenset({{'{A}', '{B}'}})", False,
         [(2, A), (2, B)]),
        (f'_SEEDED = frozenset({{"{A}", "{B}"}})', False, [(1, A), (1, B)]),
        # A type of its own whose words are also fault names: not a listing.
        (f'Finish = Literal["complete", "{A}", "{B}"]', False, []),
        (f'Finish = typing.Literal["{A}", "{B}"]', True, []),
        (f'if kind == "{A}":\n    pass', False, []),
        (f'if v.severity == "{A}":\n    pass', True, []),
        (f'__all__ = ["{A}", "{B}"]', True, []),
        (f'if name != "{A}":\n    pass', True, [(1, A)]),
        # Docstrings and messages may name faults.
        (f'"""The {A} and {B} faults."""\nraise E("use {A}:x=1")', True, []),
        (f'ONE = ("{A}",)', True, []),
    ],
)  # fmt: skip
def test_the_scan_finds_listings_and_only_them(
    source: str, uses_faults: bool, expected: list[tuple[int, str]]
) -> None:
    """Tuples, sets, dict keys, comparisons and case patterns of fault names are found; docs,
    messages, single names and ordinary words elsewhere are not."""
    assert listed(source, uses_faults=uses_faults) == expected


def _doc_rows() -> dict[str, list[str]]:
    text = without_blocks((ROOT / "docs" / "reference" / "faults.md").read_text("utf-8"))
    catalogue = text.split("\n## Catalogue\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in catalogue.splitlines():
        m = re.match(r"^\| `([a-z-]+)` \|", line)
        if m:
            rows[m.group(1)] = [cell.strip() for cell in line.strip("|").split(" | ")]
    return rows


def test_the_docs_have_a_row_for_every_fault_with_its_outcome() -> None:
    """docs/reference/faults.md's catalogue has one row per registered fault, in the registry's
    order, whose outcome column is the definition's outcome class."""
    rows = _doc_rows()
    assert list(rows) == list(FAULTS)
    assert {name: row[1] for name, row in rows.items()} == {
        name: d.outcome.value for name, d in FAULTS.items()
    }


def test_the_websocket_docs_name_every_fault_the_way_it_applies() -> None:
    """docs/guides/websocket.md's "Faults" section names every fault: in its table when the fault
    has a WebSocket applier, among the refused ones otherwise."""
    text = (ROOT / "docs" / "guides" / "websocket.md").read_text("utf-8")
    section = text.split("\n## Faults\n", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    prose = "\n".join(line for line in section.splitlines() if not line.startswith("|"))
    for d in definitions():
        named = re.compile(rf"`{re.escape(d.name)}[`:\[]")
        where = table if d.ws is not None else prose
        assert named.search(where), f"docs/guides/websocket.md, Faults: {d.name!r} is not named"
