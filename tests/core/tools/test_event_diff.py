"""Differences by meaning: one line per changed field with both values, events added and
removed, never cut before the difference; cassettes compared per interaction pair."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import EndKind, Request
from replayproxy._core.cassette.websocket import WsMessage
from replayproxy._core.tools.event_diff import EventDifference, diff_events, diff_meanings
from replayproxy._core.tools.meaning import EventMeaning
from replayproxy.testing import (
    cassette,
    interaction,
    realtime_turns,
    stream_interaction,
    ws_interaction,
)


def chunk(i: int, *, finish: str | None = None, created: int = 1, id_: str = "c1") -> bytes:
    doc = {
        "id": id_,
        "object": "chat.completion.chunk",
        "created": created,
        "choices": [{"index": 0, "delta": {"content": f"w{i}"}, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def turn(
    *,
    finish: str = "stop",
    created: int = 1,
    id_: str = "c1",
    gap: float = 20,
    host: str | None = None,
) -> Any:
    events = [chunk(i, created=created, id_=id_) for i in range(3)]
    events += [chunk(3, finish=finish, created=created, id_=id_), b"data: [DONE]\n\n"]
    return stream_interaction("openai-chat-text", events=events, gap_ms=gap, host=host)


def test_a_changed_field_is_one_line_with_both_values() -> None:
    """A changed finish_reason is one line naming the event, its type, the pointer and values."""
    a = [EventMeaning("chunk", {"choices": [{"finish_reason": "stop"}]})]
    b = [EventMeaning("chunk", {"choices": [{"finish_reason": "length"}]})]
    [d] = diff_meanings(a, b)
    assert d.line == 'event 0 (chunk): /choices/0/finish_reason: "stop" → "length"'


def test_added_removed_and_retyped_events() -> None:
    """An inserted event is "added" (numbered in B), a missing one "removed", a type change
    its own line."""
    x, y, z = (EventMeaning("t", {"n": n}) for n in range(3))
    assert [d.line for d in diff_meanings([x, y], [x, z, y])] == [
        'event 1 of B (t): added {"n": 2}'
    ]
    assert [d.line for d in diff_meanings([x, y, z], [x, z])] == [
        'event 1 (t): removed (was {"n": 1})'
    ]
    assert [d.line for d in diff_meanings([x], [EventMeaning("u", {"n": 0})])] == [
        'event 0 (t): type: "t" → "u"'
    ]


def test_members_added_and_removed_inside_an_event() -> None:
    """A key only on one side is reported as added or removed at its pointer."""
    a = [EventMeaning("t", {"a": 1, "b": {"c": 2}})]
    b = [EventMeaning("t", {"a": 1, "b": {"d": 2}})]
    assert [d.line for d in diff_meanings(a, b)] == [
        "event 0 (t): /b/c: removed (was 2)",
        "event 0 (t): /b/d: added 2",
    ]


def test_a_long_value_is_cut_after_the_difference_not_before() -> None:
    """Two long texts differing at the end show the differing part on both sides."""
    text = "word " * 100
    [d] = diff_meanings(
        [EventMeaning("t", {"text": text + "stop"})], [EventMeaning("t", {"text": text + "length"})]
    )
    assert "stop" in d.a and "length" in d.b
    assert len(d.a) < len(text)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 3)), max_size=8))
def test_a_list_has_no_difference_with_itself(items: list[tuple[str, int]]) -> None:
    """diff_meanings(x, x) is empty for any event list."""
    events = [EventMeaning(t, {"n": n}) for t, n in items]
    assert diff_meanings(events, list(events)) == []


def test_two_recordings_of_one_turn_show_no_difference() -> None:
    """Other ids, created times, hosts, ports and timing: no difference by meaning."""
    a = cassette(turn(host="http://127.0.0.1:8123"))
    b = cassette(turn(created=99, id_="c2", gap=57, host="http://127.0.0.1:9456"))
    assert diff_events(a, b) == []


def test_a_changed_finish_reason_shows_one_line() -> None:
    """A changed finish reason is the one difference, with both values."""
    [d] = diff_events(cassette(turn()), cassette(turn(finish="length")))
    assert (d.level, d.a_index, d.b_index) == ("event", 0, 0)
    assert (d.what, d.a, d.b) == ("event 3 (chat.completion.chunk): /choices/0/finish_reason",
                                  '"stop"', '"length"')  # fmt: skip


def test_status_ending_and_unpaired_interactions() -> None:
    """The status and the ending are compared; an interaction only in B is listed."""
    a = cassette(turn())
    b = cassette(
        replace(turn(), end=replace(turn().end, kind=EndKind.RESET)),
        interaction([b"{}"], request=Request("GET", "https://api.openai.com/v1/models")),
    )
    found = [(d.what, d.a, d.b) for d in diff_events(a, b)]
    assert found == [("end", "complete", "reset"), ("only in B", "", "")]


def test_non_stream_bodies_are_compared_as_bytes() -> None:
    """JSON bodies (no events) differ when their bytes differ."""
    req = Request("GET", "https://api.openai.com/v1/models")
    a = cassette(
        interaction([b'{"a": 1}'], request=req, headers=((b"content-type", b"application/json"),))
    )
    b = cassette(
        interaction([b'{"a": 2}'], request=req, headers=((b"content-type", b"application/json"),))
    )
    [d] = diff_events(a, b)
    assert d.what == "body (not an event stream on both sides)"
    assert diff_events(a, a) == []


def test_websocket_messages_are_compared_by_meaning() -> None:
    """A Realtime session: other event, response and item ids mean the same; a changed delta
    is one line; a client message is typed as the client's."""
    turns = realtime_turns()

    def edited(old: bytes, new: bytes) -> list[WsMessage]:
        return [replace(m, data=m.data.replace(old, new)) for m in turns]

    ids = [replace(m, data=m.data.replace(b'"r1"', b'"r9"').replace(b'"i1"', b'"i9"'))
           for m in edited(b'"event_id": "', b'"event_id": "x-')]  # fmt: skip
    a = cassette(ws_interaction(turns))
    assert diff_events(a, cassette(ws_interaction(ids))) == []
    [d] = diff_events(a, cassette(ws_interaction(edited(b'"w2 "', b'"w2!"'))))
    assert EventDifference(d.what, d.a, d.b).line == (
        'event 7 (response.output_text.delta): /delta: "w2 " → "w2!"'
    )
    [d] = diff_events(a, cassette(ws_interaction(edited(b'"x": 1', b'"x": 2'))))
    assert d.what == "event 1 (client session.update): /session/x"
