"""What the installed openai SDK does with the streams issue 25 names, read on a real loopback
server (plain iteration and the ``.stream()`` helpers), beside what the checker says about the
same bytes.

The three breakages the checker missed are errors now, each shown breaking the SDK; the five
false alarms give no error, each shown read fine by the SDK. One of them is not what the issue
says: a chunk after the finish carrying ``role`` makes the helper's role
``"assistantassistant"``, so that stream keeps ``openai.chat.role-repeated`` (only the
``openai.chat.after-finish`` false alarm goes).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from replayproxy._core.check import RequestOptions, StreamChecker
from tests.check.framing import payload_lines
from tests.check.sdk_server import serving

openai = pytest.importorskip("openai")

CHAT = [json.loads(p) for p in payload_lines("openai-chat-text")]
RESP = [json.loads(p) for p in payload_lines("openai-responses")]
FINISH = next(i for i, o in enumerate(CHAT) if o["choices"] and o["choices"][0]["finish_reason"])
TEXT = "".join(
    o["choices"][0]["delta"].get("content") or "" for o in CHAT if o["choices"]
)  # what a client should read


def chat_body(objs: list[dict[str, Any]], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in objs)
    return body + (b"data: [DONE]\n\n" if done else b"")


def responses_body(objs: list[dict[str, Any]], done: bool = False) -> bytes:
    body = b"".join(f"event: {o['type']}\ndata: {json.dumps(o)}\n\n".encode() for o in objs)
    return body + (b"data: [DONE]\n\n" if done else b"")


def checked(body: bytes, provider: str, url: str | None = None) -> StreamChecker:
    checker = StreamChecker(provider, url=url, request=RequestOptions(include_usage=True))
    checker.feed(body)
    checker.close()
    return checker


def errors(checker: StreamChecker) -> set[str]:
    return {v.rule for v in checker.violations if v.severity == "error"}


def _client(url: str) -> Any:
    return openai.OpenAI(base_url=url, api_key="test", max_retries=0)


def plain_text(body: bytes) -> str:
    """Plain iteration, the way most applications read a chat stream."""
    with serving(body) as (url, _):
        text = ""
        for chunk in _client(url).chat.completions.create(model="m", messages=[], stream=True):
            for choice in chunk.choices:
                if choice.delta.content:
                    text += choice.delta.content
        return text


def helper_final(body: bytes) -> Any:
    """The .stream() helper's get_final_completion()."""
    with (
        serving(body) as (url, _),
        _client(url).chat.completions.stream(model="m", messages=[]) as stream,
    ):
        for _ in stream:
            pass
        return stream.get_final_completion()


# --- the three missed breakages: now errors ----------------------------------------------


def test_object_chat_completion_on_every_chunk_breaks_the_helper() -> None:
    """openai.chat.object (regraded to error): the helper drops chunks whose object is not
    'chat.completion.chunk', so get_final_completion() raises AssertionError; plain iteration
    does not look at object (the text is read)."""
    objs = copy.deepcopy(CHAT)
    for o in objs:
        o["object"] = "chat.completion"
    body = chat_body(objs)
    with pytest.raises(AssertionError):
        helper_final(body)
    assert plain_text(body) == TEXT
    assert errors(checked(body, "openai-chat")) == {"openai.chat.object"}


def test_annotations_without_index_in_two_deltas_break_the_helper() -> None:
    """openai.chat.annotation-index: a second annotations delta without index makes the helper
    raise RuntimeError; one such delta alone (the near miss) is kept and passes."""
    cite = {"type": "url_citation", "url_citation": {"url": "https://a.example", "title": "a"}}
    once = copy.deepcopy(CHAT)
    once[1]["choices"][0]["delta"]["annotations"] = [cite]
    final = helper_final(chat_body(once))
    assert final.choices[0].message.content == TEXT
    assert errors(checked(chat_body(once), "openai-chat")) == set()
    twice = copy.deepcopy(once)
    twice[2]["choices"][0]["delta"]["annotations"] = [cite]
    with pytest.raises(RuntimeError, match="index"):
        helper_final(chat_body(twice))
    assert errors(checked(chat_body(twice), "openai-chat")) == {"openai.chat.annotation-index"}


def test_list_content_breaks_plain_concatenation_and_is_lost_by_the_helper() -> None:
    """openai.chat.content-type: `text += delta.content` raises TypeError on a list, and the
    helper's final message lacks that piece of text."""
    objs = copy.deepcopy(CHAT)
    piece = objs[1]["choices"][0]["delta"]["content"]
    assert piece
    objs[1]["choices"][0]["delta"]["content"] = [{"type": "text", "text": piece}]
    body = chat_body(objs)
    with pytest.raises(TypeError):
        plain_text(body)
    with pytest.warns(UserWarning):  # pydantic: the list is not the str the model declares
        final = helper_final(body)
    assert final.choices[0].message.content == TEXT.replace(piece, "", 1)
    assert errors(checked(body, "openai-chat")) == {"openai.chat.content-type"}


# --- the five false alarms: no error -------------------------------------------------------


