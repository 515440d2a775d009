"""The docs stay readable in an hour: the README is at most 200 lines, and the README and every
page under docs/ hold at most 35,000 words together (counted as `wc -w` counts them)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 200
WORDS = 35_000


def words(path: Path) -> int:
    """Whitespace-separated words, as ``wc -w`` counts them."""
    return len(path.read_bytes().split())


def test_the_readme_is_at_most_200_lines() -> None:
    """README.md has at most 200 lines."""
    lines = (ROOT / "README.md").read_text("utf-8").count("\n")
    assert lines <= README_LINES, f"README.md has {lines} lines"


def test_the_readme_and_the_docs_are_at_most_35000_words() -> None:
    """README.md plus every docs/**/*.md hold at most 35,000 words; the largest pages are named
    when they do not."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    counts = {str(p.relative_to(ROOT)): words(p) for p in pages}
    largest = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert sum(counts.values()) <= WORDS, f"{sum(counts.values())} words; largest: {largest}"


def test_the_word_count_is_wc_s(tmp_path: Path) -> None:
    """Words are split on any whitespace, punctuation and code included."""
    page = tmp_path / "p.md"
    page.write_text("# A title\n\n`code` and\ttabs,  spaces\n```\nx = 1\n```\n", "utf-8")
    assert words(page) == 12  # "#", "A", "title", "`code`", "and", "tabs,", ... "```"
