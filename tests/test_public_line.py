"""The public line: which modules are public, that the API reference page is generated from
them, and that the README, the docs and the examples import only public names."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import replayproxy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import api_reference  # noqa: E402

PUBLIC_MODULES = {
    "replayproxy",
    "replayproxy.checking",
    "replayproxy.testing",
    "replayproxy.testing.simulator",
    "replayproxy.testing.strategies",
    "replayproxy.pytest_plugin",
    "replayproxy.pytest_plugin.plugin",
}
"""The modules users may import: every other module path has a part starting with ``_``."""

_CODE_BLOCK = re.compile(r"^```(?:python|py)\n(.*?)^```", re.S | re.M)
_PRIVATE_PATH = re.compile(r"\breplayproxy(?:\.\w+)*\._\w+")


def _module_paths() -> list[str]:
    paths = ["replayproxy"]
    for info in pkgutil.walk_packages(replayproxy.__path__, "replayproxy."):
        paths.append(info.name)
    return paths


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def test_only_the_public_line_has_module_paths_without_an_underscore() -> None:
    """Every importable module but the public ones has a part starting with ``_`` (at most 30
    public paths; there are 7)."""
    public = {p for p in _module_paths() if _public(p)}
    assert public == PUBLIC_MODULES
    assert len(public) <= 30


def test_the_api_reference_page_is_generated_from_the_code() -> None:
    """docs/reference/api.md is exactly what scripts/api_reference.py writes (run it after
    changing a public name, signature or docstring)."""
    assert api_reference.PAGE.read_text() == api_reference.render()


def test_the_reference_lists_every_public_name() -> None:
    """Each name in the ``__all__`` of a public module has its heading on the page."""
    page = api_reference.PAGE.read_text()
    for module_name, module in api_reference.public_modules().items():
        missing = [n for n in module.__all__ if f"### `{module_name}.{n}`" not in page]
        assert missing == [], module_name


def imports_of(source: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` for every import of replayproxy in ``source`` (names empty for a
    plain ``import``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names if a.name.split(".")[0] == "replayproxy"]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "replayproxy"
        ):
            found.append((str(node.module), tuple(a.name for a in node.names)))
    return found


def private_imports(source: str) -> list[str]:
    """The imports in ``source`` that reach past the public line, as ``module.name``."""
    bad = []
    for module, names in imports_of(source):
        if module not in PUBLIC_MODULES:
            bad.append(module)
            continue
        exported = set(getattr(importlib.import_module(module), "__all__", ()))
        for name in names:
            if name not in exported and f"{module}.{name}" not in PUBLIC_MODULES:
                bad.append(f"{module}.{name}")
    return bad


def _doc_sources() -> list[tuple[str, str]]:
    """(where, python source) for every python block in the README and docs, and every
    example file."""
    out = []
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for i, block in enumerate(_CODE_BLOCK.findall(page.read_text())):
            out.append((f"{page.relative_to(ROOT)} block {i + 1}", block))
    for example in sorted((ROOT / "examples").rglob("*.py")):
        out.append((str(example.relative_to(ROOT)), example.read_text()))
    return out


def test_docs_and_examples_import_only_public_names() -> None:
    """No README or docs code block and no example imports a private module or a name its
    public module does not export, or reaches one by attribute (``replayproxy._engine...``)."""
    bad = {}
    for where, source in _doc_sources():
        try:
            found = private_imports(source)
        except SyntaxError:  # a fragment (an elided body): its import lines still count
            lines = [ln for ln in source.splitlines() if re.match(r"\s*(from|import) ", ln)]
            found = private_imports("\n".join(line.strip() for line in lines))
        found += [m for m in _PRIVATE_PATH.findall(source) if m not in found]
        if found:
            bad[where] = found
    assert bad == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from replayproxy._core.cassette.model import Frame",
            ["replayproxy._core.cassette.model"],
        ),
        ("from replayproxy.testing import _builders", ["replayproxy.testing._builders"]),
        ("import replayproxy._engine.server", ["replayproxy._engine.server"]),
        ("from replayproxy.testing import capture_url, MS", []),
        ("from replayproxy import ReplayServer, use_cassette", []),
        ("from replayproxy.testing import strategies", []),
    ],
)
def test_the_check_reports_a_private_import(source: str, expected: list[str]) -> None:
    """A private module, or a private name from a public one, is reported; public names
    are not."""
    assert private_imports(source) == expected
