"""Every count the README and docs/ state about the code is checked against the registries.

A count is a number before one of the words the code keeps registries of (rules, faults, cells,
sets, options, provider APIs, outcome classes, corpus streams and hosts), or a figure of the
shipped cassette the quick start replays. Each phrase that can
state one has a check below, which reads the number from the registry; a count phrase that no
check understands fails too, so a new count cannot be written without a check (or rephrased
without a number, which is preferred: a page that names no count cannot go stale).

Prose only: fenced code blocks and inline code are transcripts of commands and outputs, which
their own tests run (`tests/pytest_plugin/test_matrix_docs.py`, `tests/test_readme.py`, ...).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from replayproxy import load
from replayproxy._core.check import RULES
from replayproxy._core.faults import Outcome
from replayproxy._core.faults.registry import FAULTS
from replayproxy._core.matrix import SETS
from replayproxy._core.providers.model import Provider
from replayproxy._core.replay.options import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "check" / "corpus" / "MANIFEST.toml"

# The words a count about the code is stated with, after the number and at most one word
# ("116 checker rules", "12 incomplete cells").
_NOUNS = r"rules?|faults?|cells?|sets?|options?|provider APIs?|providers?|outcome classes"
COUNT = re.compile(rf"(?<![\w./-])(\d[\d,]*)\s+(?:[a-z-]+\s+)?(?:{_NOUNS})\b", re.I)


@cache
def _corpus() -> list[dict[str, object]]:
    streams: list[dict[str, object]] = tomllib.loads(MANIFEST.read_text("utf-8"))["stream"]
    return streams


def _corpus_hosts() -> int:
    return len({s["host"] for s in _corpus()})


def _quick_start_stream() -> tuple[int, int]:
    """The README's quick-start stream: its wait for the head (in 10 ms) and its frames."""
    response = load(ROOT / "cassettes" / "openai-chat-text.cassette").interactions[0].response
    assert response is not None
    return round(response.head_offset_ns / 1e7), len(response.frames)


def _set_size(name: str) -> int | None:
    found = SETS.get(name)
    return None if found is None else len(found)


@dataclass(frozen=True)
class Check:
    """A phrase that states counts, and where each of its numbers comes from."""

    pattern: re.Pattern[str]
    what: str
    counts: Callable[[re.Match[str]], list[tuple[int, int | None]]]  # (stated, actual)


def _num(text: str) -> int:
    return int(text.replace(",", ""))


CHECKS = [
    Check(
        re.compile(r"(\d[\d,]*) (?:checker )?rules\b"),
        "the checker's rules",
        lambda m: [(_num(m[1]), len(RULES))],
    ),
    Check(
        re.compile(r"(\d[\d,]*) (?:registered )?faults\b"),
        "the fault registry",
        lambda m: [(_num(m[1]), len(FAULTS))],
    ),
    Check(
        re.compile(r"`([a-z]+)` \| every cell above \((\d+) cells\)"),
        "the matrix set named in the row",
        lambda m: [(_num(m[2]), _set_size(m[1]))],
    ),
    Check(
        re.compile(r"(\d+) `([a-z]+)` cells\b"),
        "the matrix set named",
        lambda m: [(_num(m[1]), _set_size(m[2]))],
    ),
    Check(
        re.compile(r"(\d+) (?:fault )?matrix sets\b"),
        "the matrix sets",
        lambda m: [(_num(m[1]), len(SETS))],
    ),
    Check(
        re.compile(r"(\d+) (?:replay |record |pytest )?options\b"),
        "the option table",
        lambda m: [(_num(m[1]), len(OPTIONS))],
    ),
    Check(
        re.compile(r"(\d+) provider APIs?\b"),
        "the provider registry",
        lambda m: [(_num(m[1]), len(Provider))],
    ),
    Check(
        re.compile(r"(\d+) outcome classes\b"),
        "the fault outcomes",
        lambda m: [(_num(m[1]), len(Outcome))],
    ),
    Check(
        re.compile(r"(\d[\d,]*) streams from (\d+) (?:hosts|providers and servers|providers)"),
        "the regression corpus (tests/check/corpus/MANIFEST.toml)",
        lambda m: [(_num(m[1]), len(_corpus())), (_num(m[2]), _corpus_hosts())],
    ),
    Check(
        re.compile(r"a (\d+\.\d\d) s wait, then (\d+) chunks"),
        "the quick start's cassette (cassettes/openai-chat-text.cassette)",
        lambda m: [
            (round(float(m[1]) * 100), _quick_start_stream()[0]),
            (_num(m[2]), _quick_start_stream()[1]),
        ],
    ),
    Check(
        re.compile(r"corpus of (\d[\d,]*) streams(?! from)"),
        "the regression corpus",
        lambda m: [(_num(m[1]), len(_corpus()))],
    ),
]


