"""WebSocket grammar rules (core/check/grammars/realtime.py): a clean session passes; a minimal
change breaks exactly one rule; checking a WebSocket interaction applies its faults first."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.check import RULES
from replayproxy._core.check.grammars.realtime import RULE_PREFIXES, check_session
from replayproxy._core.providers import detect
from replayproxy.checking import check, check_interaction
from replayproxy.testing import MS, ws_interaction

Events = list[dict[str, Any]]


def realtime_events() -> Events:
    r, i = {"response_id": "r1"}, {"response_id": "r1", "item_id": "i1", "content_index": 0}
    return [
        {"type": "session.created", "event_id": "e1", "session": {}},
        {"type": "response.created", "event_id": "e2", "response": {"id": "r1"}},
        {"type": "response.output_item.added", "event_id": "e3", **r, "item": {"id": "i1"}},
        {"type": "response.output_text.delta", "event_id": "e4", **i, "delta": "Hel"},
        {"type": "response.output_text.delta", "event_id": "e5", **i, "delta": "lo"},
        {"type": "response.output_text.done", "event_id": "e6", **i, "text": "Hello"},
        {"type": "response.output_item.done", "event_id": "e7", **r, "item": {"id": "i1"}},
        {"type": "response.done", "event_id": "e8", "response": {"id": "r1"}},
    ]


def gemini_events() -> Events:
    return [
        {"setupComplete": {}},
        {"serverContent": {"modelTurn": {"parts": [{"text": "Hel"}]}}},
        {"serverContent": {"modelTurn": {"parts": [{"text": "lo"}]}}},
        {"serverContent": {"turnComplete": True}},
    ]


def session(
    events: Events, *, binary: bool = False, raw: dict[int, WsMessage] | None = None
) -> WebSocketSession:
    msgs = [
        WsMessage(n * MS, False, not binary, json.dumps(e).encode()) for n, e in enumerate(events)
    ]
    for n, m in (raw or {}).items():
        msgs[n] = m
    return WebSocketSession(tuple(msgs), WsClose(99 * MS, WsCloseKind.CLOSE, 1000, "", True))


def without(events: Events, n: int) -> Events:
    return events[:n] + events[n + 1 :]


def edit(events: Events, n: int, **changes: Any) -> Events:
    return [*events[:n], {**events[n], **changes}, *events[n + 1 :]]


Case = tuple[str, WebSocketSession]
RT, GL = "openai-realtime", "gemini-live"


def _rt(events: Events, **kw: Any) -> Case:
    return RT, session(events, **kw)


def _gl(events: Events, **kw: Any) -> Case:
    return GL, session(events, binary=True, **kw)


def _binary_first() -> Case:
    first = WsMessage(0, False, False, json.dumps(realtime_events()[0]).encode())
    return _rt(realtime_events(), raw={0: first})


def _after_done() -> Case:
    extra = {"type": "response.content_part.added", "event_id": "e9", "response_id": "r1"}
    return _rt([*realtime_events(), extra])


def _delta_after_item_done() -> Case:
    ev = realtime_events()
    return _rt([*ev[:7], {**ev[4], "event_id": "late"}, ev[7]])


CASES: dict[str, Callable[[], Case]] = {
    "realtime.json": lambda: _rt(realtime_events(), raw={0: WsMessage(0, False, True, b"{oo")}),
    "realtime.binary": _binary_first,
    "realtime.session-first": lambda: _rt(without(realtime_events(), 0)),
    "realtime.event-id": lambda: _rt(edit(realtime_events(), 4, event_id="e4")),
    "realtime.response-done": lambda: _rt(without(realtime_events(), 7)),
    "realtime.response-open": _after_done,
    "realtime.delta-item": _delta_after_item_done,
    "realtime.done-text": lambda: _rt(edit(realtime_events(), 5, text="Help")),
    "gemini.live.json": lambda: _gl(gemini_events(), raw={2: WsMessage(0, False, False, b"\0")}),
    "gemini.live.setup-first": lambda: _gl(without(gemini_events(), 0)),
    "gemini.live.turn-complete": lambda: _gl(without(gemini_events(), 3)),
}


def test_every_websocket_rule_has_a_case() -> None:
    """The case table covers every realtime.* and gemini.live.* rule."""
    assert set(CASES) == {r for r in RULES if r.startswith(RULE_PREFIXES)}


@pytest.mark.parametrize(
    ("provider", "events"),
    [("openai-realtime", realtime_events()), ("gemini-live", gemini_events())],
)
def test_clean_sessions_pass(provider: str, events: Events) -> None:
    """A well-formed session (Gemini Live in binary frames, as it sends them) has no violation."""
    assert check_session(session(events, binary=provider == "gemini-live"), provider) == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_minimal_change_breaks_exactly_its_rule(rule: str) -> None:
    """Each case reports its rule, with the rule's severity, and no other."""
    provider, broken = CASES[rule]()
    violations = check_session(broken, provider)
    assert {v.rule for v in violations} == {rule}, [str(v) for v in violations]
    assert all(v.severity == RULES[rule].severity and "\n" not in v.message for v in violations)


def test_missing_response_done_says_how_the_session_ended() -> None:
    """The never-done response names how the socket ended (here: a server 1011)."""
    s = replace(
        session(without(realtime_events(), 7)), close=WsClose(0, WsCloseKind.CLOSE, 1011, "", False)
    )
    (v,) = check_session(s, "openai-realtime")
    assert "never reached response.done" in v.message and "server with 1011" in v.message


def test_detect_from_the_upgrade_url() -> None:
    """/v1/realtime is OpenAI Realtime, BidiGenerateContent is Gemini Live."""
    assert detect("wss://api.openai.com/v1/realtime?model=x", websocket=True) == "openai-realtime"
    assert (
        detect(
            "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
            websocket=True,
        )
        == "gemini-live"
    )
    assert detect("wss://example.com/socket", websocket=True) is None


def test_checking_an_interaction_applies_its_faults() -> None:
    """A clean recorded session passes; with close:events=4 the cut response never ends."""
    msgs = [
        replace(m, offset_ns=(n + 10) * MS)
        for n, m in enumerate(session(realtime_events()).messages)
    ]
    it = ws_interaction(msgs)
    assert check(it) == []
    report = check_interaction(it, faults=["close:events=4,code=1011"])
    assert report.provider == "openai-realtime"
    assert [v.rule for v in report.violations] == ["realtime.response-done"]
