"""The OpenAI Chat Completions grammar's rules, each branch: small streams and the exact report for
each (rule, event, message), both ways where a rule has two ([DONE] or finish_reason missing,
something after it), and the dialect notes a stream earns."""

from __future__ import annotations

from typing import Any

import pytest

from replayproxy._core.check import RequestOptions, StreamChecker
from tests.check.reports import check_events, sse_event

REQUEST = RequestOptions(include_usage=True)
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def chunk(*choices: dict[str, Any], **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "gpt-x",
        "choices": list(choices),
    }
    obj.update(extra)
    return {k: v for k, v in obj.items() if v is not ...}


def ch(index: Any = 0, finish: Any = None, **delta: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish}


def call(
    t: Any,
    args: str = "",
    *,
    id: str | None = None,
    name: str | None = None,
    typ: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"index": t, "function": {"arguments": args}}
    if id is not None:
        out["id"] = id
    if typ is not None:
        out["type"] = typ
    if name is not None:
        out["function"]["name"] = name
    return out


def first_call(t: int = 0, args: str = "") -> dict[str, Any]:
    return call(t, args, id=f"call_{t}", name="f", typ="function")


def c(obj: Any, name: str | None = None) -> bytes:
    return sse_event(obj, name)


FIRST = c(chunk(ch(role="assistant", content="")))
TEXT = c(chunk(ch(content="hi")))
FINISH = c(chunk(ch(finish="stop")))
USAGE_CHUNK = c(chunk(usage=USAGE))
DONE = c("[DONE]")
BODY = [FIRST, TEXT, FINISH, USAGE_CHUNK]
ERROR = c({"error": {"message": "overloaded", "type": "server_error"}})

