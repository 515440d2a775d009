"""The SDK oracle: on every corpus stream and every broken variant, the checker's errors and
the official clients' failures agree (issue 25, item 1), and the per-rule table at the end of
tests/check/oracle/measured.md is what the oracle measures."""

from __future__ import annotations

import os

import pytest

from tests.check.oracle.agreement import disagreement, unflagged_variant
from tests.check.oracle.cache import shared_outcomes
from tests.check.oracle.outcome import ClientOutcome
from tests.check.oracle.report import DOC, SECTION, heading, render, versions_line
from tests.check.oracle.run import Result, all_streams, client_outcomes, results

pytest.importorskip("google.genai")
pytest.importorskip("boto3")
# The first test to ask measures everything (npm ci on a fresh clone, then every SDK over every
# stream, about 30 s on one core); a worker waiting on that measurement waits as long.
pytestmark = pytest.mark.timeout(600)

NAMES = [s.name for s in all_streams()]
VARIANTS = [s.name for s in all_streams() if s.broken and not s.harmless]
HARMLESS = [s.name for s in all_streams() if s.harmless]


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[ClientOutcome, ...]]:
    """Measured once per session (shared by xdist workers through their common temp dir)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return client_outcomes()
    return shared_outcomes(tmp_path_factory.getbasetemp().parent)


@pytest.fixture(scope="session")
def found(outcomes: dict[str, tuple[ClientOutcome, ...]]) -> dict[str, Result]:
    return results(outcomes)


def test_the_oracle_reads_every_corpus_provider_with_several_clients(
    found: dict[str, Result],
) -> None:
    """The four main APIs are each read by at least two ways (a plain loop and a helper, or
    two libraries); every other provider an official client reads, by at least one."""
    ways: dict[str, set[str]] = {}
    for result in found.values():
        ways.setdefault(result.stream.provider, set()).update(
            f"{o.client} {o.way}" for o in result.outcomes
        )
    read = {p: w for p, w in ways.items() if w}
    assert {"openai-chat", "openai-responses", "anthropic", "gemini"} <= set(read)
    main = ("openai-chat", "openai-responses", "anthropic", "gemini")
    assert all(len(read[p]) >= 2 for p in main), read


@pytest.mark.parametrize("name", NAMES)
def test_checker_errors_and_client_failures_agree(name: str, found: dict[str, Result]) -> None:
    """A checker error on the stream comes with at least one client failure (raised, dropped
    data, misreported end), and a client failure comes with at least one checker error."""
    result = found[name]
    if not result.outcomes:
        pytest.skip(f"no official client reads {result.stream.provider} streams")
    problem = disagreement(result)
    assert problem is None, problem


@pytest.mark.parametrize("name", VARIANTS)
def test_a_broken_variant_is_flagged_by_both_sides(name: str, found: dict[str, Result]) -> None:
    """Each broken variant (cut, a structural event dropped, the three breakages issue 25
    names) gets a checker error and at least one client failure."""
    problem = unflagged_variant(found[name])
    assert problem is None, problem


@pytest.mark.parametrize("name", HARMLESS)
def test_a_harmless_variant_is_a_warning_only(name: str, found: dict[str, Result]) -> None:
    """The edits every client reads fine (the finish chunk sent twice, a contentBlockStop
    missing) get a checker warning and no error: measured, not reasoned."""
    result = found[name]
    assert result.outcomes and not any(o.failed for o in result.outcomes), result.outcomes
    assert not result.errors and result.warnings, (result.errors, result.warnings)


def test_the_measured_table_in_the_docs_is_the_oracles(found: dict[str, Result]) -> None:
    """tests/check/oracle/measured.md ends with this Python's table as ``python -m
    tests.check.oracle.report`` prints it, so the documented client behaviour cannot drift from
    the measurement (checked when the installed client versions are the ones the table names)."""
    text = DOC.read_text()
    assert SECTION in text, f"tests/check/oracle/measured.md has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1]
    assert "\n## " not in section, "the measured section must be the last of measured.md"
    assert heading() in section, f"no table for this Python ({heading()}) in the section"
    table = section.split(heading(), 1)[1].split("\n**Python ", 1)[0]
    measured = versions_line(found.values())
    if measured not in table:
        pytest.skip(f"this Python's table was measured with other client versions: {measured}")
    assert render(found).strip() in table, (
        "regenerate it: python -m tests.check.oracle.report --write"
    )