def test_responses_stream_ending_with_done_is_read_whole() -> None:
    """openai-python stops at [DONE] on every stream type: a Responses stream with [DONE]
    after response.completed reads whole, by plain iteration and by the helper; the checker
    names it and reports no error."""
    body = responses_body(RESP, done=True)
    with serving(body) as (url, _):
        client = _client(url)
        kinds = [e.type for e in client.responses.create(model="m", input="hi", stream=True)]
        with client.responses.stream(model="m", input="hi") as stream:
            for _ in stream:
                pass
            final = stream.get_final_response()
    assert kinds == [o["type"] for o in RESP]
    assert final.status == "completed"
    checker = checked(body, "openai-responses")
    assert checker.violations == []
    assert any("[DONE] after the terminal event" in n for n in checker.notes)


def test_no_done_after_finish_and_usage_is_read_whole() -> None:
    """No [DONE] at all, with finish_reason and usage: both readers get the whole answer."""
    body = chat_body(CHAT, done=False)
    assert plain_text(body) == TEXT
    final = helper_final(body)
    assert final.choices[0].finish_reason == "stop" and final.usage is not None
    assert errors(checked(body, "openai-chat")) == set()


def test_no_finish_reason_with_usage_and_done_is_read_whole() -> None:
    """No finish_reason, but usage and [DONE]: the text is whole, finish_reason is None."""
    objs = copy.deepcopy(CHAT)
    for o in objs:
        for choice in o["choices"]:
            choice["finish_reason"] = None
    body = chat_body(objs)
    assert plain_text(body) == TEXT
    assert helper_final(body).choices[0].finish_reason is None
    assert errors(checked(body, "openai-chat")) == set()


def test_role_after_the_finish_is_no_content_but_the_helper_doubles_the_role() -> None:
    """A chunk after the finish with only role and content "": no text is added (no
    after-finish error any more), but the helper's role becomes 'assistantassistant', which
    openai.chat.role-repeated keeps reporting (measured, so not a false alarm)."""
    objs = copy.deepcopy(CHAT)
    extra = copy.deepcopy(objs[FINISH])
    extra["choices"][0] = {"index": 0, "delta": {"role": "assistant", "content": ""},
                           "finish_reason": None}  # fmt: skip
    objs.insert(FINISH + 1, extra)
    body = chat_body(objs)
    final = helper_final(body)
    assert final.choices[0].message.content == TEXT
    assert final.choices[0].message.role == "assistantassistant"
    assert errors(checked(body, "openai-chat")) == {"openai.chat.role-repeated"}


def test_a_resumed_responses_stream_is_read_by_plain_iteration() -> None:
    """GET /v1/responses/{id}?stream=true&starting_after=N starts at N+1, mid-text: plain
    iteration of responses.retrieve reads it; the checker told that URL (or not told, from the
    first sequence_number) reports no error."""
    start = next(i for i, o in enumerate(RESP) if o["type"] == "response.output_text.delta") + 1
    body = responses_body(RESP[start:])
    with serving(body) as (url, seen):
        events = list(
            _client(url).responses.retrieve("resp_1", stream=True, starting_after=start - 1)
        )
    assert seen == [f"GET /v1/responses/resp_1?starting_after={start - 1}&stream=true"]
    assert [e.sequence_number for e in events] == [o["sequence_number"] for o in RESP[start:]]
    told = checked(body, "openai-responses", url + seen[0].split(" ", 1)[1][3:])
    assert told.violations == []
    untold = checked(body, "openai-responses")
    assert untold.violations == [] and any("resumed" in n for n in untold.notes)


def test_an_empty_object_filter_chunk_is_skipped_by_the_helper_and_is_no_error() -> None:
    """Near miss of openai.chat.object: Azure OpenAI's asynchronous content filter sends
    chunks with object '' and no delta; the helper skips them on purpose and loses nothing,
    so the checker names them instead of reporting them."""
    objs = copy.deepcopy(CHAT)
    choice = {
        "index": 0,
        "finish_reason": None,
        "delta": {},
        "content_filter_offsets": {"start_offset": 0, "end_offset": 9},
        "content_filter_results": {"hate": {"filtered": False}},
    }
    objs.insert(3, {"id": "", "object": "", "created": 0, "model": "", "choices": [choice]})
    body = chat_body(objs)
    assert helper_final(body).choices[0].message.content == TEXT
    checker = checked(body, "openai-chat")
    assert errors(checker) == set()
    assert any("asynchronous content filter" in n for n in checker.notes)


def test_a_usage_chunk_repeating_the_finish_reason_is_read_fine() -> None:
    """OpenRouter's usage chunk repeats the finish_reason (same value): the helper's final
    completion keeps it, so it is a note; a bare duplicate of the finish chunk (no usage) is
    openai.chat.finish-repeated, a warning (the SDK oracle measures every client reading it
    fine), never an error."""
    objs = copy.deepcopy(CHAT)
    usage = objs.pop()  # the usage-only chunk
    assert usage["choices"] == []
    again = copy.deepcopy(objs[FINISH])
    again["usage"] = usage["usage"]
    body = chat_body([*objs, again])
    final = helper_final(body)
    assert final.choices[0].finish_reason == "stop" and final.usage is not None
    checker = checked(body, "openai-chat")
    assert errors(checker) == set()
    assert any("repeats the choice's finish_reason" in n for n in checker.notes)
    bare = chat_body([*objs[: FINISH + 1], objs[FINISH], *objs[FINISH + 1 :], usage])
    bare_checker = checked(bare, "openai-chat")
    assert errors(bare_checker) == set()
    assert "openai.chat.finish-repeated" in {v.rule for v in bare_checker.violations}
