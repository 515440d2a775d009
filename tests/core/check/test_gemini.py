"""The Gemini grammar's rules, each branch: small streams and the exact report for each (rule,
event, message), both ways where a rule has two (a missing finishReason, a chunk after it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.check.reports import check_events, sse_event

USAGE = {"promptTokenCount": 2, "candidatesTokenCount": 3, "totalTokenCount": 5}


def chunk(
    text: str = "hi",
    reason: str | None = None,
    *,
    index: Any = None,
    usage: bool = False,
    rid: Any = "r1",
    model: Any = "gemini-2.5-flash",
    parts: Any = None,
) -> dict[str, Any]:
    cand: dict[str, Any] = {
        "content": {"role": "model", "parts": [{"text": text}] if parts is None else parts}
    }
    if index is not None:
        cand["index"] = index
    if reason is not None:
        cand["finishReason"] = reason
    obj: dict[str, Any] = {"candidates": [cand]}
    if usage:
        obj["usageMetadata"] = USAGE
    if rid is not None:
        obj["responseId"] = rid
    if model is not None:
        obj["modelVersion"] = model
    return obj


def g(obj: Any) -> bytes:
    return sse_event(obj, crlf=True)


def raw(text: str) -> bytes:
    return text.encode()


END = g(chunk("!", "STOP", usage=True))
ERROR = g({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})

STREAMS: dict[str, list[bytes]] = {
    "clean": [g(chunk()), END],
    "a-comment-line": [g(chunk()), raw(": ping\r\n\r\n"), END],
    "an-event-line": [raw("event: message\r\n") + g(chunk()), END],
    "a-long-line-shown-cut": [raw("id: 0123456789abcdefghijklmnop\r\n") + g(chunk()), END],
    "data-without-space-once": [raw('data:{"x":1}\r\nretry: 5\r\n\r\n'), g(chunk()), END],
    "lf-once": [g(chunk()), sse_event(chunk()), sse_event(chunk("!", "STOP", usage=True))],
    "cr": [g(chunk()), raw('data: {"x":1}\r\r'), END],
    "unterminated-last-event-has-no-line-ending-rule": [
        g(chunk()),
        g(chunk("!", "STOP", usage=True))[:-2],
    ],
    "done-is-not-json-and-a-list-is-ignored": [g(chunk()), g([1, 2]), g("[DONE]"), END],
    "error-last": [g(chunk()), ERROR],
    "after-error-once": [g(chunk()), ERROR, g(chunk()), END],
    "model-changes-once": [g(chunk()), g(chunk(model="m2")), g(chunk(model="m3")), END],
    "ids-missing-or-null": [g(chunk(rid=None, model=None)), g(chunk(rid=None, model=None)), END],
    "both-ids-change": [g(chunk()), g(chunk("!", "STOP", usage=True, rid="r2", model="m2"))],
    "candidates-not-a-list": [g({"candidates": 5, "usageMetadata": USAGE}), END],
    "candidate-not-an-object": [
        g({"candidates": ["x", chunk("!", "STOP")["candidates"][0]], "usageMetadata": USAGE})
    ],
    "index-not-an-int": [
        g({"candidates": [chunk(index="1")["candidates"][0], chunk("!", "STOP")["candidates"][0]]}),
        g({"usageMetadata": USAGE}),
    ],
    "model-changes-without-response-id": [
        g(chunk(rid=None)),
        g(chunk("!", "STOP", usage=True, rid=None, model="m2")),
    ],
    "a-comment-line-and-lf": [g(chunk()), raw(": ping\n\n"), END],
    "unterminated-lf-event-has-no-line-ending-rule": [
        g(chunk()),
        g(chunk("!", "STOP", usage=True))[:-4] + b"\n",
    ],
    "two-candidates-one-unfinished": [
        g(chunk(index=0)),
        g(chunk(index=1)),
        g(chunk("!", "STOP", index=0, usage=True)),
    ],
    "continues-after-finish-once": [g(chunk("a", "STOP")), g(chunk()), g(chunk("b", usage=True))],
    "second-finish-reason": [g(chunk("a", "STOP")), g(chunk("b", "MAX_TOKENS", usage=True))],
    "after-finish-per-candidate": [
        g(chunk("a", "STOP", index=0)),
        g(chunk("b", "STOP", index=1)),
        g(chunk(index=1)),
        g(chunk(index=0, usage=True)),
    ],
    "continued-and-new-candidate-in-one-chunk": [
        g(chunk("a", "STOP", index=0)),
        g(
            {
                "candidates": [
                    chunk("b", index=0)["candidates"][0],
                    chunk("c", index=1)["candidates"][0],
                ],
                "usageMetadata": USAGE,
            }
        ),
    ],
    "no-candidates": [g({"usageMetadata": USAGE})],
    "no-chunks": [],
    "usage-on-an-earlier-chunk": [g({**chunk(), "usageMetadata": USAGE}), g(chunk("!", "STOP"))],
    "function-call-args-a-list": [
        g(chunk(parts=[{"functionCall": {"name": "f", "args": [1]}}])),
        END,
    ],
    "function-call-args-fine": [
        g(
            chunk(
                parts=[
                    {"functionCall": {"name": "f", "args": {}}},
                    {"functionCall": {"name": "g"}},
                    "x",
                ]
            )
        ),
        END,
    ],
    "function-call-no-parts": [
        g({"candidates": [{"content": {"parts": "x"}}]}),
        g({"candidates": [{"content": "x"}]}),
        END,
    ],
}

# name -> the violations, as (rule, event index, message); offsets are checked by check_events
EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "a-comment-line",
            [
                (
                    "gemini.data-prefix",
                    1,
                    (
                        "a comment line; google-genai accepts only 'data: ' lines and feeds"
                        " any other line into its JSON error buffer"
                    ),
                )
            ],
        ),
        (
            "an-event-line",
            [
                (
                    "gemini.data-prefix",
                    0,
                    (
                        "'event: message' line; google-genai accepts only 'data: ' lines "
                        "and feeds any other line into its JSON error buffer"
                    ),
                )
            ],
        ),
        (
            "a-long-line-shown-cut",
            [
                (
                    "gemini.data-prefix",
                    0,
                    (
                        "'id: 0123456789abcdef' line; google-genai accepts only 'data: ' "
                        "lines and feeds any other line into its JSON error buffer"
                    ),
                )
            ],
        ),
        (
            "data-without-space-once",
            [
                (
                    "gemini.data-prefix",
                    0,
                    (
                        "'data:{\"x\":1}' line; google-genai accepts only 'data: ' lines and "
                        "feeds any other line into its JSON error buffer"
                    ),
                )
            ],
        ),
        (
            "lf-once",
            [
                (
                    "sse.line-endings",
                    1,
                    (
                        "line endings mix LF+CRLF; the anthropic SDK and openai-python <= "
                        "2.24 dispatch such events late: use one style"
                    ),
                ),
                ("gemini.crlf", 1, "line endings other than CRLF"),
            ],
        ),
        (
            "cr",
            [
                (
                    "sse.line-endings",
                    1,
                    (
                        "line endings mix CR+CRLF; the anthropic SDK and openai-python <= "
                        "2.24 dispatch such events late: use one style"
                    ),
                ),
                ("gemini.crlf", 1, "line endings other than CRLF"),
            ],
        ),
        (
            "unterminated-last-event-has-no-line-ending-rule",
            [
                (
                    "sse.unterminated",
                    1,
                    (
                        "the stream ends inside an event (234 bytes without the closing "
                        "blank line); every SSE decoder drops it silently"
                    ),
                ),
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for candidate 0; google-"
                        "genai does not report this truncation"
                    ),
                ),
                ("gemini.usage-metadata", 0, "the final chunk has no usageMetadata"),
            ],
        ),
        (
            "done-is-not-json-and-a-list-is-ignored",
            [("sse.json", 2, "data is not JSON (Expecting value): '[DONE]'")],
        ),
        ("error-last", []),
        ("after-error-once", [("gemini.error-terminal", 2, "a chunk after the error chunk")]),
        (
            "model-changes-once",
            [("gemini.stable-ids", 1, "modelVersion changed from 'gemini-2.5-flash' to 'm2'")],
        ),
        ("ids-missing-or-null", []),
        (
            "both-ids-change",
            [
                ("gemini.stable-ids", 1, "responseId changed from 'r1' to 'r2'"),
                ("gemini.stable-ids", 1, "modelVersion changed from 'gemini-2.5-flash' to 'm2'"),
            ],
        ),
        ("candidates-not-a-list", []),
        ("candidate-not-an-object", []),
        ("index-not-an-int", []),
        (
            "model-changes-without-response-id",
            [("gemini.stable-ids", 1, "modelVersion changed from 'gemini-2.5-flash' to 'm2'")],
        ),
        (
            "a-comment-line-and-lf",
            [
                (
                    "sse.line-endings",
                    1,
                    (
                        "line endings mix LF+CRLF; the anthropic SDK and openai-python <= "
                        "2.24 dispatch such events late: use one style"
                    ),
                ),
                (
                    "gemini.data-prefix",
                    1,
                    (
                        "a comment line; google-genai accepts only 'data: ' lines and feeds"
                        " any other line into its JSON error buffer"
                    ),
                ),
                ("gemini.crlf", 1, "line endings other than CRLF"),
            ],
        ),
        (
            "unterminated-lf-event-has-no-line-ending-rule",
            [
                (
                    "sse.line-endings",
                    1,
                    (
                        "line endings mix LF+CRLF; the anthropic SDK and openai-python <= "
                        "2.24 dispatch such events late: use one style"
                    ),
                ),
                (
                    "sse.unterminated",
                    1,
                    (
                        "the stream ends inside an event (233 bytes without the closing "
                        "blank line); every SSE decoder drops it silently"
                    ),
                ),
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for candidate 0; google-"
                        "genai does not report this truncation"
                    ),
                ),
                ("gemini.usage-metadata", 0, "the final chunk has no usageMetadata"),
            ],
        ),
        (
            "two-candidates-one-unfinished",
            [
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for candidate 1; google-"
                        "genai does not report this truncation"
                    ),
                )
            ],
        ),
        (
            "continues-after-finish-once",
            [
                (
                    "gemini.finish-reason",
                    1,
                    "candidate 0 continues after its finishReason at event 0",
                )
            ],
        ),
        (
            "second-finish-reason",
            [
                (
                    "gemini.finish-reason",
                    1,
                    (
                        "candidate 0 continues after its finishReason at event 0 (a second "
                        "finishReason 'MAX_TOKENS')"
                    ),
                )
            ],
        ),
        (
            "after-finish-per-candidate",
            [
                (
                    "gemini.finish-reason",
                    2,
                    "candidate 1 continues after its finishReason at event 1",
                ),
                (
                    "gemini.finish-reason",
                    3,
                    "candidate 0 continues after its finishReason at event 0",
                ),
            ],
        ),
        (
            "continued-and-new-candidate-in-one-chunk",
            [
                (
                    "gemini.finish-reason",
                    1,
                    "candidate 0 continues after its finishReason at event 0",
                ),
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for candidate 1; google-"
                        "genai does not report this truncation"
                    ),
                ),
            ],
        ),
        (
            "no-candidates",
            [
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for any candidate; google-"
                        "genai does not report this truncation"
                    ),
                )
            ],
        ),
        (
            "no-chunks",
            [
                (
                    "gemini.finish-reason",
                    None,
                    (
                        "the stream ends without a finishReason for any candidate; google-"
                        "genai does not report this truncation"
                    ),
                )
            ],
        ),
        (
            "usage-on-an-earlier-chunk",
            [("gemini.usage-metadata", 1, "the final chunk has no usageMetadata")],
        ),
        (
            "function-call-args-a-list",
            [
                (
                    "gemini.function-call-args",
                    0,
                    "functionCall 'f' has args of type list, not an object",
                )
            ],
        ),
        ("function-call-args-fine", []),
        ("function-call-no-parts", []),
    ]
)


def test_every_stream_has_its_expected_report() -> None:
    """The two tables name the same streams."""
    assert list(EXPECTED) == list(STREAMS)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_report_is_exact(name: str) -> None:
    """Each stream reports exactly these rules, at these events, with these messages."""
    assert check_events("gemini", STREAMS[name]) == EXPECTED[name]