def prose(markdown: str) -> str:
    """The text of a page without its fenced code blocks, on one line (a phrase may be wrapped)."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", markdown, flags=re.S | re.M)
    return re.sub(r"\s+", " ", text)


def problems(markdown: str) -> Iterator[str]:
    """Each count the page states that is wrong or that no check reads."""
    text = prose(markdown)
    inline_code = [m.span() for m in re.finditer(r"`[^`\n]+`", text)]
    checked: set[int] = set()
    for check in CHECKS:
        for m in check.pattern.finditer(text):
            for stated, actual in check.counts(m):
                if actual is None:
                    yield f"{m[0]!r}: no such registry entry ({check.what})"
                elif stated != actual:
                    yield f"{m[0]!r}: the code has {actual} ({check.what})"
            checked.update(m.start(g) for g in range(1, len(m.groups()) + 1))
    for m in COUNT.finditer(text):
        in_code = any(a <= m.start() < b for a, b in inline_code)
        if m.start(1) not in checked and not in_code:
            yield f"{m[0]!r}: a count with no check (add one to CHECKS, or state no number)"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_count_a_page_states_is_the_code_s(page: Path) -> None:
    """Each count of rules, faults, cells, sets, options, providers, outcome classes or corpus
    streams the page states equals the registry's, and every such count has a check."""
    assert list(problems(page.read_text("utf-8"))) == []


def test_the_readme_s_quick_start_figures_are_checked() -> None:
    """The README states the quick-start stream's wait and chunk count, and a check reads them
    (so the check cannot silently stop matching a reworded sentence)."""
    text = prose((ROOT / "README.md").read_text("utf-8"))
    (check,) = [c for c in CHECKS if "quick start" in c.what]
    assert check.pattern.search(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"the checker has {len(RULES)} rules", 0),
        ("the checker has 84 rules", 1),
        (f"one of {len(FAULTS)} faults", 0),
        ("one of 3 faults", 1),
        (f"| `all` | every cell above ({len(SETS['all'])} cells) |", 0),
        ("| `all` | every cell above (3 cells) |", 1),
        (f"the {len(SETS['cuts'])} `cuts` cells", 0),
        ("the 12 `nosuchset` cells", 1),
        ("fails exactly the 12 incomplete cells", 1),  # a count with no check
        (f"a corpus of {len(_corpus())} streams", 0),
        ("a regression corpus of 56 streams from 11 providers", 2),
        ("HTTP/2 streams, 200 concurrent streams, a 50 MB stream", 0),  # not counts of code
        ("```\n12 cells: 4 failed\n```", 0),  # a transcript
        ("`--set all` runs 12 cells", 1),
        ("(a 0.38 s wait, then 145 chunks 10-60 ms apart)", 0),
        ("(a 0.50 s wait, then 84 chunks 10-60 ms apart)", 2),
    ],
)
def test_the_scan_finds_wrong_and_unchecked_counts(text: str, expected: int) -> None:
    """The scanner reports a wrong count and a count no check reads, and nothing in code
    blocks or in numbers that are not counts of the code."""
    assert len(list(problems(text))) == expected, list(problems(text))
