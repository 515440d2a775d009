"""The docs tables generated from the registries (tests/generated_docs.py) are the code's: each
block in its page equals its rendering, so a new fault or a changed set cannot leave the docs
behind. ``python -m tests.generated_docs`` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from replayproxy._core.faults import FAULTS
from replayproxy._core.matrix import SETS
from tests import generated_docs as gen


@pytest.mark.parametrize("name", list(gen.BLOCKS))
def test_each_generated_block_is_its_rendering(name: str) -> None:
    """The page holds the block, and its text is what the registry renders today."""
    page, render = gen.BLOCKS[name]
    text = (gen.ROOT / page).read_text("utf-8")
    found = gen.block(text, name)
    assert found is not None, f"{page}: no <!-- generated: {name} --> block"
    assert found == render(), f"{page}: run python -m tests.generated_docs"


def test_the_tables_name_every_fault_and_cell() -> None:
    """The faults table has a row per fault; the sets table every cell and the count of all."""
    faults = gen.faults_table()
    assert all(f"| `{name}` |" in faults for name in FAULTS)
    sets = gen.matrix_sets()
    assert all(f"`{c.spec}` ({c.outcome})" in sets for c in SETS["all"])
    assert f"({len(SETS['all'])} cells)" in sets


def test_main_rewrites_a_stale_block(tmp_path: Path) -> None:
    """Rewriting fills each block with its rendering and keeps the text around it."""
    pages: dict[str, list[str]] = {}
    for name, (page, _) in gen.BLOCKS.items():
        pages.setdefault(page, []).append(name)
    for page, names in pages.items():
        target = tmp_path / page
        target.parent.mkdir(parents=True, exist_ok=True)
        blocks = "".join(
            f"<!-- generated: {n} -->\nold\n<!-- end generated: {n} -->\nbetween\n" for n in names
        )
        target.write_text(f"before\n{blocks}after\n")
    assert gen.main(tmp_path) == 0
    for name, (page, render) in gen.BLOCKS.items():
        text = (tmp_path / page).read_text()
        assert text.startswith("before\n") and text.endswith("after\n")
        assert gen.block(text, name) == render()
