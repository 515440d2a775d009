"""--set-event-field: one JSON field inside event N changes; the event's framing, the other
bytes, the frame count and the frame times stay; clear errors for each bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.tools.edit import Edits, apply
from replayproxy._core.tools.event_field import parse_field_edit
from replayproxy._core.wire.events import event_spans
from replayproxy._core.wire.eventstream import decode_all, encode_event
from replayproxy._errors import FaultSpecError, UsageError
from replayproxy.testing import cassette, interaction, stream_interaction
from replayproxy.testing.strategies import cuts

FINAL = b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n'
EVENTS = [
    b'event: x\r\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}\r\n\r\n',
    FINAL,
    b"data: [DONE]\r\n\r\n",
]
POINTER = "/choices/0/finish_reason"


def edited(x: Interaction, *triples: tuple[int, str, str]) -> Interaction:
    edits = Edits(set_event_fields=tuple(parse_field_edit(*t) for t in triples))
    return apply(cassette(x), edits).interactions[0]


def body(x: Interaction) -> bytes:
    assert x.response is not None
    return x.response.body


def test_the_field_changes_and_everything_else_stays() -> None:
    """Only the value changes: compact JSON stays compact, CRLF endings and other events stay,
    and the frames keep their count and times."""
    x = stream_interaction("openai-chat-text", events=EVENTS)
    y = edited(x, (1, POINTER, '"length"'))
    assert body(y) == body(x).replace(b'"finish_reason":"stop"', b'"finish_reason":"length"')
    assert [f.offset_ns for f in y.frames] == [f.offset_ns for f in x.frames]
    assert y.end == x.end and y.request == x.request


def test_spaced_json_stays_spaced_and_a_new_member_is_added() -> None:
    """Spaced JSON is written spaced; a new last member of an existing object is added."""
    doc = {"type": "delta", "turn": {"id": "t1"}, "text": "é"}
    x = interaction([b"data: " + json.dumps(doc, ensure_ascii=False).encode() + b"\n\n"])
    y = edited(x, (0, "/turn/version", "3"), (0, "/text", '"ü"'))
    assert (
        body(y)
        == b'data: {"type": "delta", "turn": {"id": "t1", "version": 3}, "text": "\xc3\xbc"}\n\n'
    )


@given(st.data())
def test_any_frame_split_keeps_frame_count_and_times(data: st.DataObject) -> None:
    """However the event is split into frames, the edited body has the new value and each frame
    keeps its time (a frame is dropped only when the new bytes run out before it)."""
    whole = b"".join(EVENTS)
    points = data.draw(cuts(len(whole)))
    pieces = [whole[a:b] for a, b in zip([0, *points], [*points, len(whole)], strict=True)]
    x = stream_interaction("openai-chat-text", events=pieces)
    y = edited(x, (1, POINTER, '"length"'))
    assert body(y) == whole.replace(b'"stop"', b'"length"')
    times = [f.offset_ns for f in x.frames]
    assert len(y.frames) == len(x.frames)
    assert [f.offset_ns for f in y.frames] == times


def test_an_event_stream_message_gets_new_lengths_and_crcs() -> None:
    """A Bedrock message keeps its headers; its payload changes and it still decodes."""
    msg = encode_event("messageStop", b'{"stopReason":"end_turn","p":"ab"}')
    x = interaction([msg], headers=((b"content-type", b"application/vnd.amazon.eventstream"),))
    y = edited(x, (0, "/stopReason", '"max_tokens"'))
    [m] = decode_all(body(y))
    assert m.payload == b'{"stopReason":"max_tokens","p":"ab"}'  # type: ignore[union-attr]
    assert m.name == "messageStop"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("triple", "message"),
    [
        ((9, POINTER, '"x"'), "no event 9 (the stream has 3 events)"),
        ((1, "/choices/3/finish_reason", '"x"'), "has no /choices/3 (in the pointer"),
        ((1, "/nothing/here", '"x"'), "has no /nothing (in the pointer"),
        ((2, "/a", '"x"'), "event 2 (message) is not JSON ('[DONE]')"),
    ],
)
def test_bad_targets_name_the_interaction_event_and_pointer(
    triple: tuple[int, str, str], message: str
) -> None:
    """No event N, a missing pointer, an event that is not JSON: one line naming them."""
    x = stream_interaction("openai-chat-text", events=EVENTS)
    with pytest.raises(FaultSpecError) as info:
        edited(x, triple)
    assert message in str(info.value)
    assert str(info.value).startswith(
        "interaction 0 (POST /v1/chat/completions): --set-event-field"
    )


@pytest.mark.parametrize(
    ("triple", "message"),
    [
        ((1, POINTER, "length"), "the value is not JSON"),
        ((1, "choices", '"x"'), "JSON pointer must start with '/'"),
        ((1, "", '"x"'), "the pointer must name a field"),
        ((-1, POINTER, '"x"'), "N must be an event number"),
    ],
)
def test_bad_options_are_one_line_usage_errors(triple: tuple[int, str, str], message: str) -> None:
    """Invalid JSON, a bad pointer or a negative N is refused before any cassette is read."""
    with pytest.raises(UsageError, match=message):
        parse_field_edit(*triple)


def test_a_json_body_has_no_events() -> None:
    """A JSON (non-stream) response: the error says an event stream is needed."""
    x = interaction([b'{"a": 1}'], headers=((b"content-type", b"application/json"),))
    with pytest.raises(FaultSpecError, match="needs an event stream"):
        edited(x, (0, "/a", "2"))


def test_field_edit_comes_before_drop_and_duplicate() -> None:
    """Event numbers refer to the stream before the event edits: set 1, drop 0, duplicate 1."""
    x = stream_interaction("openai-chat-text", events=EVENTS)
    edits = Edits(
        set_event_fields=(parse_field_edit(1, POINTER, '"length"'),),
        drop_events=(0,),
        duplicate_events=(1,),
    )
    y = apply(cassette(x), edits).interactions[0]
    new = FINAL.replace(b'"stop"', b'"length"')
    assert [body(y)[s.start : s.end] for s in event_spans(body(y), None)] == [
        new,
        new,
        b"data: [DONE]\r\n\r\n",
    ]
