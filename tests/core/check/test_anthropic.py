"""The Anthropic grammar's rules, each branch: small streams and the exact report for each (rule,
event, message), both ways where a rule has two (a missing event, something after it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.check.reports import check_events, sse_event


def e(obj: Any, name: str | None = "") -> bytes:
    """An Anthropic event: event: is data.type unless ``name`` says otherwise."""
    if name == "":
        name = obj["type"] if isinstance(obj, dict) else None
    return sse_event(obj, name)


def start(tokens: Any = 1, message: Any = None) -> bytes:
    msg = {"id": "msg_1", "usage": {"input_tokens": 3, "output_tokens": tokens}}
    return e({"type": "message_start", "message": msg if message is None else message})


def bstart(index: Any, btype: str | None = "text") -> bytes:
    block = {"type": btype} if btype is not None else None
    obj: dict[str, Any] = {"type": "content_block_start", "index": index}
    if block is not None:
        obj["content_block"] = block
    return e(obj)


def delta(index: Any, d: Any = None) -> bytes:
    d = {"type": "text_delta", "text": "hi"} if d is None else d
    return e({"type": "content_block_delta", "index": index, "delta": d})


def json_delta(index: int, part: Any) -> bytes:
    return delta(index, {"type": "input_json_delta", "partial_json": part})


def bstop(index: Any) -> bytes:
    return e({"type": "content_block_stop", "index": index})


def mdelta(reason: Any = "end_turn", tokens: Any = 5, d: Any = None) -> bytes:
    d = {"stop_reason": reason} if d is None else d
    return e({"type": "message_delta", "delta": d, "usage": {"output_tokens": tokens}})


STOP = e({"type": "message_stop"})
PING = e({"type": "ping"})
ERROR = e({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


def text(*middle: bytes) -> list[bytes]:
    return [start(), bstart(0), delta(0), bstop(0), *middle]


STREAMS: dict[str, list[bytes]] = {
    "clean": [*text(), PING, mdelta(), STOP],
    "payload-a-list": [start(), e([1], "x"), bstart(0), bstop(0), mdelta(), STOP],
    "type-not-a-string": [start(), e({"type": 3}, "x"), mdelta(), STOP],
    "no-event-line": [
        e({"type": "message_start", "message": {"usage": {"output_tokens": 1}}}, None),
        mdelta(),
        STOP,
    ],
    "after-stop-once": [*text(), mdelta(), STOP, PING, delta(0), STOP],
    "after-error-once": [*text(), ERROR, PING, STOP],
    "error-last": [*text(), ERROR],
    "tokens-drop-from-start": [start(tokens=5), mdelta(tokens=3), STOP],
    "tokens-equal": [start(tokens=5), mdelta(tokens=5), STOP],
    "tokens-not-int": [start(tokens="9"), mdelta(tokens=2), mdelta(tokens="1"), STOP],
    "message-not-object": [start(message="x"), mdelta(tokens=0), STOP],
    "negative-first-count": [start(tokens=-2), mdelta(tokens=-2), STOP],
    "two-events-before-start": [bstart(0), bstop(0), start(), mdelta(), STOP],
    "index-repeated": [start(), bstart(0), bstop(0), bstart(0), bstop(0), mdelta(), STOP],
    "index-taken": [start(), bstart(1), bstop(1), bstart(1), bstop(1), mdelta(), STOP],
    "index-not-int": [start(), bstart("0"), delta("0"), bstop("0"), mdelta(), STOP],
    "two-open-blocks": [start(), bstart(0), bstart(1), bstart(2), mdelta(), STOP],
    "delta-never-started": [*text(), delta(3), mdelta(), STOP],
    "stop-twice": [*text(), bstop(0), mdelta(), STOP],
    "unchecked-block-type": [
        start(),
        bstart(0, "future_block"),
        delta(0),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "no-block-type": [start(), bstart(0, None), delta(0), bstop(0), mdelta(), STOP],
    "redacted-thinking": [
        start(),
        bstart(0, "redacted_thinking"),
        delta(0),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "delta-not-object": [start(), bstart(0), delta(0, "hi"), bstop(0), mdelta(), STOP],
    "tool-json-ok": [
        start(),
        bstart(0, "tool_use"),
        json_delta(0, '{"a":'),
        json_delta(0, "1}"),
        bstop(0),
        mdelta("tool_use"),
        STOP,
    ],
    "tool-json-empty": [
        start(),
        bstart(0, "tool_use"),
        json_delta(0, ""),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "tool-json-not-string": [
        start(),
        bstart(0, "tool_use"),
        json_delta(0, 5),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "tool-json-60": [
        start(),
        bstart(0, "tool_use"),
        json_delta(0, '{"a":"' + "x" * 54),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "tool-json-61": [
        start(),
        bstart(0, "tool_use"),
        json_delta(0, '{"a":"' + "x" * 55),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "json-delta-in-text-block": [start(), bstart(0), json_delta(0, "{"), bstop(0), mdelta(), STOP],
    "unstopped-at-message-delta": [start(), bstart(0), bstart(1), mdelta(), STOP],
    "unstopped-at-message-stop": [start(), bstart(0), STOP],
    "no-stop-reason": [*text(), mdelta(None), STOP],
    "delta-not-an-object": [*text(), mdelta(d=["end_turn"]), STOP],
    "unknown-type-ignored": [*text(), e({"type": "message_tweak"}), mdelta(), STOP],
    "truncated": [*text(), mdelta()],
    "second-message-start-with-fewer-tokens": [
        start(tokens=5),
        start(tokens=2),
        mdelta(tokens=6),
        STOP,
    ],
    "ping-before-message-start": [PING, *text(), mdelta(), STOP],
    "index-unhashable": [*text(), delta([0]), mdelta(), STOP],
    "partial-json-only-from-input-json-deltas": [
        start(),
        bstart(0),
        delta(0, {"type": "text_delta", "text": "{", "partial_json": "{"}),
        bstop(0),
        mdelta(),
        STOP,
    ],
    "stop-reason-then-none": [*text(), mdelta("max_tokens"), mdelta(None), STOP],
}

# name -> the violations, as (rule, event index, message); offsets are checked by check_events
EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "payload-a-list",
            [("anthropic.event-name", 1, "the payload is not an object with a 'type'")],
        ),
        (
            "type-not-a-string",
            [("anthropic.event-name", 1, "the payload is not an object with a 'type'")],
        ),
        (
            "no-event-line",
            [
                (
                    "anthropic.event-name",
                    0,
                    (
                        "no event: line for a 'message_start' event; the anthropic SDK "
                        "silently ignores it"
                    ),
                )
            ],
        ),
        (
            "after-stop-once",
            [
                (
                    "anthropic.message-stop-last",
                    6,
                    "ping after message_stop; the stream should end there",
                )
            ],
        ),
        (
            "after-error-once",
            [
                (
                    "anthropic.error-terminal",
                    5,
                    "ping after the error event (event 4); the SDK raised there",
                )
            ],
        ),
        ("error-last", []),
        (
            "tokens-drop-from-start",
            [
                (
                    "anthropic.usage-decrease",
                    1,
                    (
                        "usage.output_tokens drops from 5 to 3; it is cumulative and the "
                        "SDK assigns it"
                    ),
                )
            ],
        ),
        ("tokens-equal", []),
        ("tokens-not-int", []),
        ("message-not-object", []),
        ("negative-first-count", []),
        (
            "two-events-before-start",
            [
                (
                    "anthropic.message-start-first",
                    0,
                    (
                        "content_block_start before message_start; MessageStream raises "
                        "'Unexpected event order'"
                    ),
                ),
                ("anthropic.message-start-first", 2, "a second message_start"),
            ],
        ),
        (
            "index-repeated",
            [
                (
                    "anthropic.block-index",
                    3,
                    (
                        "content_block_start has index 0, expected 1; the SDK appends "
                        "blocks without checking, so later deltas go to the wrong block"
                    ),
                ),
                (
                    "anthropic.block-nesting",
                    4,
                    (
                        "content_block_stop for block 0, which is already stopped; the SDK "
                        "indexes content[index] (IndexError or a finished block changes)"
                    ),
                ),
            ],
        ),
        (
            "index-taken",
            [
                (
                    "anthropic.block-index",
                    1,
                    (
                        "content_block_start has index 1, expected 0; the SDK appends "
                        "blocks without checking, so later deltas go to the wrong block"
                    ),
                ),
                (
                    "anthropic.block-index",
                    3,
                    (
                        "content_block_start repeats index 1, which already started; the "
                        "SDK appends blocks without checking, so later deltas go to the wrong "
                        "block"
                    ),
                ),
                (
                    "anthropic.block-nesting",
                    4,
                    (
                        "content_block_stop for block 1, which is already stopped; the SDK "
                        "indexes content[index] (IndexError or a finished block changes)"
                    ),
                ),
            ],
        ),
        (
            "index-not-int",
            [
                (
                    "anthropic.block-index",
                    1,
                    (
                        "content_block_start has index '0', expected 0; the SDK appends "
                        "blocks without checking, so later deltas go to the wrong block"
                    ),
                ),
                (
                    "anthropic.block-nesting",
                    2,
                    (
                        "content_block_delta for block '0', which is never started; the SDK"
                        " indexes content[index] (IndexError or a finished block changes)"
                    ),
                ),
                (
                    "anthropic.block-nesting",
                    3,
                    (
                        "content_block_stop for block '0', which is never started; the SDK "
                        "indexes content[index] (IndexError or a finished block changes)"
                    ),
                ),
            ],
        ),
        (
            "two-open-blocks",
            [
                ("anthropic.block-interleave", 2, "block 1 starts while block 0 is still open"),
                ("anthropic.block-interleave", 3, "block 2 starts while block 0 is still open"),
                ("anthropic.block-nesting", 4, "block 0 is not stopped before message_delta"),
                ("anthropic.block-nesting", 4, "block 1 is not stopped before message_delta"),
                ("anthropic.block-nesting", 4, "block 2 is not stopped before message_delta"),
            ],
        ),
        (
            "delta-never-started",
            [
                (
                    "anthropic.block-nesting",
                    4,
                    (
                        "content_block_delta for block 3, which is never started; the SDK "
                        "indexes content[index] (IndexError or a finished block changes)"
                    ),
                )
            ],
        ),
        (
            "stop-twice",
            [
                (
                    "anthropic.block-nesting",
                    4,
                    (
                        "content_block_stop for block 0, which is already stopped; the SDK "
                        "indexes content[index] (IndexError or a finished block changes)"
                    ),
                )
            ],
        ),
        ("unchecked-block-type", []),
        ("no-block-type", []),
        (
            "redacted-thinking",
            [("anthropic.delta-type", 2, "a 'text_delta' delta in a 'redacted_thinking' block")],
        ),
        ("delta-not-object", [("anthropic.delta-type", 2, "a None delta in a 'text' block")]),
        ("tool-json-ok", []),
        ("tool-json-empty", []),
        ("tool-json-not-string", []),
        (
            "tool-json-60",
            [
                (
                    "anthropic.partial-json",
                    3,
                    (
                        "the joined partial_json of block 0 does not parse: "
                        '\'{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\''
                    ),
                )
            ],
        ),
        (
            "tool-json-61",
            [
                (
                    "anthropic.partial-json",
                    3,
                    (
                        "the joined partial_json of block 0 does not parse: "
                        '\'{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\''
                    ),
                )
            ],
        ),
        (
            "json-delta-in-text-block",
            [
                ("anthropic.delta-type", 2, "a 'input_json_delta' delta in a 'text' block"),
                (
                    "anthropic.partial-json",
                    3,
                    "the joined partial_json of block 0 does not parse: '{'",
                ),
            ],
        ),
        (
            "unstopped-at-message-delta",
            [
                ("anthropic.block-interleave", 2, "block 1 starts while block 0 is still open"),
                ("anthropic.block-nesting", 3, "block 0 is not stopped before message_delta"),
                ("anthropic.block-nesting", 3, "block 1 is not stopped before message_delta"),
            ],
        ),
        (
            "unstopped-at-message-stop",
            [
                ("anthropic.block-nesting", 2, "block 0 is not stopped before message_stop"),
                (
                    "anthropic.stop-reason",
                    2,
                    "message_stop without a message_delta carrying stop_reason",
                ),
            ],
        ),
        (
            "no-stop-reason",
            [
                (
                    "anthropic.stop-reason",
                    5,
                    "message_stop without a message_delta carrying stop_reason",
                )
            ],
        ),
        (
            "delta-not-an-object",
            [
                (
                    "anthropic.stop-reason",
                    5,
                    "message_stop without a message_delta carrying stop_reason",
                )
            ],
        ),
        ("unknown-type-ignored", []),
        (
            "truncated",
            [
                (
                    "anthropic.message-stop-last",
                    None,
                    (
                        "the stream ends without message_stop; the anthropic SDK ends "
                        "quietly, so a truncated message looks complete"
                    ),
                )
            ],
        ),
        (
            "second-message-start-with-fewer-tokens",
            [
                ("anthropic.message-start-first", 1, "a second message_start"),
                (
                    "anthropic.usage-decrease",
                    1,
                    (
                        "usage.output_tokens drops from 5 to 2; it is cumulative and the "
                        "SDK assigns it"
                    ),
                ),
            ],
        ),
        ("ping-before-message-start", []),
        (
            "index-unhashable",
            [
                (
                    "anthropic.block-nesting",
                    4,
                    (
                        "content_block_delta for block [0], which is never started; the SDK"
                        " indexes content[index] (IndexError or a finished block changes)"
                    ),
                )
            ],
        ),
        ("partial-json-only-from-input-json-deltas", []),
        ("stop-reason-then-none", []),
    ]
)


def test_every_stream_has_its_expected_report() -> None:
    """The two tables name the same streams."""
    assert list(EXPECTED) == list(STREAMS)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_report_is_exact(name: str) -> None:
    """Each stream reports exactly these rules, at these events, with these messages."""
    assert check_events("anthropic", STREAMS[name]) == EXPECTED[name]
