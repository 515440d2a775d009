"""The Bedrock checker, each branch: the event-stream layer (message types, JSON payloads, an
exception or error message ending the stream), the ConverseStream order and blocks, and the
InvokeModelWithResponseStream chunks; small streams and the exact report for each (rule,
event, message)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from replayproxy._core.wire.eventstream import encode_event, encode_exception, encode_message
from tests.check.reports import check_events


def ev(name: str, obj: Any) -> bytes:
    return encode_event(name, json.dumps(obj, separators=(",", ":")).encode())


START = ev("messageStart", {"role": "assistant"})
STOP = ev("messageStop", {"stopReason": "end_turn"})
META = ev("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}})
EXC = encode_exception("throttlingException", b'{"message":"slow down"}')
ERROR = encode_message(
    [(":error-code", "InternalFailure"), (":error-message", "oops"), (":message-type", "error")],
    b"",
)


def bstart(i: Any, tool: bool = False) -> bytes:
    start = {"toolUse": {"toolUseId": "t1", "name": "f"}} if tool else {}
    return ev("contentBlockStart", {"contentBlockIndex": i, "start": start})


def delta(i: Any, text: str = "hi") -> bytes:
    return ev("contentBlockDelta", {"contentBlockIndex": i, "delta": {"text": text}})


def tool(i: int, part: Any) -> bytes:
    return ev("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": part}}})


def bstop(i: Any) -> bytes:
    return ev("contentBlockStop", {"contentBlockIndex": i})


TEXT = [START, delta(0), bstop(0)]

CONVERSE: dict[str, list[bytes]] = {
    "clean": [*TEXT, STOP, META],
    "event-without-event-type": [
        encode_message([(":content-type", "application/json"), (":message-type", "event")], b"{}"),
        *TEXT,
        STOP,
        META,
    ],
    "event-not-json": [START, encode_event("contentBlockDelta", b"hi", "text/plain"), STOP, META],
    "empty-payload-is-an-empty-object": [START, encode_event("contentBlockDelta", b""), STOP, META],
    "exception-last": [*TEXT, EXC],
    "error-message-last": [*TEXT, ERROR],
    "after-error-message-once": [*TEXT, ERROR, STOP, META],
    "unknown-event-ignored": [START, ev("somethingNew", {}), *TEXT[1:], STOP, META],
    "metadata-first": [META, *TEXT, STOP],
    "message-start-twice": [START, *TEXT, STOP, META],
    "stop-twice": [*TEXT, STOP, STOP, META],
    "stop-with-an-open-block": [START, delta(0), delta(1), STOP, META],
    "no-block-index": [START, ev("contentBlockDelta", {"delta": {"text": "x"}}), STOP, META],
    "stop-of-a-block-never-started": [START, bstop(0), delta(1), bstop(1), STOP, META],
    "second-block-while-first-open": [START, bstart(0), bstart(1), bstop(1), bstop(0), STOP, META],
    "delta-after-stop": [*TEXT, delta(0), STOP, META],
    "start-twice": [START, bstart(0), bstart(0), bstop(0), STOP, META],
    "tool-input-ok": [
        START,
        bstart(0, True),
        tool(0, '{"a":'),
        tool(0, "1}"),
        tool(0, 5),
        bstop(0),
        STOP,
        META,
    ],
    "tool-input-empty": [START, bstart(0, True), tool(0, ""), bstop(0), STOP, META],
    "tool-input-shown-to-60": [
        START,
        bstart(0, True),
        tool(0, '{"a":"' + "x" * 70),
        bstop(0),
        STOP,
        META,
    ],
    "delta-not-an-object": [
        START,
        bstart(0),
        ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": 1}),
        bstop(0),
        STOP,
        META,
    ],
    "open-block-at-two-stops": [START, delta(0), STOP, STOP, META],
    "payload-not-utf8": [
        START,
        encode_event("contentBlockDelta", b'{"x":"\xff"}'),
        *TEXT[1:],
        STOP,
        META,
    ],
    "nothing-checked-after-an-exception": [START, EXC, START, delta(5)],
    "no-metadata": [*TEXT, STOP],
    "no-message-stop": [*TEXT],
    "nothing": [],
    "fatal-framing-error-ends-the-checks": [
        START,
        delta(0)[:8] + b"\x00\x00\x00\x00" + delta(0)[12:],
    ],
}


def inv(obj: Any) -> bytes:
    raw = base64.b64encode(json.dumps(obj).encode()).decode()
    return ev("chunk", {"bytes": raw})


def chunk_raw(raw: Any) -> bytes:
    return ev("chunk", {"bytes": raw})


A_START = inv({"type": "message_start", "message": {"usage": {"output_tokens": 1}}})
A_STOP = inv({"type": "message_stop"})
A_DELTA = inv({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})

INVOKE: dict[str, list[bytes]] = {
    "clean": [A_START, A_DELTA, A_STOP],
    "bytes-not-a-string": [A_START, chunk_raw(5), A_DELTA, A_STOP],
    "no-bytes": [A_START, ev("chunk", {}), A_DELTA, A_STOP],
    "payload-a-list": [A_START, ev("chunk", [1]), A_DELTA, A_STOP],
    "not-base64": [A_START, chunk_raw("eyJ0eXBlIjoicGluZyJ9!!"), A_DELTA, A_STOP],
    "not-utf8": [A_START, chunk_raw(base64.b64encode(b"\xff").decode()), A_DELTA, A_STOP],
    "not-json": [A_START, chunk_raw(base64.b64encode(b"{no").decode()), A_DELTA, A_STOP],
    "not-json-payload": [A_START, encode_event("chunk", b"{no"), A_DELTA, A_STOP],
    "inner-truncated": [A_START, A_DELTA],
    "inner-not-an-object": [A_START, inv([1]), A_DELTA, A_STOP],
    "exception-last": [A_START, EXC],
    "after-exception-once": [A_START, EXC, A_DELTA, A_STOP],
}

CONVERSE_EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "event-without-event-type",
            [
                (
                    "bedrock.message-type",
                    0,
                    (
                        "an event with :event-type None and :content-type "
                        "'application/json' (expected a name and application/json)"
                    ),
                )
            ],
        ),
        (
            "event-not-json",
            [
                (
                    "bedrock.message-type",
                    1,
                    (
                        "an event with :event-type 'contentBlockDelta' and :content-type "
                        "'text/plain' (expected a name and application/json)"
                    ),
                ),
                (
                    "bedrock.json",
                    1,
                    (
                        "the payload of contentBlockDelta is not JSON (Expecting value: "
                        "line 1 column 1 (char 0))"
                    ),
                ),
            ],
        ),
        (
            "empty-payload-is-an-empty-object",
            [("bedrock.block-index", 1, "contentBlockDelta has no contentBlockIndex")],
        ),
        ("exception-last", []),
        ("error-message-last", []),
        (
            "after-error-message-once",
            [
                (
                    "bedrock.exception-terminal",
                    4,
                    (
                        "messageStop after the exception InternalFailure (message 3); "
                        "botocore raised there"
                    ),
                )
            ],
        ),
        ("unknown-event-ignored", []),
        (
            "metadata-first",
            [
                (
                    "bedrock.converse-order",
                    0,
                    (
                        "metadata after nothing; expected messageStart, content blocks, "
                        "messageStop, metadata"
                    ),
                ),
                (
                    "bedrock.converse-order",
                    1,
                    (
                        "messageStart after metadata; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                ),
                (
                    "bedrock.converse-order",
                    2,
                    (
                        "contentBlockDelta after metadata; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                ),
                (
                    "bedrock.converse-order",
                    3,
                    (
                        "contentBlockStop after metadata; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                ),
                (
                    "bedrock.converse-order",
                    4,
                    (
                        "messageStop after metadata; expected messageStart, content blocks,"
                        " messageStop, metadata"
                    ),
                ),
            ],
        ),
        (
            "message-start-twice",
            [
                (
                    "bedrock.converse-order",
                    1,
                    (
                        "messageStart after messageStart; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                )
            ],
        ),
        (
            "stop-twice",
            [
                (
                    "bedrock.converse-order",
                    4,
                    (
                        "messageStop after messageStop; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                )
            ],
        ),
        (
            "stop-with-an-open-block",
            [
                ("bedrock.block-stop", 2, "block 1 starts while block 0 is open"),
                ("bedrock.block-stop", 3, "content block 0 is never stopped"),
                ("bedrock.block-stop", 3, "content block 1 is never stopped"),
            ],
        ),
        (
            "no-block-index",
            [("bedrock.block-index", 1, "contentBlockDelta has no contentBlockIndex")],
        ),
        (
            "stop-of-a-block-never-started",
            [("bedrock.block-index", 1, "contentBlockStop for block 0, expected block 0 to start")],
        ),
        (
            "second-block-while-first-open",
            [("bedrock.block-stop", 2, "block 1 starts while block 0 is open")],
        ),
        (
            "delta-after-stop",
            [("bedrock.block-index", 3, "contentBlockDelta for block 0, already stopped")],
        ),
        (
            "start-twice",
            [("bedrock.block-index", 2, "contentBlockStart for block 0, already started")],
        ),
        ("tool-input-ok", []),
        ("tool-input-empty", []),
        (
            "tool-input-shown-to-60",
            [
                (
                    "bedrock.tool-input",
                    3,
                    (
                        "block 0's toolUse.input does not parse as JSON: "
                        '\'{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\''
                    ),
                )
            ],
        ),
        ("delta-not-an-object", []),
        (
            "open-block-at-two-stops",
            [
                ("bedrock.block-stop", 2, "content block 0 is never stopped"),
                (
                    "bedrock.converse-order",
                    3,
                    (
                        "messageStop after messageStop; expected messageStart, content "
                        "blocks, messageStop, metadata"
                    ),
                ),
            ],
        ),
        (
            "payload-not-utf8",
            [
                (
                    "bedrock.json",
                    1,
                    (
                        "the payload of contentBlockDelta is not JSON ('utf-8' codec can't "
                        "decode byte 0xff in position 6: invalid start byte)"
                    ),
                )
            ],
        ),
        (
            "nothing-checked-after-an-exception",
            [
                (
                    "bedrock.exception-terminal",
                    2,
                    (
                        "messageStart after the exception throttlingException (message 1); "
                        "botocore raised there"
                    ),
                )
            ],
        ),
        (
            "no-metadata",
            [
                (
                    "bedrock.converse-end",
                    None,
                    "the stream ends without metadata (truncated at a message boundary)",
                )
            ],
        ),
        (
            "no-message-stop",
            [
                (
                    "bedrock.converse-end",
                    None,
                    (
                        "the stream ends without messageStop and metadata (truncated at a "
                        "message boundary)"
                    ),
                )
            ],
        ),
        (
            "nothing",
            [
                (
                    "bedrock.converse-end",
                    None,
                    (
                        "the stream ends without messageStop and metadata (truncated at a "
                        "message boundary)"
                    ),
                )
            ],
        ),
        (
            "fatal-framing-error-ends-the-checks",
            [
                (
                    "bedrock.prelude-crc",
                    1,
                    "prelude CRC mismatch (stored 0x00000000, computed 0xb4ab9aee)",
                )
            ],
        ),
    ]
)

INVOKE_EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "bytes-not-a-string",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    "chunk event without a string 'bytes' field; expected chunk events",
                )
            ],
        ),
        (
            "no-bytes",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    "chunk event without a string 'bytes' field; expected chunk events",
                )
            ],
        ),
        (
            "payload-a-list",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    "chunk event without a string 'bytes' field; expected chunk events",
                )
            ],
        ),
        (
            "not-base64",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    "chunk bytes are not base64 JSON (Only base64 data is allowed)",
                )
            ],
        ),
        (
            "not-utf8",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    (
                        "chunk bytes are not base64 JSON ('utf-8' codec can't decode byte "
                        "0xff in position 0: invalid start byte)"
                    ),
                )
            ],
        ),
        (
            "not-json",
            [
                (
                    "bedrock.invoke-chunk",
                    1,
                    (
                        "chunk bytes are not base64 JSON (Expecting property name enclosed "
                        "in double quotes: line 1 column 2 (char 1))"
                    ),
                )
            ],
        ),
        (
            "not-json-payload",
            [
                (
                    "bedrock.json",
                    1,
                    (
                        "the payload of chunk is not JSON (Expecting property name enclosed"
                        " in double quotes: line 1 column 2 (char 1))"
                    ),
                )
            ],
        ),
        (
            "inner-truncated",
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
            "inner-not-an-object",
            [("anthropic.event-name", 1, "the payload is not an object with a 'type'")],
        ),
        ("exception-last", []),
        (
            "after-exception-once",
            [
                (
                    "bedrock.exception-terminal",
                    2,
                    (
                        "chunk after the exception throttlingException (message 1); "
                        "botocore raised there"
                    ),
                )
            ],
        ),
    ]
)


def test_every_stream_has_its_expected_report() -> None:
    """The tables name the same streams."""
    assert list(CONVERSE_EXPECTED) == list(CONVERSE)
    assert list(INVOKE_EXPECTED) == list(INVOKE)


@pytest.mark.parametrize("name", list(CONVERSE))
def test_the_converse_report_is_exact(name: str) -> None:
    """Each ConverseStream body reports exactly these rules, at these events, with these
    messages."""
    assert check_events("bedrock-converse", CONVERSE[name]) == CONVERSE_EXPECTED[name]


@pytest.mark.parametrize("name", list(INVOKE))
def test_the_invoke_report_is_exact(name: str) -> None:
    """Each InvokeModelWithResponseStream body reports exactly these rules, at these events,
    with these messages (the Anthropic rules inside the chunks included)."""
    assert check_events("bedrock-invoke", INVOKE[name]) == INVOKE_EXPECTED[name]


@pytest.mark.parametrize("name", list(INVOKE))
def test_invoke_native_reads_the_family_from_the_first_chunk(name: str) -> None:
    """bedrock-invoke-native tells the model family from the first chunk: Anthropic events
    inside the chunks get the Anthropic rules there too (the grammar follows the bytes, not
    the name the user passed)."""
    assert check_events("bedrock-invoke-native", INVOKE[name]) == INVOKE_EXPECTED[name]
