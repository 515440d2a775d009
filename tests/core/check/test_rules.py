"""Every checker rule: a real stream that passes, and a minimal stream that breaks exactly it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.check import RULES, StreamChecker, Violation, check_body, check_frames
from replayproxy._core.check.base import MAX_PER_RULE
from replayproxy._core.check.grammars.realtime import RULE_PREFIXES
from tests.check.cases import BASES, CASES, Case, base_body
from tests.check.recording_cases import RECORDING_CASES

DOCS = Path(__file__).resolve().parents[3] / "docs" / "reference" / "rules.md"


def _check(case: Case, frames: list[bytes] | None = None) -> list[Violation]:
    return check_frames(
        frames if frames is not None else [case.body],
        case.provider,
        request=case.request,
        content_type=case.content_type,
    )


def _random_split(body: bytes, seed: int, pieces: int = 200) -> list[bytes]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(pieces, len(body) - 1)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def test_every_rule_has_a_case_and_a_doc_entry() -> None:
    """The case table covers every stream-body rule id (WebSocket rules have theirs in
    test_check_realtime.py; rules that need the Content-Encoding, arrival times, the stored
    record or the upstream's end have theirs in tests/check/recording_cases.py), and
    docs/guides/checker.md lists every rule id with its severity."""
    assert not set(CASES) & set(RECORDING_CASES)
    assert set(CASES) | set(RECORDING_CASES) == {
        r for r in RULES if not r.startswith(RULE_PREFIXES)
    }
    docs = DOCS.read_text()
    assert [r.id for r in RULES.values() if f"| `{r.id}` | {r.severity} |" not in docs] == []


@pytest.mark.parametrize("name", sorted(BASES))
def test_real_streams_pass(name: str) -> None:
    """Each real provider stream (the base of the cases) has no violation at all."""
    provider, _, request = BASES[name]
    assert check_body(base_body(name), provider, request=request) == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_minimal_stream_breaks_exactly_its_rule(rule: str) -> None:
    """The case's stream reports this rule and no other; its base stream reports nothing."""
    case = CASES[rule]
    provider, _, request = BASES[case.base]
    assert check_body(base_body(case.base), provider, request=request) == []
    violations = _check(case)
    assert {v.rule for v in violations} == {rule}, [str(v) for v in violations]
    for v in violations:
        assert v.severity == RULES[rule].severity
        assert v.message and "\n" not in v.message
        assert v.offset is None or 0 <= v.offset <= len(case.body)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_incremental_result_does_not_depend_on_the_split(rule: str) -> None:
    """Fed in random pieces (and byte by byte when small), a case gives the same violations."""
    case = CASES[rule]
    whole = _check(case)
    assert _check(case, _random_split(case.body, seed=len(rule))) == whole
    if len(case.body) < 4000:
        assert _check(case, [case.body[i : i + 1] for i in range(len(case.body))]) == whole


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(BASES)), seed=st.integers(0, 2**32), pieces=st.integers(1, 400))
def test_any_resplit_of_a_valid_stream_passes(name: str, seed: int, pieces: int) -> None:
    """Property: any re-splitting of a valid stream's bytes into frames still passes."""
    provider, _, request = BASES[name]
    body = base_body(name)
    assert check_frames(_random_split(body, seed, pieces), provider, request=request) == []


@settings(max_examples=40, deadline=None)
@given(rule=st.sampled_from(sorted(CASES)), cuts=st.lists(st.integers(0, 10**6), max_size=30))
def test_any_split_of_a_broken_stream_gives_the_same_violations(rule: str, cuts: list[int]) -> None:
    """Property: splitting a violating stream anywhere gives the same violations."""
    case = CASES[rule]
    points = sorted({c % (len(case.body) + 1) for c in cuts})
    frames = [case.body[a:b] for a, b in zip([0, *points], [*points, len(case.body)], strict=True)]
    assert _check(case, frames) == _check(case)


def test_feed_returns_violations_as_they_are_found() -> None:
    """Violations come out of feed() as soon as their event is complete, and close() adds the
    end-of-stream ones; together they equal the whole-body result."""
    case = CASES["anthropic.delta-type"]
    checker = StreamChecker("anthropic")
    first = checker.feed(case.body)
    assert [v.rule for v in first] == ["anthropic.delta-type"]
    assert checker.close() == []
    truncated = StreamChecker("anthropic")
    assert truncated.feed(base_body("anthropic-text")[:200]) == []
    assert [v.rule for v in truncated.close()] == [
        "sse.unterminated",
        "anthropic.message-stop-last",
    ]


def test_feed_after_close_is_an_error() -> None:
    """Feeding a closed checker is a programming error."""
    checker = StreamChecker("sse")
    checker.close()
    with pytest.raises(ValueError):
        checker.feed(b"data: 1\n\n")


def test_repeated_violations_are_capped_with_a_summary() -> None:
    """A rule broken on every event is listed MAX_PER_RULE times, then summarized once."""
    body = b"".join(b"data: {oops\n\n" for _ in range(MAX_PER_RULE + 5))
    violations = check_body(body, "sse")
    assert [v.rule for v in violations] == ["sse.json"] * (MAX_PER_RULE + 1)
    assert violations[-1].message == "5 more violation(s) not listed"


def test_azure_prompt_filter_preamble_is_accepted() -> None:
    """Azure OpenAI's first chunk (empty id/model/object, prompt_filter_results) is no error."""
    preamble = (
        b'data: {"choices":[],"created":0,"id":"","model":"","object":"",'
        b'"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}\n\n'
    )
    body = preamble + base_body("openai-chat-text")
    assert check_body(body, "openai-chat", request=BASES["openai-chat-text"][2]) == []


def test_bedrock_event_needs_json_content_type() -> None:
    """An event-stream event whose :content-type is not application/json is flagged."""
    from replayproxy._core.wire.eventstream import encode_event

    body = base_body("bedrock-converse") + encode_event("metadata", b"{}", "text/plain")
    rules = [v.rule for v in check_body(body, "bedrock-converse")]
    assert "bedrock.message-type" in rules
