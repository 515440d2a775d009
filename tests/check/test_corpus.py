"""The regression corpus: every real stream and SDK fixture in tests/check/corpus passes with
zero errors and its dialect named, under any byte split; the four false alarms of issue 10 stay
fixed."""

from __future__ import annotations

import json
import random
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.check import RequestOptions, StreamChecker, Violation, check_frames
from tests.check.corpus_streams import CORPUS, MANIFEST, CorpusStream, frame, load_corpus

STREAMS = load_corpus()
BY_NAME = {s.name: s for s in STREAMS}


def _check(stream: CorpusStream, frames: list[bytes] | None = None) -> StreamChecker:
    # the request URL and the response's Content-Type, as a recorded exchange has them
    checker = StreamChecker(
        stream.provider, url=stream.url or None, content_type=stream.content_type or None
    )
    for piece in frames if frames is not None else [stream.body]:
        checker.feed(piece)
    checker.close()
    return checker


def _errors(violations: list[Violation]) -> list[str]:
    return [str(v) for v in violations if v.severity == "error"]


def test_the_corpus_is_large_diverse_small_and_sourced() -> None:
    """At least 40 recorded provider streams (plus SDK fixtures) from at least 8
    providers/servers, a few hundred KB, each with its repository, path, commit and licence
    named, and the licences kept beside the data."""
    assert sum(s.kind == "recorded" for s in STREAMS) >= 40
    vendors = {s.dialect for s in STREAMS}
    assert len(vendors) >= 8, vendors
    assert sum(len(s.body) for s in STREAMS) < 2_000_000
    for entry in tomllib.loads(MANIFEST.read_text())["stream"]:
        assert entry["repo"] and entry["path"] and len(entry["commit"]) == 40, entry
        assert entry["license"] in ("Apache-2.0", "MIT", "BSD-3-Clause"), entry
    assert (CORPUS / "LICENSE-vercel-ai-Apache-2.0.txt").is_file()
    assert (CORPUS / "LICENSE-anthropic-sdk-python-MIT.txt").is_file()
    listed = {e.get("file") for e in tomllib.loads(MANIFEST.read_text())["stream"]}
    on_disk = {p.name for p in CORPUS.iterdir() if p.suffix in (".jsonl", ".sse", ".ndjson")}
    assert on_disk <= listed, on_disk - listed


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_corpus_stream_has_no_errors_and_its_dialect_is_named(name: str) -> None:
    """A real stream gives no error but the ones its manifest entry lists (``errors``: real
    clients break on them, as the SDK oracle measures in tests/check/oracle), and the report
    names the dialect recorded in the manifest."""
    stream = BY_NAME[name]
    checker = _check(stream)
    rules = sorted({v.rule for v in checker.violations if v.severity == "error"})
    assert rules == sorted(stream.errors), (stream.source, _errors(checker.violations)[:3])
    assert checker.dialect == stream.dialect


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(BY_NAME)), seed=st.integers(0, 2**32), pieces=st.integers(1, 300)
)
def test_corpus_results_do_not_depend_on_the_byte_split(name: str, seed: int, pieces: int) -> None:
    """Property: any split of a corpus stream gives the same violations, notes and dialect."""
    stream = BY_NAME[name]
    body = stream.body
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(pieces, len(body) - 1)))
    frames = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    whole, split = _check(stream), _check(stream, frames)
    assert (split.violations, split.notes, split.dialect) == (
        whole.violations,
        whole.notes,
        whole.dialect,
    )


def test_empty_partial_json_for_an_empty_tool_input_is_accepted() -> None:
    """Issue 10 case 1: Anthropic's single empty input_json_delta for input {} is no error."""
    stream = BY_NAME["anthropic-tool-no-args.jsonl"]
    assert b'"partial_json":""' in stream.body
    assert _check(stream).violations == []


@pytest.mark.parametrize(
    "name", ["deepseek-tool-call.jsonl", "groq-tool-call.jsonl", "mistral-text.jsonl"]
)
@pytest.mark.parametrize("include_usage", [None, True, False])
def test_usage_on_the_finish_chunk_is_a_named_dialect(
    name: str, include_usage: bool | None
) -> None:
    """Issue 10 case 2: usage on the finish_reason chunk (DeepSeek, Groq, Mistral) is named in
    the notes, not flagged, with or without stream_options.include_usage."""
    stream = BY_NAME[name]
    violations = check_frames(
        [stream.body], "openai-chat", request=RequestOptions(include_usage=include_usage)
    )
    assert _errors(violations) == []
    checker = _check(stream)
    assert any("finish_reason chunk" in note for note in checker.notes)


def test_error_then_response_failed_is_one_terminal_pair() -> None:
    """Issue 10 case 3: a Responses error event followed by response.failed is no error; a
    third terminal event after the pair still is."""
    stream = BY_NAME["openai-responses-error.jsonl"]
    checker = _check(stream)
    assert checker.violations == []
    assert any("response.failed" in note for note in checker.notes)
    extra = (
        b'event: response.completed\ndata: {"type":"response.completed","sequence_number":4}\n\n'
    )
    again = check_frames([stream.body + extra], "openai-responses")
    assert [v.rule for v in again] == ["openai.responses.terminal"]


def _without_sequence_numbers(name: str) -> bytes:
    raw = (CORPUS / name).read_bytes()
    payloads = []
    for line in raw.splitlines():
        obj = json.loads(line)
        obj.pop("sequence_number", None)
        payloads.append(json.dumps(obj, separators=(",", ":")).encode())
    return frame("openai-responses", payloads)


def test_responses_without_sequence_numbers_are_a_named_dialect() -> None:
    """Issue 10 case 4: a Responses stream with no sequence_number at all (older recordings,
    compatible servers) gives no error, and the notes say so; one missing in a numbered stream
    is still an error."""
    body = _without_sequence_numbers("openai-responses-local-shell.jsonl")
    checker = StreamChecker("openai-responses")
    checker.feed(body)
    checker.close()
    assert checker.violations == []
    assert any("no sequence_number" in note for note in checker.notes)
    numbered = BY_NAME["openai-responses-local-shell.jsonl"].body
    holed = numbered.replace(b',"sequence_number":3', b"", 1)
    assert [v.rule for v in check_frames([holed], "openai-responses")] == [
        "openai.responses.sequence",
        "openai.responses.sequence",
    ]
