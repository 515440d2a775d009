"""Events by meaning: types, JSON fields, volatile fields dropped (provider, contract, user)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.providers import DEFINITIONS, Provider
from replayproxy._core.tools.meaning import (
    EventMeaning,
    RawEvent,
    body_events,
    body_meaning,
    drop_paths,
    event_meaning,
    normalise,
    volatile_paths,
)
from replayproxy._core.wire.events import NotAStreamError
from replayproxy._core.wire.eventstream import encode_event
from replayproxy._core.wire.sse import SSEParser
from replayproxy._errors import UsageError
from replayproxy.testing.strategies import splits, sse_streams

CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "system_fingerprint": "fp_1",
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}],
}


def sse(*payloads: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return b"".join(
        (head + "data: " + (p if isinstance(p, str) else json.dumps(p)) + "\n\n").encode()
        for p in payloads
    )


@dataclass(frozen=True)
class FakeContract:
    """What meaning reads of a contract: ``volatile`` as ``(event_type, pointer)`` pairs
    (``Contract.volatile``, ``"*"`` for every type), or bare pointers / dotted paths."""

    volatile: tuple[tuple[str, str] | str, ...] = ()
    type_field: str | None = None


def test_openai_chunk_keeps_its_meaning_without_ids_and_times() -> None:
    """An OpenAI chunk's type is its object; id, created and system_fingerprint are dropped."""
    [m] = body_meaning(sse(CHUNK), "text/event-stream", provider="openai-chat")
    assert m.type == "chat.completion.chunk"
    assert set(m.data) == {"object", "model", "choices"}
    assert m.data["choices"][0]["delta"] == {"content": "Hi"}


def test_two_recordings_with_other_ids_mean_the_same() -> None:
    """Chunks differing only in id, created, fingerprint and a tool call id mean the same."""
    other = {**CHUNK, "id": "chatcmpl-2", "created": 1700000099, "system_fingerprint": "fp_9"}
    tool = {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a"}]}}
    tool_b = {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_b"}]}}
    a = body_meaning(sse(CHUNK, {**CHUNK, "choices": [tool]}, "[DONE]"), None, provider="openai")
    b = body_meaning(sse(other, {**other, "choices": [tool_b]}, "[DONE]"), None, provider="openai")
    assert a == b
    assert a[-1] == EventMeaning("message", "[DONE]")


def test_sse_event_name_is_the_type_and_message_falls_back_to_json_type() -> None:
    """The SSE event: name wins; without it the JSON type field; else "message"."""
    named = body_meaning(sse({"type": "x"}, event="delta"), "text/event-stream")
    typed = body_meaning(sse({"type": "x"}), "text/event-stream")
    plain = body_meaning(sse({"n": 1}, "hello"), "text/event-stream")
    assert [m.type for m in named + typed + plain] == ["delta", "x", "message", "message"]
    assert plain[1].data == "hello"


def test_contract_type_field_and_volatile_fields() -> None:
    """A contract's dotted type field names the type; its volatile fields (for every type or
    for one type; pointers or dotted paths) and the user's pointers are dropped."""
    contract = FakeContract(
        volatile=(("*", "/turn/id"), ("delta", "/at"), ("committed", "/x"), "seq"),
        type_field="kind",
    )
    body = sse({"kind": "delta", "turn": {"id": "t1", "n": 2}, "at": 5, "x": 1, "y": 2, "seq": 3})
    [m] = body_meaning(body, "text/event-stream", contract=contract, ignore=["/y"])
    assert m == EventMeaning("delta", {"kind": "delta", "turn": {"n": 2}, "x": 1})


def test_wildcards_drop_every_key_or_item() -> None:
    """``*`` in a pointer matches every key of an object and every item of a list."""
    doc = {"a": [{"id": 1, "v": 1}, {"id": 2, "v": 2}], "b": {"x": {"id": 3}, "y": {"id": 4}}}
    out = drop_paths(doc, [("a", "*", "id"), ("b", "*", "id")])
    assert out == {"a": [{"v": 1}, {"v": 2}], "b": {"x": {}, "y": {}}}
    assert doc["a"][0] == {"id": 1, "v": 1}  # the input is not changed


def test_bad_ignore_pointer_names_where_it_came_from() -> None:
    """An ignore pointer that is not a JSON pointer is a one-line UsageError naming it."""
    with pytest.raises(UsageError, match=r"ignore: JSON pointer must start with '/': 'id'"):
        volatile_paths(ignore=["id"])


@pytest.mark.parametrize("d", DEFINITIONS, ids=lambda d: d.provider.value)
def test_every_provider_volatile_pointer_parses(d: Any) -> None:
    """Each definition's volatile pointers parse (volatile_paths reads them all)."""
    assert len(volatile_paths(d.provider)) == len(set(d.volatile))


def test_bedrock_invoke_chunk_is_read_inside_its_bytes() -> None:
    """An InvokeModel chunk's base64 "bytes" is decoded, so the message id inside is dropped."""
    inner = {"type": "message_start", "message": {"id": "msg_1", "role": "assistant"}}
    payload = json.dumps(
        {"bytes": base64.b64encode(json.dumps(inner).encode()).decode(), "p": "abc"}
    )
    body = encode_event("chunk", payload.encode())
    [m] = body_meaning(body, "application/vnd.amazon.eventstream", provider=Provider.BEDROCK_INVOKE)
    assert m == EventMeaning(
        "chunk", {"bytes": {"type": "message_start", "message": {"role": "assistant"}}}
    )


def test_ndjson_lines_are_events_and_an_unterminated_line_is_not() -> None:
    """NDJSON: one event per complete line, blank lines skipped, a partial last line left out."""
    body = b'{"type": "a"}\n\n{"type": "b"}\r\n{"type": "c"'
    assert body_events(body, "application/x-ndjson") == [
        RawEvent(None, '{"type": "a"}'),
        RawEvent(None, '{"type": "b"}'),
    ]


def test_a_json_body_is_not_a_stream() -> None:
    """A JSON body has no events: NotAStreamError, as for every event reader."""
    with pytest.raises(NotAStreamError):
        body_meaning(b'{"a": 1}', "application/json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["id", "a", "b"]), inner, max_size=3)
    ),
    max_leaves=10,
)
pointers = st.lists(st.sampled_from(["/id", "/a/id", "/*/id", "/a/*", "/b/0"]), max_size=3)


@given(st.lists(json_values, max_size=4), pointers)
def test_normalising_is_idempotent(values: list[Any], ignore: list[str]) -> None:
    """Dropping the volatile fields twice gives what dropping them once gave."""
    paths = volatile_paths("openai-chat", ignore=ignore)
    once = normalise([EventMeaning("t", v) for v in values], paths)
    assert normalise(once, paths) == once


@given(st.data())
def test_any_split_of_a_body_gives_the_same_meaning(data: st.DataObject) -> None:
    """Events parsed from any split of the reads mean what the whole body means."""
    body = b"".join(data.draw(sse_streams()))
    parser = SSEParser()
    events = [e for piece in data.draw(splits(body)) for e in parser.feed(piece)]
    events += parser.close()
    raws = [RawEvent(e.event if e.event != "message" else None, e.data) for e in events]
    split = [event_meaning(r.name, r.text) for r in raws]
    assert split == body_meaning(body, "text/event-stream")
