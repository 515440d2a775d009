"""The grammars the provider registry tells beyond the first APIs: Bedrock InvokeModel by model
family (from the URL's model id, else from the first chunk), Ollama's native NDJSON, Cohere v2
and Anthropic's legacy /v1/complete: each clean stream passes with its dialect named, each
broken one is caught, and neither result depends on how the bytes are split."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.check import StreamChecker, Violation
from replayproxy._core.providers import detect
from tests.check.family_cases import FAMILY_BASES, INVOKE_FAMILIES, family_cases, invoke_body

RUNTIME = "https://bedrock-runtime.us-east-1.amazonaws.com/model"
MODELS = {
    "amazon-titan": "amazon.titan-text-express-v1",
    "amazon-nova": "us.amazon.nova-lite-v1:0",
    "meta": "meta.llama3-8b-instruct-v1:0",
    "mistral": "mistral.mistral-7b-instruct-v0:2",
    "cohere": "cohere.command-text-v14",
}
DIALECTS = {
    "amazon-titan": "Bedrock (Amazon Titan)",
    "amazon-nova": "Bedrock (Amazon Nova)",
    "meta": "Bedrock (Meta Llama)",
    "mistral": "Bedrock (Mistral)",
    "cohere": "Bedrock (Cohere)",
}
CASES = family_cases()


def checked(provider: str, pieces: list[bytes], url: str | None = None) -> StreamChecker:
    checker = StreamChecker(provider, url=url)
    for piece in pieces:
        checker.feed(piece)
    checker.close()
    return checker


def split(body: bytes, seed: int, pieces: int) -> list[bytes]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(pieces, len(body) - 1)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def report(c: StreamChecker) -> tuple[list[Violation], list[str], str]:
    return c.violations, c.notes, c.dialect


@pytest.mark.parametrize("family", sorted(INVOKE_FAMILIES))
@pytest.mark.parametrize("provider", ["bedrock-invoke", "bedrock-invoke-native"])
def test_a_non_anthropic_invoke_stream_is_not_read_as_anthropic(family: str, provider: str) -> None:
    """Issue 25's false alarm: a Titan/Nova/Llama/Mistral/Cohere InvokeModel stream checked as
    either Bedrock Invoke API without a URL gives no error (no Anthropic rule) and names its
    family, not 'Anthropic on Bedrock'."""
    c = checked(provider, [invoke_body(INVOKE_FAMILIES[family])])
    assert c.violations == []
    assert c.dialect == DIALECTS[family]


@pytest.mark.parametrize("family", sorted(INVOKE_FAMILIES))
def test_the_url_model_id_tells_the_family(family: str) -> None:
    """With the request URL, detection picks bedrock-invoke-native from the model id and the
    family's grammar catches a stream cut before its final chunk (the near miss: whole, clean)."""
    url = f"{RUNTIME}/{MODELS[family]}/invoke-with-response-stream"
    assert detect(url, "application/vnd.amazon.eventstream") == "bedrock-invoke-native"
    chunks = INVOKE_FAMILIES[family]
    whole = checked("bedrock-invoke-native", [invoke_body(chunks)], url)
    assert (whole.violations, whole.dialect) == ([], DIALECTS[family])
    cut = checked(
        "bedrock-invoke-native", [invoke_body(chunks[: -1 if family != "amazon-nova" else 4])], url
    )
    assert [v.rule for v in cut.violations] == ["bedrock.invoke-stop"]


def test_claude_on_invoke_keeps_the_anthropic_grammar() -> None:
    """An Anthropic model id (or Anthropic events without a URL) is still checked with the
    Anthropic rules inside the chunks."""
    from tests.check.cases import CASES as RULE_CASES

    broken = RULE_CASES["bedrock.invoke-chunk"].body  # Anthropic events in chunks
    url = f"{RUNTIME}/anthropic.claude-3-5-haiku-20241022-v1:0/invoke-with-response-stream"
    c = checked("bedrock-invoke", [broken], url)
    assert c.dialect == "Anthropic on Bedrock (InvokeModelWithResponseStream)"
    assert "bedrock.invoke-chunk" in {v.rule for v in c.violations}


def test_ollama_native_is_detected_from_its_paths() -> None:
    """/api/chat and /api/generate with application/x-ndjson are Ollama's native API; its
    OpenAI-compatible /v1/chat/completions stays openai-chat."""
    for path in ("/api/chat", "/api/generate"):
        assert detect(f"http://localhost:11434{path}", "application/x-ndjson") == "ollama"
    assert detect("http://localhost:11434/v1/chat/completions", "text/event-stream") == (
        "openai-chat"
    )
    assert detect("https://api.cohere.com/v2/chat", "text/event-stream") == "cohere-v2"
    assert detect("https://api.openai.com/v1/responses/resp_1?stream=true") == "openai-responses"


@pytest.mark.parametrize("name", sorted(FAMILY_BASES))
def test_each_base_is_clean_and_each_case_breaks_its_rule(name: str) -> None:
    """The clean stream reports nothing; every case built from it reports its rule."""
    provider, body = FAMILY_BASES[name]
    assert checked(provider, [body()]).violations == []
    for rule, (base, broken) in CASES.items():
        if base == name:
            assert {v.rule for v in checked(provider, [broken]).violations} == {rule}


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(sorted(FAMILY_BASES) + sorted(CASES)),
    seed=st.integers(0, 2**32),
    pieces=st.integers(1, 200),
)
def test_results_do_not_depend_on_the_byte_split(name: str, seed: int, pieces: int) -> None:
    """Property: any split of a family base or case gives the same violations, notes and
    dialect as the whole body."""
    if name in FAMILY_BASES:
        provider, build = FAMILY_BASES[name]
        body = build()
    else:
        base, body = CASES[name]
        provider = FAMILY_BASES[base][0]
    assert report(checked(provider, split(body, seed, pieces))) == report(checked(provider, [body]))
