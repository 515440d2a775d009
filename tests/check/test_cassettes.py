"""The checker on cassettes: the example cassettes pass, faulted ones fail with the rule the
fault breaks, and non-stream interactions are skipped with a reason."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy.checking import check_cassette, check_interaction

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = sorted((ROOT / "cassettes").glob("*.cassette"))


@pytest.mark.skipif(not CASSETTES, reason="no example cassettes in cassettes/ yet")
@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_example_cassettes_pass(path: Path) -> None:
    """Every interaction of every example cassette is a stream with no contract error."""
    reports = check_cassette(path)
    assert reports
    for report in reports:
        assert report.skipped is None and report.provider is not None
        assert report.errors == [], [str(v) for v in report.errors]


# cassette -> [(fault, rule it must trigger)]
FAULTS = {
    "openai-chat-text": [
        ("truncate:events=2", "openai.chat.done-last"),
        ("truncate:events=10", "openai.chat.finish-reason"),
        ("corrupt:event=5", "sse.json"),
        ("drop:event=0", "openai.chat.role-first"),
    ],
    "anthropic-text": [
        ("truncate", "anthropic.message-stop-last"),
        ("drop:event=1", "anthropic.block-nesting"),
        ("corrupt:event=3", "sse.json"),
        ("duplicate:event=0", "anthropic.message-start-first"),
    ],
    "anthropic-tool-use": [
        ("corrupt:event=3", "sse.json"),
        ("drop:event=4", "anthropic.partial-json"),
    ],
    "openai-responses": [
        ("truncate", "openai.responses.terminal"),
        ("drop:event=2", "openai.responses.sequence"),
        ("reorder:event=5", "openai.responses.sequence"),
        ("corrupt:event=4", "sse.json"),
    ],
    "gemini-text": [
        ("truncate:events=2", "gemini.finish-reason"),
        ("drop:event=2", "gemini.finish-reason"),
        ("corrupt:event=0", "sse.json"),
        ("keepalive:every=0.01", "gemini.data-prefix"),
    ],
}
FAULT_CASES = [
    (name, fault, rule) for name, pairs in FAULTS.items() for fault, rule in pairs
]  # fmt: skip


@pytest.mark.parametrize(("name", "fault", "rule"), FAULT_CASES)
def test_faulted_cassette_fails_with_the_expected_rule(name: str, fault: str, rule: str) -> None:
    """A replay-time fault (truncate, drop, corrupt ...) makes the check report its rule."""
    path = ROOT / "cassettes" / f"{name}.cassette"
    if not path.exists():
        pytest.skip(f"{path.name} not generated yet")
    (report,) = check_cassette(path, faults=[fault])
    assert rule in {v.rule for v in report.errors} | {v.rule for v in report.warnings}, [
        str(v) for v in report.violations
    ]


def test_stored_faults_are_applied() -> None:
    """Faults stored in the interaction (cassette edits) are checked as they will be replayed."""
    path = ROOT / "cassettes" / "anthropic-text.cassette"
    if not path.exists():
        pytest.skip("anthropic-text.cassette not generated yet")
    (interaction,) = store.load(path).interactions
    assert check_interaction(interaction).violations == ()
    faulted = replace(interaction, faults=("truncate",))
    rules = [v.rule for v in check_interaction(faulted).violations]
    assert rules == ["anthropic.message-stop-last"]


def _interaction(status: int, content_type: bytes | None, body: bytes) -> Interaction:
    headers = () if content_type is None else ((b"content-type", content_type),)
    return Interaction(
        Request("POST", "https://api.openai.com/v1/chat/completions"),
        Response(status, headers=headers, frames=(Frame(1000, body),)),
        Ending(EndKind.COMPLETE, 2000),
    )


def test_non_stream_interactions_are_skipped_with_a_reason() -> None:
    """JSON responses, error statuses and missing responses are skipped, not failed."""
    cassette = Cassette(
        (
            _interaction(200, b"application/json", b'{"id": "x"}'),
            _interaction(429, b"application/json", b'{"error": {}}'),
            Interaction(
                Request("POST", "https://api.openai.com/v1/chat/completions"),
                None,
                Ending(EndKind.NO_RESPONSE, 5),
            ),
            _interaction(200, b"text/event-stream", b"data: [DONE]\n\n"),
        )
    )
    reports = check_cassette(cassette)
    assert [r.skipped for r in reports] == [
        "application/json: not an event stream",
        "HTTP 429: an error response, not a stream",
        "no response",
        None,
    ]
    assert [r.index for r in reports] == [0, 1, 2, 3]
    assert reports[3].provider == "openai-chat" and reports[3].violations == ()


def test_explicit_provider_overrides_detection() -> None:
    """provider= checks an interaction against that contract, content type included."""
    interaction = _interaction(200, b"text/event-stream", b"data: [DONE]\n\n")
    report = check_interaction(interaction, provider="anthropic")
    assert report.provider == "anthropic"
    # [DONE] is not JSON and there is no message_stop: both rules say so
    assert {v.rule for v in report.violations} == {"sse.json", "anthropic.message-stop-last"}
