"""The user-facing checker API: check() on bytes, frames and interactions; assert_stream_ok."""

from __future__ import annotations

import pytest

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request, Response
from replayproxy._core.check import RequestOptions, Violation
from replayproxy._errors import UsageError
from replayproxy.checking import StreamContractError, assert_stream_ok, check
from replayproxy.testing import _builders as builders
from tests.check.cases import CASES, base_body


def _interaction(url: str, body: bytes, *, request_body: bytes = b"") -> Interaction:
    """An SSE response of ``body`` in 50-byte frames, frame k at k * 50 µs."""
    pieces = [body[i : i + 50] for i in range(0, len(body), 50)]
    return builders.interaction(
        pieces,
        url=url,
        body=request_body,
        head_ms=0,
        at_ms=[k * 0.05 for k in range(len(pieces))],
        end=Ending(EndKind.COMPLETE, 10**9),
    )


def test_check_bytes_frames_and_url_detection_agree() -> None:
    """Bytes, frames and URL-based detection give the same violations for one stream."""
    body = CASES["anthropic.stop-reason"].body
    by_name = check(body, provider="anthropic")
    assert [v.rule for v in by_name] == ["anthropic.stop-reason"]
    frames = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert check(frames, provider="anthropic") == by_name
    assert check(bytearray(body), url="https://api.anthropic.com/v1/messages") == by_name


def test_check_uses_the_request_body_for_include_usage() -> None:
    """request= (the JSON request body) decides whether the usage chunk is required."""
    body = CASES["openai.chat.usage-chunk"].body  # the stream without its usage chunk
    asked = b'{"stream": true, "stream_options": {"include_usage": true}}'
    assert [v.rule for v in check(body, provider="openai", request=asked)] == [
        "openai.chat.usage-chunk"
    ]
    assert check(body, provider="openai", request=b'{"stream": true}') == []
    assert check(body, provider="openai", request=RequestOptions()) == []


def test_check_interaction_detects_provider_and_reads_request() -> None:
    """An interaction is checked against the provider of its URL, with its request body."""
    body = base_body("openai-chat-text")
    url = "https://api.openai.com/v1/chat/completions"
    assert (
        check(_interaction(url, body, request_body=b'{"stream_options":{"include_usage":true}}'))
        == []
    )
    unrequested = check(_interaction(url, body, request_body=b'{"stream": true}'))
    assert {v.rule for v in unrequested} == {"openai.chat.usage-unrequested"}


def test_check_needs_a_provider() -> None:
    """Bytes without provider or URL, or an interaction that is no stream, are usage errors."""
    with pytest.raises(UsageError, match="cannot tell which provider"):
        check(b"data: 1\n\n")
    not_stream = Interaction(
        Request("GET", "https://api.openai.com/v1/models"),
        Response(200, headers=((b"content-type", b"application/json"),), frames=()),
        Ending(EndKind.COMPLETE, 1),
    )
    with pytest.raises(UsageError, match="not an event stream"):
        check(not_stream)


def test_assert_stream_ok_passes_real_streams() -> None:
    """assert_stream_ok is silent on a real stream."""
    assert_stream_ok(base_body("gemini-text"), provider="gemini")


def test_assert_stream_ok_lists_every_violation() -> None:
    """The failure is an AssertionError whose message lists each violation on its own line."""
    body = base_body("anthropic-text")[:-40]
    with pytest.raises(StreamContractError) as info:
        assert_stream_ok(body, provider="anthropic")
    assert isinstance(info.value, AssertionError)
    lines = str(info.value).splitlines()
    assert lines[0] == "stream contract violated (2 violation(s)):"
    assert lines[1].startswith("  error sse.unterminated at event 11, byte ")
    assert lines[2].startswith("  error anthropic.message-stop-last at byte ")
    assert [v.rule for v in info.value.violations] == [
        "sse.unterminated",
        "anthropic.message-stop-last",
    ]


def test_assert_stream_ok_warnings() -> None:
    """Warnings pass by default and fail with allow_warnings=False."""
    body = CASES["gemini.crlf"].body
    assert_stream_ok(body, provider="gemini")
    with pytest.raises(StreamContractError, match=r"warning gemini\.crlf"):
        assert_stream_ok(body, provider="gemini", allow_warnings=False)


def test_violation_str() -> None:
    """A violation renders as 'severity rule at event N, byte B: message'."""
    v = Violation("sse.json", "error", "data is not JSON", 3, 120)
    assert str(v) == "error sse.json at event 3, byte 120: data is not JSON"
    assert str(Violation("x", "warning", "m")) == "warning x: m"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("data: {}\n\n", "takes the body as bytes, not str: pass body.encode()"),
        (42, "not int"),
        ([b"data: ", "{}\n\n"], "frame 1 is str, not bytes"),
    ],
)
def test_wrong_body_types_are_one_line_usage_errors(source: object, message: str) -> None:
    """check() with a str body, a non-iterable or a str frame is a one-line UsageError saying
    what to pass, not a TypeError from deep inside."""
    with pytest.raises(UsageError) as info:
        check(source, provider="sse")  # type: ignore[arg-type]
    assert message in str(info.value) and "\n" not in str(info.value)


def test_non_stream_content_type_is_named_in_the_error() -> None:
    """A non-stream content type says so, instead of asking for provider= or url=."""
    with pytest.raises(UsageError, match="'text/html; charset=utf-8' is not an event stream"):
        check(b"<html>", content_type="text/html; charset=utf-8")
    with pytest.raises(UsageError, match=r"cannot tell which provider.*from the URL"):
        check(b"data: 1\n\n", url="https://example.com/stream")


def test_check_stream_names_dialect_and_notes() -> None:
    """check_stream() returns the provider, the dialect (URL host first, then payloads) and the
    dialect notes with the violations."""
    from replayproxy.checking import check_stream
    from tests.check.corpus_streams import load_corpus

    (mistral,) = [s for s in load_corpus() if s.name == "mistral-text.jsonl"]
    report = check_stream(mistral.body, provider="openai")
    assert report.provider == "openai-chat"
    assert report.dialect == "OpenAI-compatible (Mistral)"
    assert report.notes and report.errors == [] and report.warnings == []
    via_url = check_stream(mistral.body, url="https://my-llm.internal:11434/v1/chat/completions")
    assert via_url.dialect == "OpenAI-compatible (Ollama)"
