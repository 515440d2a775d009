"""The SDK behaviour behind the generic SSE rules, shown with the real SDK decoders.

Each test feeds a stream that breaks one ``sse.*`` rule (from the rule cases) to the SSE
decoders shipped in the installed ``openai`` and ``anthropic`` packages, and shows the harm the
rule's documentation claims: a lost event, or ``.json()`` raising.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from replayproxy._core.check import check_body
from replayproxy._core.wire.sse import parse_events
from tests.check.cases import CASES, base_body


def _decoders() -> list[tuple[str, Callable[[], Any]]]:
    out = []
    for module in ("openai._streaming", "anthropic._streaming"):
        mod = pytest.importorskip(module)
        out.append((module, mod.SSEDecoder))
    return out


def _sdk_events(decoder: Callable[[], Any], body: bytes) -> list[Any]:
    return list(decoder().iter_bytes(iter([body])))


@pytest.mark.parametrize(("module", "decoder"), _decoders())
def test_bom_breaks_the_first_event_in_the_sdks(module: str, decoder: Callable[[], Any]) -> None:
    """sse.bom: the SDK decoders keep the BOM in the first field name, so a data-only first
    event (OpenAI) vanishes and a named one (Anthropic) loses its name, which the anthropic
    SDK's Stream then ignores."""
    chat = base_body("openai-chat-text")
    expected = [e.data for e in parse_events(chat)]
    assert [e.data for e in _sdk_events(decoder, b"\xef\xbb\xbf" + chat)] == expected[1:]
    body = CASES["sse.bom"].body
    assert [v.rule for v in check_body(body, "anthropic")] == ["sse.bom"]
    first = _sdk_events(decoder, body)[0]
    assert first.event is None and first.json()["type"] == "message_start"


@pytest.mark.parametrize(("module", "decoder"), _decoders())
def test_unterminated_last_event_is_lost_silently(module: str, decoder: Callable[[], Any]) -> None:
    """sse.unterminated: the SDKs yield every event but the unterminated last one, no error."""
    body = CASES["sse.unterminated"].body
    assert body.endswith(b'data: {"type":"ping"}\n')
    sdk = [e.data for e in _sdk_events(decoder, body)]
    assert sdk == [e.data for e in parse_events(base_body("anthropic-text"))]


@pytest.mark.parametrize(("module", "decoder"), _decoders())
def test_extra_blank_line_after_id_makes_json_raise(
    module: str, decoder: Callable[[], Any]
) -> None:
    """sse.empty-event: after an id:, an extra blank line becomes an empty event; .json() raises."""
    events = _sdk_events(decoder, CASES["sse.empty-event"].body)
    assert events[1].data == ""
    with pytest.raises(json.JSONDecodeError):
        events[1].json()


@pytest.mark.parametrize(("module", "decoder"), _decoders())
def test_non_json_data_makes_json_raise(module: str, decoder: Callable[[], Any]) -> None:
    """sse.json: the SDK's .json() raises a raw JSONDecodeError on the broken payload."""
    events = _sdk_events(decoder, CASES["sse.json"].body)
    broken = [e for e in events if e.event == "ping"]
    with pytest.raises(json.JSONDecodeError):
        broken[0].json()


def _accumulated_delta(body: bytes) -> dict[Any, Any]:
    """Choice 0's delta as openai-python's accumulate_delta builds it from the stream."""
    deltas = pytest.importorskip("openai.lib.streaming._deltas")
    acc: dict[Any, Any] = {}
    for event in parse_events(body):
        if event.data == "[DONE]":
            continue
        for choice in json.loads(event.data)["choices"]:
            acc = deltas.accumulate_delta(acc, choice["delta"])
    return acc


def test_repeated_tool_call_name_is_doubled_by_openai() -> None:
    """openai.chat.tool-call-repeat: accumulate_delta concatenates the resent function name."""
    case = CASES["openai.chat.tool-call-repeat"]
    assert [v.rule for v in check_body(case.body, "openai-chat", request=case.request)] == [
        "openai.chat.tool-call-repeat"
    ]
    assert (
        _accumulated_delta(base_body("openai-chat-tool-call"))["tool_calls"][0]["function"]["name"]
        == "weather"
    )
    assert _accumulated_delta(case.body)["tool_calls"][0]["function"]["name"] == "weatherweather"


def test_repeated_role_is_doubled_by_openai() -> None:
    """openai.chat.role-repeated: accumulate_delta concatenates a resent role."""
    assert _accumulated_delta(base_body("openai-chat-text"))["role"] == "assistant"
    assert _accumulated_delta(CASES["openai.chat.role-repeated"].body)["role"] == (
        "assistantassistant"
    )
