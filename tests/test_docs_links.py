"""Every relative link of the README and docs/ resolves, anchors included, and every
`docs/....md` page the sources cite exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CITED = re.compile(r"\bdocs/[\w/-]+\.md\b")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (outside code blocks)."""
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        base, n = slug(heading), 1
        name = base
        while name in found:  # GitHub numbers repeated headings: name, name-1, ...
            name, n = f"{base}-{n}", n + 1
        found.add(name)
    return found


def broken_links(page: Path, root: Path = ROOT) -> Iterator[str]:
    """The relative links of ``page`` whose file or anchor does not exist."""
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            yield f"{target}: no such file"
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            yield f"{target}: no heading #{anchor} in {dest.relative_to(root)}"


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    """Each relative link of the page names a file that exists and, with #anchor, a heading
    of that file."""
    assert list(broken_links(page)) == []


def test_every_cited_docs_page_exists() -> None:
    """`docs/....md` cited in the code, tests, scripts and docs names a page of the tree (the
    changelog keeps the names pages had)."""
    cited = {
        (str(p.relative_to(ROOT)), name)
        for folder in ("replayproxy", "tests", "scripts", "benchmarks", "examples", "docs")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in {".py", ".md", ".toml", ".mjs", ".txt"} and ".venv" not in p.parts
        for name in _CITED.findall(p.read_text("utf-8", errors="replace"))
    }
    assert cited, "no citation found: the pattern is stale"
    assert {c for c in cited if not (ROOT / c[1]).exists()} == set()


def test_a_missing_file_and_a_missing_anchor_are_found(tmp_path: Path) -> None:
    """The checker itself: a link to a missing page and one to a missing heading fail, a good
    link and an external one pass."""
    (tmp_path / "a.md").write_text("# Title\n\n## The `x` option: y\n", "utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#the-x-option-y) [web](https://x.org/a#b) [no](c.md) [bad](a.md#nope)\n",
        "utf-8",
    )
    assert list(broken_links(page, root=tmp_path)) == [
        "c.md: no such file",
        "a.md#nope: no heading #nope in a.md",
    ]
