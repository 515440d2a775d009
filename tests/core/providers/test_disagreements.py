"""Every reader of the provider registry gives the same, right answer on every real stream.

Measured before the registry (commit "Measure the provider detectors of today"), the five
detectors of the time disagreed on five of these streams: Claude on Vertex AI got Gemini error
bodies and no request equivalence; Bedrock InvokeModel for Amazon Nova was checked as Anthropic
(and named "Anthropic on Bedrock"); Bedrock Mantle (Chat and Responses) and Snowflake streams
were named "OpenAI". Now each one follows from the registry's single answer.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from replayproxy._core.check import StreamChecker
from replayproxy._core.faults import provider as fault_provider
from replayproxy._core.providers import definition, detect
from replayproxy._core.wire.error_body import error_family
from replayproxy.checking import check_interaction
from tests.check.corpus_streams import load_corpus
from tests.core.providers.served import SERVED, ServedStream, interaction

BY_NAME = {s.name: s for s in SERVED}


def _checked(s: ServedStream) -> StreamChecker:
    found = detect(s.url, s.content_type, headers=dict(s.headers), websocket=False)
    assert found is not None
    checker = StreamChecker(found, url=s.url)
    checker.feed(s.body)
    checker.close()
    return checker


CORPUS_NAMES = frozenset(s.name for s in load_corpus())


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_checker_checks_each_real_stream_with_its_grammar(name: str) -> None:
    """The detected provider is the right one and the dialect the one its server speaks; the
    payload files and cassettes (read fine by real clients) give no error. Corpus streams'
    errors are judged by the corpus tests and the SDK oracle, which record what clients did
    (Mistral's list delta.content, for one, breaks openai-python users)."""
    s = BY_NAME[name]
    checker = _checked(s)
    assert (checker.provider, checker.dialect) == (s.provider, s.dialect)
    if name in CORPUS_NAMES:
        return  # the corpus's own tests (test_corpus.py, the SDK oracle) judge its errors
    assert [str(v) for v in checker.violations if v.severity == "error"] == []


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_faults_error_bodies_and_equivalence_read_the_same_answer(name: str) -> None:
    """The faults, the error bodies and the request equivalences (which see the request
    alone, or its path alone) name the provider the checker used."""
    s = BY_NAME[name]
    d = definition(s.provider)
    path = urlsplit(s.url).path
    assert detect(path) == s.provider  # equivalence: canonical() reads this
    assert error_family(path) == d.error_shape
    expected = s.provider if d.in_band_error is not None else None
    assert fault_provider.detect(interaction(s)) == expected


def test_checking_an_interaction_reports_the_registry_answer() -> None:
    """checking.check_interaction (check CASSETTE) reports the fixed provider and dialect for
    the streams the detectors disagreed on."""
    for name in ("bedrock-invoke-nova", "mantle-chat", "mantle-responses", "snowflake-chat"):
        s = BY_NAME[name]
        report = check_interaction(interaction(s))
        assert (report.provider, report.dialect, report.errors) == (s.provider, s.dialect, [])
