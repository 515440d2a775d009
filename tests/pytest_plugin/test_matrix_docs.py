"""docs/guides/matrix.md's worked example and the README's matrix section, run as written: the naive
reader fails exactly the `incomplete` cells, the correct one passes all, on the shipped
cassette; the cells replay at speed 0 unless a speed is given."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from replayproxy._core.matrix import SETS, cells
from replayproxy._core.replay.options import Front, options_for
from replayproxy._harness.context import CassetteUse
from replayproxy.pytest_plugin._matrix import MATRIX_OPTIONS
from replayproxy.testing import Simulator
from tests.pytest_plugin.matrix_project import results
from tests.pytest_plugin.project import run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "guides" / "matrix.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTEST_GUIDE = (ROOT / "docs" / "guides" / "pytest.md").read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of ``text`` in language ``lang`` (``""``: plain fences)."""
    fences = re.findall(r"^```([a-z]*)\n(.*?)^```$", text, re.S | re.M)
    return [body for found, body in fences if found == lang]


EXAMPLE = section(DOC, "A worked example")
(SOURCE,) = blocks(EXAMPLE, "python")


def example_project(pytester: pytest.Pytester) -> None:
    """The example's test file beside a copy of the shipped OpenAI chat cassette."""
    pytester.makepyfile(test_chat=SOURCE)
    (pytester.path / "cassettes").mkdir()
    shutil.copy(
        ROOT / "cassettes" / "openai-chat-text.cassette",
        pytester.path / "cassettes" / "chat.cassette",
    )


def test_the_worked_example_fails_exactly_the_naive_reader_s_incomplete_cells(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """The example as written: 40 items; the naive reader fails the 12 `incomplete` cells and
    passes the `splits` ones, the correct reader passes all 20; the table rows and the
    failure line the page shows are the ones printed."""
    example_project(pytester)
    result = run(pytester, "--replayproxy-matrix-report=matrix.json", upstream="http://127.0.0.1:9",
                 confdir=confdir)  # fmt: skip
    chosen = cells("splits,cuts")
    incomplete = {c.id for c in chosen if c.outcome == "incomplete"}
    result.assert_outcomes(passed=2 * len(chosen) - len(incomplete), failed=len(incomplete))
    found = results(pytester.path / "matrix.json")
    failed = {(r["test"], r["cell"]) for r in found if r["passed"] is False}
    assert failed == {("test_chat.py::test_answer[naive_answer]", c) for c in incomplete}
    (shown,) = blocks(EXAMPLE, "")
    out = result.stdout.str()
    for line in shown.splitlines():
        if line.startswith("test_chat.py::") or line.startswith("failing cells"):
            assert line in out, line
    assert "DID NOT RAISE IncompleteStream" in shown


@pytest.mark.timing
def test_cells_replay_at_speed_0_unless_the_test_gives_a_speed(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """The shipped cassette lasts 5.4 s as recorded: a `coalesce` cell (the body in one write
    at the recorded end) is quick without a speed, and takes the recorded time with
    --replayproxy-speed=1."""
    example_project(pytester)
    args = ("--replayproxy-matrix=coalesce", "-k", "naive", "--replayproxy-matrix-report=r.json")
    run(pytester, *args, upstream="http://127.0.0.1:9", confdir=confdir)
    (quick,) = results(pytester.path / "r.json", durations=True)
    run(pytester, *args, "--replayproxy-speed=1", upstream="http://127.0.0.1:9", confdir=confdir)
    (timed,) = results(pytester.path / "r.json", durations=True)
    assert quick["cell"] == timed["cell"] == "spec:coalesce"
    assert quick["passed"] is True
    assert timed["duration"] >= 4.5  # at speed 1 nothing arrives before the recorded end
    # The same run without the 5.4 s of waiting: at least half of it shorter (a difference,
    # not a bound: a loaded machine slows both runs alike).
    assert timed["duration"] - quick["duration"] > 2.7


@pytest.mark.skipif(
    not hasattr(CassetteUse, "requests"), reason="needs replayproxy.requests and attempt="
)
def test_the_retry_example_passes_every_cell_after_recording(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """The retry example (its test, with pytest.md's `complete()` it links to), recorded from the
    simulator in record mode once: the [record] item and each `attempt=1` cell pass (two requests
    for interaction 0, attempts 1 and 2, the same Idempotency-Key); replayed in mode none, every
    cell passes again."""
    (policy,) = blocks(section(PYTEST_GUIDE, "Requests seen"), "python")
    (test,) = blocks(section(DOC, "Retries"), "python")
    source = policy.split("\n@pytest.mark")[0] + "\n\n" + test
    with Simulator() as sim:
        pytester.makepyfile(test_retry=source.replace("https://api.openai.com", sim.url))
        recorded = run(pytester, "--replayproxy-record-mode=once", upstream=sim.url,
                       confdir=confdir)  # fmt: skip
        assert len(sim.served) == 1
    recorded.assert_outcomes(passed=4)
    replayed = run(pytester, "--replayproxy-matrix-report=r.json", upstream="http://127.0.0.1:9",
                   confdir=confdir)  # fmt: skip
    replayed.assert_outcomes(passed=3)
    found = results(pytester.path / "r.json")
    assert sorted(r["spec"] for r in found) == sorted(
        ["reset:events=3,attempt=1", "close:events=3,attempt=1", "truncate:events=3,attempt=1"]
    )
    assert all(r["passed"] for r in found)


def test_the_readme_section_is_the_worked_example_and_names_real_options() -> None:
    """The README's matrix section shows the example's test as it is in docs/guides/matrix.md, and
    every --replayproxy- flag it names is an option of the plugin."""
    text = section(README, "Run your tests under every stream failure")
    (snippet,) = blocks(text, "python")
    assert snippet.strip() in SOURCE
    flags = {o.pytest_flag for o in (*options_for(Front.PYTEST), *MATRIX_OPTIONS)}
    named = set(re.findall(r"--replayproxy-[a-z-]+", text))
    assert named and named <= flags, named - flags
    assert "docs/guides/matrix.md" in text


def test_the_sets_table_is_the_sets() -> None:
    """docs/guides/matrix.md's table of sets lists every cell of every set, with its outcome."""
    for name, found in SETS.items():
        if name == "all":
            assert f"| `all` | every cell above ({len(found)} cells) |" in DOC
            continue
        row = f"| `{name}` | " + "<br>".join(f"`{c.spec}` ({c.outcome})" for c in found) + " |"
        assert row in DOC, name