STREAMS: dict[str, list[bytes]] = {
    "clean": [*BODY, DONE],
    "event-field-once": [
        c(chunk(ch(role="assistant")), "message"),
        c(chunk(ch(content="x")), "x"),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "after-done-once": [*BODY, DONE, TEXT, TEXT],
    "after-error-once": [FIRST, ERROR, TEXT, DONE, TEXT],
    "error-null-is-not-an-error": [
        FIRST,
        c(chunk(ch(content="x"), error=None)),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "chunk-a-string": [FIRST, c('"hello"'), FINISH, USAGE_CHUNK, DONE],
    "not-json-is-left-to-sse": [FIRST, c("{oops"), FINISH, USAGE_CHUNK, DONE],
    "azure-preamble-with-choices-is-checked": [
        c(chunk(ch(role="assistant"), object="", prompt_filter_results=[])),
        *BODY[1:],
        DONE,
    ],
    "object-missing": [FIRST, c(chunk(ch(content="x"), object=...)), FINISH, USAGE_CHUNK, DONE],
    "object-done-is-named": [*BODY[:3], c(chunk(object="chat.completion.done", usage=USAGE)), DONE],
    "obfuscation-a-string": [FIRST, c(chunk(ch(content="x"), obfuscation="abc")), *BODY[2:], DONE],
    "usage-order-once": [FIRST, USAGE_CHUNK, TEXT, TEXT, FINISH, DONE],
    "id-and-model-change-once": [
        FIRST,
        c(chunk(ch(content="x"), id="c2", model="m2")),
        c(chunk(ch(content="x"), id="c3", model="m3")),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "model-changes-without-id": [
        c(chunk(ch(role="assistant"), id=None)),
        c(chunk(ch(content="x"), id=None, model="m2")),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "fingerprint-changes": [
        c(chunk(ch(role="assistant"), system_fingerprint="fp1")),
        c(chunk(ch(content="x"), system_fingerprint="fp2")),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "created-forward-is-named": [
        FIRST,
        c(chunk(ch(content="x"), created=8)),
        c(chunk(ch(finish="stop"), created=8)),
        c(chunk(usage=USAGE, created=8)),
        DONE,
    ],
    "created-back-once": [
        c(chunk(ch(role="assistant"), created=9)),
        c(chunk(ch(content="x"), created=8)),
        c(chunk(ch(content="x"), created=9)),
        c(chunk(ch(content="x"), created=3)),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "created-not-an-int": [
        c(chunk(ch(role="assistant"), created="9")),
        TEXT,
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "usage-on-the-finish-chunk": [FIRST, TEXT, c(chunk(ch(finish="stop"), usage=USAGE)), DONE],
    "usage-on-content-chunks": [FIRST, c(chunk(ch(content="x"), usage=USAGE)), FINISH, DONE],
    "usage-with-reasoning-tokens": [
        *BODY[:3],
        c(
            chunk(
                usage={
                    "prompt_tokens": 3,
                    "completion_tokens": 2,
                    "total_tokens": 9,
                    "completion_tokens_details": {"reasoning_tokens": 4},
                }
            )
        ),
        DONE,
    ],
    "usage-total-wrong-with-reasoning": [
        *BODY[:3],
        c(
            chunk(
                usage={
                    "prompt_tokens": 3,
                    "completion_tokens": 2,
                    "total_tokens": 8,
                    "completion_tokens_details": {"reasoning_tokens": 4},
                }
            )
        ),
        DONE,
    ],
    "usage-details-not-an-object": [
        *BODY[:3],
        c(
            chunk(
                usage={
                    "prompt_tokens": 3,
                    "completion_tokens": 2,
                    "total_tokens": 5,
                    "completion_tokens_details": [4],
                }
            )
        ),
        DONE,
    ],
    "usage-details-not-an-object-no-reasoning": [
        *BODY[:3],
        c(
            chunk(
                usage={
                    "prompt_tokens": 3,
                    "completion_tokens": 2,
                    "total_tokens": 6,
                    "completion_tokens_details": [1],
                }
            )
        ),
        DONE,
    ],
    "usage-counts-not-ints": [
        *BODY[:3],
        c(chunk(usage={"prompt_tokens": "3", "completion_tokens": 2, "total_tokens": 9})),
        DONE,
    ],
    "usage-not-an-object": [*BODY[:3], c(chunk(usage=[5])), DONE],
    "choice-without-index": [
        FIRST,
        c(chunk({"delta": {"content": "x"}})),
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "delta-null-on-the-finish-chunk": [
        FIRST,
        TEXT,
        c(chunk({"index": 0, "delta": None, "finish_reason": "stop"})),
        USAGE_CHUNK,
        DONE,
    ],
    "choice-not-an-object": [FIRST, c(chunk("x")), FINISH, USAGE_CHUNK, DONE],
    "choices-out-of-order": [
        c(chunk(ch(1, role="assistant"))),
        c(chunk(ch(0, role="assistant"))),
        c(chunk(ch(1, "stop"))),
        c(chunk(ch(0, "stop"))),
        USAGE_CHUNK,
        DONE,
    ],
    "two-choices-in-order": [
        c(chunk(ch(0, role="assistant"), ch(1, role="assistant"))),
        c(chunk(ch(0, "stop"), ch(1, "length"))),
        USAGE_CHUNK,
        DONE,
    ],
    "role-not-assistant": [c(chunk(ch(role="user"))), TEXT, FINISH, USAGE_CHUNK, DONE],
    "second-finish-reason": [*BODY[:3], c(chunk(ch(finish="length"))), USAGE_CHUNK, DONE],
    "empty-delta-after-finish-is-fine": [
        *BODY[:3],
        c(chunk(ch(content="", tool_calls=[]))),
        USAGE_CHUNK,
        DONE,
    ],
    "content-after-finish-once": [*BODY[:3], TEXT, TEXT, USAGE_CHUNK, DONE],
    "never-finished": [FIRST, TEXT, DONE],  # no usage: with it, a named dialect
    "tool-call-index-missing": [
        FIRST,
        c(chunk(ch(tool_calls=[{"function": {"name": "f"}}, first_call(0, "{")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-call-not-an-object-skipped": [
        FIRST,
        c(chunk(ch(tool_calls=["x", first_call(0, "{")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-call-lacks-all": [
        FIRST,
        c(chunk(ch(tool_calls=[call(0, "{}")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-call-wrong-type": [
        FIRST,
        c(chunk(ch(tool_calls=[call(0, "{}", id="a", name="f", typ="fn")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-call-repeats-id-and-name": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, '{"a":')]))),
        c(chunk(ch(tool_calls=[call(0, "1}", id="call_0", name="f")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "two-tool-calls": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, "{}"), first_call(1, '{"b":')]))),
        c(chunk(ch(tool_calls=[call(1, "2}")]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-arguments-60": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, '{"a":"' + "x" * 54)]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-arguments-61": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, '{"a":"' + "x" * 55)]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-function-not-an-object": [
        FIRST,
        c(chunk(ch(tool_calls=[{"index": 0, "id": "a", "type": "function", "function": "f"}]))),
        c(chunk(ch(finish="tool_calls"))),
        USAGE_CHUNK,
        DONE,
    ],
    "tool-calls-then-stop": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, "{}")]))),
        TEXT,
        FINISH,
        USAGE_CHUNK,
        DONE,
    ],
    "tool-calls-never-finished": [
        FIRST,
        c(chunk(ch(tool_calls=[first_call(0, "{}")]))),
        DONE,
    ],
    "error-ends-the-checks": [FIRST, c(chunk(ch(tool_calls=[first_call(0, "{")]))), ERROR],
}

# name -> the violations, as (rule, event index, message); offsets are checked by check_events
EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "event-field-once",
            [
                (
                    "openai.chat.event-field",
                    0,
                    (
                        "event: message line in a Chat Completions stream (only data: is "
                        "sent); older openai-python raises on named events"
                    ),
                )
            ],
        ),
        (
            "after-done-once",
            [
                (
                    "openai.chat.done-last",
                    5,
                    (
                        "event after data: [DONE]; openai-python stops reading at [DONE], "
                        "so it is never seen"
                    ),
                )
            ],
        ),
        (
            "after-error-once",
            [
                (
                    "openai.chat.error-terminal",
                    2,
                    (
                        "event after the error chunk (event 1); openai-python raised "
                        "APIError there and never reads it"
                    ),
                )
            ],
        ),
        ("error-null-is-not-an-error", []),
        (
            "chunk-a-string",
            [
                (
                    "openai.chat.chunk-shape",
                    1,
                    (
                        "the chunk is a JSON str, not an object; openai-python cannot build"
                        " a ChatCompletionChunk from it"
                    ),
                )
            ],
        ),
        (
            "not-json-is-left-to-sse",
            [
                (
                    "sse.json",
                    1,
                    (
                        "data is not JSON (Expecting property name enclosed in double "
                        "quotes): '{oops'"
                    ),
                )
            ],
        ),
        (
            "azure-preamble-with-choices-is-checked",
            [
                (
                    "openai.chat.object",
                    0,
                    (
                        "object is '', expected 'chat.completion.chunk'; openai-python's "
                        ".stream() helper drops the chunk (get_final_completion() raises "
                        "AssertionError when it drops them all)"
                    ),
                )
            ],
        ),
        (
            "object-missing",
            [
                (
                    "openai.chat.object",
                    1,
                    (
                        "object is None, expected 'chat.completion.chunk'; openai-python's "
                        ".stream() helper drops the chunk (get_final_completion() raises "
                        "AssertionError when it drops them all)"
                    ),
                )
            ],
        ),
        ("object-done-is-named", []),
        ("obfuscation-a-string", []),
        (
            "usage-order-once",
            [
                (
                    "openai.chat.usage-order",
                    2,
                    (
                        "a chunk with choices after the usage-only chunk (event 1); code "
                        "that reads usage from the last chunk before [DONE] finds none"
                    ),
                )
            ],
        ),
        (
            "id-and-model-change-once",
            [
                ("openai.chat.stable-id", 1, "id changed from 'c1' to 'c2'"),
                ("openai.chat.stable-id", 1, "model changed from 'gpt-x' to 'm2'"),
            ],
        ),
        (
            "model-changes-without-id",
            [("openai.chat.stable-id", 1, "model changed from 'gpt-x' to 'm2'")],
        ),
        (
            "fingerprint-changes",
            [("openai.chat.stable-fields", 1, "system_fingerprint changed from 'fp1' to 'fp2'")],
        ),
        ("created-forward-is-named", []),
        ("created-back-once", [("openai.chat.stable-fields", 1, "created goes back from 9 to 8")]),
        ("created-not-an-int", []),
        ("usage-on-the-finish-chunk", []),
        ("usage-on-content-chunks", []),
        ("usage-with-reasoning-tokens", []),
        (
            "usage-total-wrong-with-reasoning",
            [
                (
                    "openai.chat.usage-total",
                    3,
                    "total_tokens 8 != prompt_tokens 3 + completion_tokens 2",
                )
            ],
        ),
        ("usage-details-not-an-object", []),
        (
            "usage-details-not-an-object-no-reasoning",
            [
                (
                    "openai.chat.usage-total",
                    3,
                    "total_tokens 6 != prompt_tokens 3 + completion_tokens 2",
                )
            ],
        ),
        ("usage-counts-not-ints", []),
        ("usage-not-an-object", []),
        (
            "choice-without-index",
            [("openai.chat.choice-order", 1, "a choice has no integer index")],
        ),
        (
            "delta-null-on-the-finish-chunk",
            [
                (
                    "openai.chat.delta-missing",
                    2,
                    (
                        "choice 0 has no delta object; openai-python gives delta None, so "
                        "chunk.choices[0].delta.content raises AttributeError, and so does the "
                        ".stream() helper's get_final_completion()"
                    ),
                )
            ],
        ),
        ("choice-not-an-object", []),
        (
            "choices-out-of-order",
            [
                (
                    "openai.chat.choice-order",
                    0,
                    (
                        "choice 1 appears before choice 0; openai-python appends new "
                        "choices, so it lands in the wrong slot"
                    ),
                ),
                (
                    "openai.chat.choice-order",
                    1,
                    (
                        "choice 0 appears before choice 2; openai-python appends new "
                        "choices, so it lands in the wrong slot"
                    ),
                ),
            ],
        ),
        ("two-choices-in-order", []),
        (
            "role-not-assistant",
            [
                (
                    "openai.chat.role-first",
                    0,
                    "the first delta of choice 0 does not set role 'assistant'",
                )
            ],
        ),
        (
            "second-finish-reason",
            [
                (
                    "openai.chat.finish-repeated",
                    3,
                    ("choice 0 has a second finish_reason 'length' (first 'stop' at event 2)"),
                )
            ],
        ),
        ("empty-delta-after-finish-is-fine", []),
        (
            "content-after-finish-once",
            [
                (
                    "openai.chat.after-finish",
                    3,
                    "choice 0 has delta content after its finish_reason 'stop' (event 2)",
                )
            ],
        ),
        (
            "never-finished",
            [
                (
                    "openai.chat.finish-reason",
                    None,
                    "choice 0 never got a finish_reason (truncated?)",
                ),
                (
                    "openai.chat.usage-chunk",
                    None,
                    "the request set stream_options.include_usage but no usage chunk came",
                ),
            ],
        ),
        (
            "tool-call-index-missing",
            [
                (
                    "openai.chat.tool-call-index",
                    1,
                    (
                        "a tool call has no integer index (as Mistral sends); openai-"
                        "python's stream helper raises TypeError on it"
                    ),
                ),
                (
                    "openai.chat.tool-call-arguments",
                    1,
                    "the arguments of tool call 0 (choice 0) do not parse as JSON: '{'",
                ),
            ],
        ),
        (
            "tool-call-not-an-object-skipped",
            [
                (
                    "openai.chat.tool-call-arguments",
                    1,
                    "the arguments of tool call 0 (choice 0) do not parse as JSON: '{'",
                )
            ],
        ),
        (
            "tool-call-lacks-all",
            [
                (
                    "openai.chat.tool-call-first",
                    1,
                    (
                        "the first delta of tool call 0 (choice 0) lacks id, type "
                        "'function', function.name"
                    ),
                )
            ],
        ),
        (
            "tool-call-wrong-type",
            [
                (
                    "openai.chat.tool-call-first",
                    1,
                    "the first delta of tool call 0 (choice 0) lacks type 'function'",
                )
            ],
        ),
        (
            "tool-call-repeats-id-and-name",
            [
                (
                    "openai.chat.tool-call-repeat",
                    2,
                    (
                        "tool call 0 (choice 0) repeats id, function.name; openai-python "
                        "concatenates it"
                    ),
                )
            ],
        ),
        ("two-tool-calls", []),
        (
            "tool-arguments-60",
            [
                (
                    "openai.chat.tool-call-arguments",
                    1,
                    (
                        "the arguments of tool call 0 (choice 0) do not parse as JSON: "
                        '\'{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\''
                    ),
                )
            ],
        ),
        (
            "tool-arguments-61",
            [
                (
                    "openai.chat.tool-call-arguments",
                    1,
                    (
                        "the arguments of tool call 0 (choice 0) do not parse as JSON: "
                        '\'{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\''
                    ),
                )
            ],
        ),
        (
            "tool-function-not-an-object",
            [
                (
                    "openai.chat.tool-call-first",
                    1,
                    "the first delta of tool call 0 (choice 0) lacks function.name",
                ),
                (
                    "openai.chat.tool-call-arguments",
                    1,
                    "the arguments of tool call 0 (choice 0) do not parse as JSON: ''",
                ),
            ],
        ),
        (
            "tool-calls-then-stop",
            [
                (
                    "openai.chat.tool-call-finish",
                    3,
                    "choice 0 made tool calls but finished with 'stop'",
                )
            ],
        ),
        (
            "tool-calls-never-finished",
            [
                (
                    "openai.chat.finish-reason",
                    None,
                    "choice 0 never got a finish_reason (truncated?)",
                ),
                (
                    "openai.chat.usage-chunk",
                    None,
                    "the request set stream_options.include_usage but no usage chunk came",
                ),
            ],
        ),
        ("error-ends-the-checks", []),
    ]
)


def test_every_stream_has_its_expected_report() -> None:
    """The two tables name the same streams."""
    assert list(EXPECTED) == list(STREAMS)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_report_is_exact(name: str) -> None:
    """Each stream reports exactly these rules, at these events, with these messages."""
    assert check_events("openai-chat", STREAMS[name], REQUEST) == EXPECTED[name]


# name -> the dialect notes (what clients accept, named rather than flagged)
NOTES: dict[str, list[str]] = {
    "object-done-is-named": [
        "a last chunk with object 'chat.completion.done', as Perplexity sends"
    ],
    "created-forward-is-named": ["created moves forward during the stream, as Groq and xAI send"],
    "created-back-once": ["created moves forward during the stream, as Groq and xAI send"],
    "usage-on-the-finish-chunk": [
        "usage on the finish_reason chunk, as DeepSeek, Groq and Mistral send"
    ],
    "usage-on-content-chunks": [
        "usage on chunks with content (running totals), as Perplexity sends"
    ],
}


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_dialect_notes_are_exact(name: str) -> None:
    """A stream with a known provider habit gets its note, once; the others get none."""
    checker = StreamChecker("openai-chat", request=REQUEST)
    checker.feed(b"".join(STREAMS[name]))
    checker.close()
    assert checker.notes == NOTES.get(name, [])
