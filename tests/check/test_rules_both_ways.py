"""Rules about where a stream ends, tested both ways: the terminal event missing, and something
after it; and each terminal error event as the last event (clean) or followed by more (flagged).

Assertions name the rule id, whether it fires, and at which event (not its severity, which is a
matter of grading, not of detection).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from replayproxy._core.check import RequestOptions, StreamChecker, check_body
from replayproxy._core.wire.eventstream import encode_event, encode_exception
from tests.check.framing import bedrock_messages, frame_sse, payload_lines

CHAT, ANTH, RESP, GEM = "openai-chat-text", "anthropic-text", "openai-responses", "gemini-text"
PROVIDER = {CHAT: "openai-chat", ANTH: "anthropic", RESP: "openai-responses", GEM: "gemini"}


def objs(name: str) -> list[Any]:
    return [json.loads(p) for p in payload_lines(name)]


def frames(name: str, items: list[Any] | None = None) -> list[bytes]:
    """The provider's framing of ``items`` (default: the real stream), one bytes per event
    (OpenAI Chat's last frame is ``data: [DONE]``)."""
    items = objs(name) if items is None else items
    return frame_sse(name, [json.dumps(o, separators=(",", ":")).encode() for o in items])


def found(name: str, events: list[bytes], rule: str) -> list[int | None]:
    """The event indexes where ``rule`` is reported for this body."""
    req = RequestOptions(include_usage=True) if name == CHAT else RequestOptions()
    violations = check_body(b"".join(events), PROVIDER[name], request=req)
    return [v.event for v in violations if v.rule == rule]


def all_rules(name: str, events: list[bytes]) -> set[str]:
    req = RequestOptions(include_usage=True) if name == CHAT else RequestOptions()
    return {v.rule for v in check_body(b"".join(events), PROVIDER[name], request=req)}


@pytest.mark.parametrize("name", [CHAT, ANTH, RESP, GEM])
def test_the_real_streams_are_clean(name: str) -> None:
    """The unedited streams these cases start from report nothing."""
    assert all_rules(name, frames(name)) == set()


# --- the terminal event: missing, and something after it ---------------------------------

TERMINAL = {
    CHAT: "openai.chat.done-last",
    ANTH: "anthropic.message-stop-last",
    RESP: "openai.responses.terminal",
}


@pytest.mark.parametrize("name", sorted(TERMINAL))
def test_a_missing_terminal_event_is_reported_at_the_end(name: str) -> None:
    """Without its terminal event ([DONE], message_stop, response.completed) the stream is
    reported once, for the stream as a whole. (OpenAI Chat: cut before its usage chunk too;
    finish_reason and usage without [DONE] is a named dialect, see below.)"""
    cut = 2 if name == CHAT else 1
    assert found(name, frames(name)[:-cut], TERMINAL[name]) == [None]


def test_openai_chat_without_done_after_finish_and_usage_is_a_dialect() -> None:
    """Near miss of openai.chat.done-last: a server that never sends [DONE] but sent every
    finish_reason and the usage gives no error, and the report names it."""
    checker = StreamChecker("openai-chat", request=RequestOptions(include_usage=True))
    checker.feed(b"".join(frames(CHAT)[:-1]))
    assert checker.close() == [] and checker.violations == []
    assert any("no data: [DONE]" in n for n in checker.notes)


@pytest.mark.parametrize("name", sorted(TERMINAL))
@pytest.mark.parametrize("extra", [1, 3])
def test_events_after_the_terminal_event_are_reported_once(name: str, extra: int) -> None:
    """An event after the terminal one is reported at the first such event, once however
    many follow."""
    ev = frames(name)
    after = ev + [ev[2]] * extra
    assert found(name, after, TERMINAL[name]) == [len(ev)]


def test_done_after_the_last_chunk_is_not_an_event_after_done() -> None:
    """[DONE] itself is where the stream ends: the clean stream has no done-last finding even
    though [DONE] follows the usage chunk (the rule fires on what comes after it)."""
    ev = frames(CHAT)
    assert ev[-1].startswith(b"data: [DONE]")
    assert found(CHAT, ev, "openai.chat.done-last") == []


# --- OpenAI Chat: finish_reason and the usage chunk, both ways ------------------------------


def test_openai_chat_finish_reason_missing_and_unknown() -> None:
    """A choice without finish_reason is reported at the end (unless usage and [DONE] end the
    stream: a named dialect, the near miss); an unknown one at its event."""
    items = objs(CHAT)
    at = next(i for i, o in enumerate(items) if o["choices"] and o["choices"][0]["finish_reason"])
    missing = [o for i, o in enumerate(items) if i != at]
    assert found(CHAT, frames(CHAT, missing), "openai.chat.finish-reason") == []
    no_usage = [o for o in missing if o.get("usage") is None]
    assert found(CHAT, frames(CHAT, no_usage), "openai.chat.finish-reason") == [None]
    items[at]["choices"][0]["finish_reason"] = "finished"
    assert found(CHAT, frames(CHAT, items), "openai.chat.finish-reason") == [at]


def test_openai_chat_content_after_finish_reason() -> None:
    """Content for a choice after its finish_reason is openai.chat.after-finish at that event."""
    items = objs(CHAT)
    at = next(i for i, o in enumerate(items) if o["choices"] and o["choices"][0]["finish_reason"])
    items.insert(at + 1, json.loads(json.dumps(items[at - 1])))
    assert found(CHAT, frames(CHAT, items), "openai.chat.after-finish") == [at + 1]


def test_openai_chat_usage_chunk_missing_and_not_last() -> None:
    """include_usage without a usage chunk is reported at the end (usage-chunk); a chunk with
    choices after the usage-only chunk is reported at that chunk (usage-order)."""
    items = objs(CHAT)
    assert items[-1]["usage"] and not items[-1]["choices"]
    assert found(CHAT, frames(CHAT, items[:-1]), "openai.chat.usage-chunk") == [None]
    moved = [*items[:-2], items[-1], items[-2]]
    assert found(CHAT, frames(CHAT, moved), "openai.chat.usage-order") == [len(items) - 1]
    assert found(CHAT, frames(CHAT, moved), "openai.chat.usage-chunk") == []


# --- Gemini: finishReason missing, and a candidate going on after it ------------------------


def test_gemini_finish_reason_missing_and_continued() -> None:
    """No finishReason is reported at the end; a candidate continuing after it, at that chunk."""
    items = objs(GEM)
    assert "finishReason" in items[-1]["candidates"][0]
    cut = json.loads(json.dumps(items))
    del cut[-1]["candidates"][0]["finishReason"]
    assert found(GEM, frames(GEM, cut), "gemini.finish-reason") == [None]
    more = json.loads(json.dumps(items[-1]))
    del more["candidates"][0]["finishReason"]
    assert found(GEM, frames(GEM, [*items, more]), "gemini.finish-reason") == [len(items)]


# --- error events: last is clean, anything after is flagged ---------------------------------

ERRORS: dict[str, tuple[str, Callable[[], Any]]] = {
    CHAT: (
        "openai.chat.error-terminal",
        lambda: {"error": {"message": "overloaded", "type": "server_error"}},
    ),
    ANTH: (
        "anthropic.error-terminal",
        lambda: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
    GEM: (
        "gemini.error-terminal",
        lambda: {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}},
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_error_event_as_the_last_event_is_clean(name: str) -> None:
    """A stream that ends with the provider's error event reports no error-terminal finding
    and no missing terminal event (the error is how it ended)."""
    rule, error = ERRORS[name]
    ev = frames(name, [*objs(name)[:2], error()])
    if name == CHAT:
        ev = ev[:-1]  # no [DONE] after an error chunk
    rules = all_rules(name, ev)
    assert rule not in rules and TERMINAL.get(name) not in rules


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_event_after_the_error_event_is_reported_once(name: str) -> None:
    """Events after the error event are reported at the first of them, once."""
    rule, error = ERRORS[name]
    items = objs(name)
    ev = frames(name, [*items[:2], error(), *items[2:]])
    assert found(name, ev, rule) == [3]


def test_done_after_an_openai_error_chunk_is_harmless() -> None:
    """[DONE] right after the error chunk is what the API sends: not an event after the error."""
    _, error = ERRORS[CHAT]
    ev = frames(CHAT, [*objs(CHAT)[:3], error()])
    assert ev[-1].startswith(b"data: [DONE]")
    assert found(CHAT, ev, "openai.chat.error-terminal") == []


def _bedrock(events: list[bytes]) -> set[str]:
    return {v.rule for v in check_body(b"".join(events), "bedrock-converse")}


def _bedrock_at(events: list[bytes], rule: str) -> list[int | None]:
    return [v.event for v in check_body(b"".join(events), "bedrock-converse") if v.rule == rule]


def test_bedrock_exception_last_is_clean_and_anything_after_is_flagged() -> None:
    """A throttlingException as the last message ends the stream cleanly (no converse-end);
    a message after it is bedrock.exception-terminal at that message, once."""
    bm = bedrock_messages()
    exc = encode_exception("throttlingException", b'{"message":"slow down"}')
    assert _bedrock([*bm[:3], exc]) == set()
    assert _bedrock_at([*bm[:3], exc, *bm[3:]], "bedrock.exception-terminal") == [4]


def test_bedrock_converse_end_missing_metadata_or_stop() -> None:
    """Without metadata, or without messageStop and metadata, the stream is converse-end;
    a content block after messageStop is out of order."""
    bm = bedrock_messages()
    assert _bedrock_at(bm[:-1], "bedrock.converse-end") == [None]
    assert _bedrock_at(bm[:-2], "bedrock.converse-end") == [None]
    late = encode_event("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"x"}}')
    assert _bedrock_at([*bm, late], "bedrock.converse-order") == [len(bm)]
