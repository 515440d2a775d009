"""The OpenAI Responses grammar's rules, each branch: small streams and the exact report for each
(rule, event, message), both ways where a rule has two (the terminal event missing, something
after it), and the dialect notes a stream earns."""

from __future__ import annotations

from typing import Any

import pytest

from replayproxy._core.check import StreamChecker
from tests.check.reports import check_events, sse_event

NO_SEQ = object()


def stream(*objs: dict[str, Any], seq: bool = True) -> list[bytes]:
    """Each payload framed with its event: name; sequence_number counted from 0 unless the
    payload sets one (or NO_SEQ to leave it out)."""
    out = []
    for n, obj in enumerate(objs):
        obj = dict(obj)
        if seq and "sequence_number" not in obj:
            obj["sequence_number"] = n
        if obj.get("sequence_number") is NO_SEQ:
            del obj["sequence_number"]
        out.append(sse_event(obj, obj["type"] if isinstance(obj.get("type"), str) else None))
    return out


def e(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def response(status: str, usage: Any = True) -> dict[str, Any]:
    r: dict[str, Any] = {"id": "resp_1", "status": status}
    if usage:
        r["usage"] = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    return r


CREATED = e("response.created", response=response("in_progress", False))
PROGRESS = e("response.in_progress", response=response("in_progress", False))
COMPLETED = e("response.completed", response=response("completed"))
ITEM = {"id": "msg_1", "type": "message"}


def added(oi: int = 0, item: Any = ITEM) -> dict[str, Any]:
    return e("response.output_item.added", output_index=oi, item=item)


def item_done(oi: int = 0, item: Any = ITEM) -> dict[str, Any]:
    return e("response.output_item.done", output_index=oi, item=item)


def part_added(oi: int = 0, ci: Any = 0) -> dict[str, Any]:
    return e("response.content_part.added", output_index=oi, content_index=ci, item_id="msg_1")


def part_done(oi: int = 0, ci: Any = 0) -> dict[str, Any]:
    return e("response.content_part.done", output_index=oi, content_index=ci, item_id="msg_1")


def delta(
    text: Any = "hi",
    oi: int = 0,
    ci: Any = 0,
    item_id: str = "msg_1",
    family: str = "response.output_text",
) -> dict[str, Any]:
    return e(f"{family}.delta", output_index=oi, content_index=ci, item_id=item_id, delta=text)


def text_done(
    text: Any = "hi",
    oi: int = 0,
    ci: int = 0,
    family: str = "response.output_text",
    field: str = "text",
) -> dict[str, Any]:
    return e(f"{family}.done", output_index=oi, content_index=ci, item_id="msg_1", **{field: text})


MESSAGE = [added(), part_added(), delta("h"), delta("i"), text_done("hi"), part_done(), item_done()]

STREAMS: dict[str, list[bytes]] = {
    "clean": stream(CREATED, PROGRESS, *MESSAGE, COMPLETED),
    "payload-a-list": [
        *stream(CREATED, PROGRESS),
        sse_event([1], "x"),
        *stream(COMPLETED | {"sequence_number": 2}),
    ],
    "type-not-a-string": stream(CREATED, PROGRESS, {"type": 5}, COMPLETED),
    "no-event-line": [
        sse_event(CREATED | {"sequence_number": 0}),
        *stream(PROGRESS | {"sequence_number": 1}, COMPLETED | {"sequence_number": 2}),
    ],
    "done-before-the-terminal-hides-it": [
        *stream(CREATED, PROGRESS),
        sse_event("[DONE]"),
        *stream(COMPLETED | {"sequence_number": 2}),
    ],
    "done-after-the-terminal-is-named": [
        *stream(CREATED, PROGRESS, COMPLETED),
        sse_event("[DONE]"),
    ],
    "no-sequence-numbers-named": stream(
        CREATED | {"sequence_number": NO_SEQ},
        PROGRESS | {"sequence_number": NO_SEQ},
        COMPLETED | {"sequence_number": NO_SEQ},
    ),
    "sequence-appears-mid-stream": stream(
        CREATED | {"sequence_number": NO_SEQ},
        PROGRESS | {"sequence_number": 4},
        COMPLETED | {"sequence_number": 5},
    ),
    "sequence-missing-mid-stream": stream(
        CREATED, PROGRESS | {"sequence_number": NO_SEQ}, COMPLETED | {"sequence_number": 2}
    ),
    "sequence-repeats": stream(
        CREATED, PROGRESS | {"sequence_number": 0}, COMPLETED | {"sequence_number": 1}
    ),
    "error-then-failed-is-one-terminal": stream(
        CREATED,
        PROGRESS,
        e("error", code="server_error", message="boom"),
        e("response.failed", response=response("failed")),
        e("response.in_progress"),
    ),
    "error-then-incomplete": stream(
        CREATED,
        PROGRESS,
        e("error", message="boom"),
        e("response.incomplete", response=response("incomplete")),
    ),
    "error-then-failed-twice": stream(
        CREATED,
        PROGRESS,
        e("error", message="boom"),
        e("response.failed", response=response("failed")),
        e("response.failed", response=response("failed")),
    ),
    "error-then-failed-status-checked": stream(
        CREATED,
        PROGRESS,
        added(),
        e("error", message="boom"),
        e("response.failed", response=response("completed")),
    ),
    "sequence-jumps-after-appearing": stream(
        CREATED | {"sequence_number": NO_SEQ},
        PROGRESS | {"sequence_number": 4},
        e("response.queued", sequence_number=6),
        COMPLETED | {"sequence_number": 7},
    ),
    "completed-then-failed": stream(
        CREATED, PROGRESS, COMPLETED, e("response.failed", response=response("failed"))
    ),
    "after-terminal-once": stream(CREATED, PROGRESS, COMPLETED, PROGRESS, PROGRESS),
    "error-last": stream(CREATED, PROGRESS, e("error", message="boom")),
    "unknown-type-once": stream(
        CREATED,
        PROGRESS,
        e("response.thing"),
        e("response.thing"),
        e("response.web_search_call.searching"),
        e("response.code_interpreter_call_code.delta"),
        e("response.mcp_call.in_progress"),
        COMPLETED,
    ),
    "queued-counts-as-lifecycle": stream(CREATED, e("response.queued"), *MESSAGE, COMPLETED),
    "output-before-in-progress-once": stream(CREATED, *MESSAGE, COMPLETED),
    "failed-status-wrong": stream(
        CREATED, PROGRESS, e("response.failed", response=response("completed"))
    ),
    "incomplete-fine": stream(
        CREATED, PROGRESS, e("response.incomplete", response=response("incomplete", False))
    ),
    "completed-without-usage": stream(
        CREATED, PROGRESS, e("response.completed", response=response("completed", False))
    ),
    "completed-without-response": stream(CREATED, PROGRESS, e("response.completed")),
    "open-part-and-item-at-completed": stream(
        CREATED, PROGRESS, added(), part_added(), delta(), COMPLETED
    ),
    "open-item-at-failed-is-fine": stream(
        CREATED, PROGRESS, added(), e("response.failed", response=response("failed"))
    ),
    "item-added-twice": stream(CREATED, PROGRESS, added(), added(), item_done(), COMPLETED),
    "item-added-out-of-order": stream(CREATED, PROGRESS, added(1), item_done(1), COMPLETED),
    "item-added-again-at-the-next-index": stream(
        CREATED, PROGRESS, added(1), added(1), item_done(1), COMPLETED
    ),
    "item-without-object": stream(
        CREATED,
        PROGRESS,
        added(item="x"),
        part_added(),
        delta(item_id="other"),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "item-not-added": stream(CREATED, PROGRESS, item_done(), COMPLETED),
    "item-already-done": stream(CREATED, PROGRESS, added(), item_done(), item_done(), COMPLETED),
    "item-id-rotates-once-each": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        delta("a", item_id="x1"),
        delta("b", item_id="x1"),
        delta("c", item_id="x2"),
        text_done("abc"),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "item-done-with-an-open-part": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        part_added(0, 1),
        part_done(0, 0),
        item_done(),
        COMPLETED,
    ),
    "part-re-added": stream(
        CREATED, PROGRESS, added(), part_added(), part_added(), part_done(), item_done(), COMPLETED
    ),
    "part-index-not-an-int": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(ci="0"),
        delta(ci="0"),
        part_done(ci="0"),
        item_done(),
        COMPLETED,
    ),
    "part-index-unhashable": stream(
        CREATED, PROGRESS, added(), delta(ci=[0]), item_done(), COMPLETED
    ),
    "part-not-added": stream(
        CREATED, PROGRESS, added(), delta(), part_done(), item_done(), COMPLETED
    ),
    "part-already-done": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        part_done(),
        delta(),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "refusal-done-differs": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        delta("no", family="response.refusal"),
        text_done("nope", family="response.refusal", field="refusal"),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "done-without-deltas-named": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        text_done("hi"),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "done-text-not-a-string": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        delta("h"),
        text_done(5),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "delta-not-a-string": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(),
        delta(5),
        delta("hi"),
        text_done("hi"),
        part_done(),
        item_done(),
        COMPLETED,
    ),
    "deltas-by-output-index-not-item-id": stream(
        CREATED,
        PROGRESS,
        added(),
        added(1, {"id": "msg_2"}),
        part_added(),
        part_added(1),
        delta("a"),
        delta("b", oi=1, item_id="msg_1"),
        text_done("a"),
        text_done("b", oi=1),
        part_done(),
        part_done(1),
        item_done(),
        item_done(1, {"id": "msg_2"}),
        COMPLETED,
    ),
    "function-call-arguments": stream(
        CREATED,
        PROGRESS,
        added(item={"id": "fc_1", "type": "function_call"}),
        e("response.function_call_arguments.delta", output_index=0, item_id="fc_1", delta='{"a":'),
        e("response.function_call_arguments.delta", output_index=0, item_id="fc_1", delta="1}"),
        e(
            "response.function_call_arguments.done",
            output_index=0,
            item_id="fc_1",
            arguments='{"a":2}',
        ),
        item_done(item={"id": "fc_1", "type": "function_call"}),
        COMPLETED,
    ),
    "reasoning-summary-by-index": stream(
        CREATED,
        PROGRESS,
        added(item={"id": "rs_1", "type": "reasoning"}),
        e("response.reasoning_summary_text.delta", output_index=0, summary_index=0, delta="a"),
        e("response.reasoning_summary_text.delta", output_index=0, summary_index=1, delta="b"),
        e("response.reasoning_summary_text.done", output_index=0, summary_index=0, text="a"),
        e("response.reasoning_summary_text.done", output_index=0, summary_index=1, text="bb"),
        item_done(item={"id": "rs_1", "type": "reasoning"}),
        COMPLETED,
    ),
    "no-output-index-keys-by-item-id": stream(
        CREATED,
        PROGRESS,
        e("response.output_text.delta", item_id="m", content_index=0, delta="a"),
        e("response.output_text.delta", item_id="n", content_index=0, delta="b"),
        e("response.output_text.done", item_id="m", content_index=0, text="a"),
        e("response.output_text.done", item_id="n", content_index=0, text="c"),
        COMPLETED,
    ),
    "texts-by-content-index": stream(
        CREATED,
        PROGRESS,
        added(),
        part_added(0, 0),
        part_added(0, 1),
        delta("a", ci=0),
        delta("b", ci=1),
        text_done("a", ci=0),
        text_done("b", ci=1),
        part_done(0, 0),
        part_done(0, 1),
        item_done(),
        COMPLETED,
    ),
    "error-with-a-response-is-not-status-checked": stream(
        CREATED, PROGRESS, e("error", message="boom", response=response("failed"))
    ),
    "truncated": stream(CREATED, PROGRESS, *MESSAGE),
}

# name -> the violations, as (rule, event index, message); offsets are checked by check_events
EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "payload-a-list",
            [("openai.responses.event-name", 2, "the payload has no string 'type'")],
        ),
        (
            "type-not-a-string",
            [
                ("openai.responses.event-name", 2, "the payload has no string 'type'"),
                (
                    "openai.responses.sequence",
                    3,
                    (
                        "sequence_number 3 follows 1; resuming with starting_after would "
                        "skip or repeat events"
                    ),
                ),
            ],
        ),
        (
            "no-event-line",
            [
                (
                    "openai.responses.event-name",
                    0,
                    "no event: line but data.type is 'response.created'",
                )
            ],
        ),
        (
            "done-before-the-terminal-hides-it",
            [
                (
                    "openai.responses.terminal",
                    3,
                    "event after data: [DONE] (event 2); openai-python stops reading at "
                    "[DONE], so it is never seen",
                ),
                (
                    "openai.responses.terminal",
                    None,
                    "the stream ends without response.completed/failed/incomplete or error; "
                    "get_final_response raises, plain iteration ends quietly",
                ),
            ],
        ),
        ("done-after-the-terminal-is-named", []),
        ("no-sequence-numbers-named", []),
        (
            "sequence-appears-mid-stream",
            [
                (
                    "openai.responses.sequence",
                    1,
                    "sequence_number appears mid-stream after events without it",
                )
            ],
        ),
        (
            "sequence-missing-mid-stream",
            [
                ("openai.responses.sequence", 1, "sequence_number is missing"),
                (
                    "openai.responses.sequence",
                    2,
                    (
                        "sequence_number 2 follows 0; resuming with starting_after would "
                        "skip or repeat events"
                    ),
                ),
            ],
        ),
        (
            "sequence-repeats",
            [
                (
                    "openai.responses.sequence",
                    1,
                    (
                        "sequence_number 0 follows 0; resuming with starting_after would "
                        "skip or repeat events"
                    ),
                )
            ],
        ),
        (
            "error-then-failed-is-one-terminal",
            [
                (
                    "openai.responses.terminal",
                    4,
                    ("response.in_progress after the terminal event response.failed (event 3)"),
                )
            ],
        ),
        ("error-then-incomplete", []),
        (
            "error-then-failed-twice",
            [
                (
                    "openai.responses.terminal",
                    4,
                    "response.failed after the terminal event response.failed (event 3)",
                )
            ],
        ),
        (
            "error-then-failed-status-checked",
            [
                (
                    "openai.responses.terminal-status",
                    4,
                    "response.failed carries response.status 'completed'",
                )
            ],
        ),
        (
            "sequence-jumps-after-appearing",
            [
                (
                    "openai.responses.sequence",
                    1,
                    "sequence_number appears mid-stream after events without it",
                ),
                (
                    "openai.responses.sequence",
                    2,
                    (
                        "sequence_number 6 follows 4; resuming with starting_after would "
                        "skip or repeat events"
                    ),
                ),
            ],
        ),
        (
            "completed-then-failed",
            [
                (
                    "openai.responses.terminal",
                    3,
                    ("response.failed after the terminal event response.completed (event 2)"),
                )
            ],
        ),
        (
            "after-terminal-once",
            [
                (
                    "openai.responses.terminal",
                    3,
                    ("response.in_progress after the terminal event response.completed (event 2)"),
                )
            ],
        ),
        ("error-last", []),
        (
            "unknown-type-once",
            [("openai.responses.unknown-type", 2, "unknown event type 'response.thing'")],
        ),
        ("queued-counts-as-lifecycle", []),
        (
            "output-before-in-progress-once",
            [
                (
                    "openai.responses.in-progress",
                    1,
                    "response.output_item.added before response.in_progress (or queued)",
                )
            ],
        ),
        (
            "failed-status-wrong",
            [
                (
                    "openai.responses.terminal-status",
                    2,
                    "response.failed carries response.status 'completed'",
                )
            ],
        ),
        ("incomplete-fine", []),
        (
            "completed-without-usage",
            [("openai.responses.terminal-status", 2, "response.completed carries no usage")],
        ),
        ("completed-without-response", []),
        (
            "open-part-and-item-at-completed",
            [
                ("openai.responses.nesting", 5, "content part (0, 0) never done"),
                ("openai.responses.nesting", 5, "output item 0 never done"),
            ],
        ),
        ("open-item-at-failed-is-fine", []),
        (
            "item-added-twice",
            [("openai.responses.nesting", 3, "output_item.added for output_index 0, expected 1")],
        ),
        (
            "item-added-out-of-order",
            [("openai.responses.nesting", 2, "output_item.added for output_index 1, expected 0")],
        ),
        (
            "item-added-again-at-the-next-index",
            [
                ("openai.responses.nesting", 2, "output_item.added for output_index 1, expected 0"),
                (
                    "openai.responses.nesting",
                    3,
                    "output_item.added for output_index 1, which was already added",
                ),
            ],
        ),
        ("item-without-object", []),
        (
            "item-not-added",
            [
                (
                    "openai.responses.nesting",
                    2,
                    "response.output_item.done for output item 0, which is not added",
                )
            ],
        ),
        (
            "item-already-done",
            [
                (
                    "openai.responses.nesting",
                    4,
                    "response.output_item.done for output item 0, which is already done",
                )
            ],
        ),
        (
            "item-id-rotates-once-each",
            [
                (
                    "openai.responses.item-id",
                    4,
                    (
                        "item_id 'x1' differs from output item 0's id 'msg_1' (as GitHub "
                        "Copilot rotates ids); clients keyed by item_id lose the text"
                    ),
                ),
                (
                    "openai.responses.item-id",
                    6,
                    (
                        "item_id 'x2' differs from output item 0's id 'x1' (as GitHub "
                        "Copilot rotates ids); clients keyed by item_id lose the text"
                    ),
                ),
                (
                    "openai.responses.item-id",
                    7,
                    (
                        "item_id 'msg_1' differs from output item 0's id 'x2' (as GitHub "
                        "Copilot rotates ids); clients keyed by item_id lose the text"
                    ),
                ),
            ],
        ),
        (
            "item-done-with-an-open-part",
            [
                ("openai.responses.nesting", 6, "output item 0 done while content part 1 is open"),
                ("openai.responses.nesting", 7, "content part (0, 1) never done"),
            ],
        ),
        ("part-re-added", [("openai.responses.nesting", 4, "content part (0, 0) re-added")]),
        (
            "part-index-not-an-int",
            [
                ("openai.responses.nesting", 3, "content part (0, 0) re-added"),
                (
                    "openai.responses.nesting",
                    4,
                    ("response.output_text.delta for content part (0, 0), which is not added"),
                ),
                (
                    "openai.responses.nesting",
                    5,
                    ("response.content_part.done for content part (0, 0), which is not added"),
                ),
            ],
        ),
        (
            "part-index-unhashable",
            [
                (
                    "openai.responses.nesting",
                    3,
                    ("response.output_text.delta for content part (0, [0]), which is not added"),
                )
            ],
        ),
        (
            "part-not-added",
            [
                (
                    "openai.responses.nesting",
                    3,
                    ("response.output_text.delta for content part (0, 0), which is not added"),
                ),
                (
                    "openai.responses.nesting",
                    4,
                    ("response.content_part.done for content part (0, 0), which is not added"),
                ),
            ],
        ),
        (
            "part-already-done",
            [
                (
                    "openai.responses.nesting",
                    5,
                    ("response.output_text.delta for content part (0, 0), which is already done"),
                ),
                (
                    "openai.responses.nesting",
                    6,
                    ("response.content_part.done for content part (0, 0), which is already done"),
                ),
            ],
        ),
        (
            "refusal-done-differs",
            [
                (
                    "openai.responses.done-text",
                    5,
                    (
                        "response.refusal.done refusal (4 chars) differs from the joined "
                        "deltas (2 chars)"
                    ),
                )
            ],
        ),
        ("done-without-deltas-named", []),
        ("done-text-not-a-string", []),
        ("delta-not-a-string", []),
        (
            "deltas-by-output-index-not-item-id",
            [
                (
                    "openai.responses.item-id",
                    5,
                    (
                        "item_id 'msg_1' differs from output item 1's id 'msg_2' (as GitHub"
                        " Copilot rotates ids); clients keyed by item_id lose the text"
                    ),
                )
            ],
        ),
        (
            "function-call-arguments",
            [
                (
                    "openai.responses.done-text",
                    5,
                    (
                        "response.function_call_arguments.done arguments (7 chars) differs "
                        "from the joined deltas (7 chars)"
                    ),
                )
            ],
        ),
        (
            "reasoning-summary-by-index",
            [
                (
                    "openai.responses.done-text",
                    6,
                    (
                        "response.reasoning_summary_text.done text (2 chars) differs from "
                        "the joined deltas (1 chars)"
                    ),
                )
            ],
        ),
        (
            "no-output-index-keys-by-item-id",
            [
                (
                    "openai.responses.done-text",
                    5,
                    (
                        "response.output_text.done text (1 chars) differs from the joined "
                        "deltas (1 chars)"
                    ),
                )
            ],
        ),
        ("texts-by-content-index", []),
        ("error-with-a-response-is-not-status-checked", []),
        (
            "truncated",
            [
                (
                    "openai.responses.terminal",
                    None,
                    (
                        "the stream ends without response.completed/failed/incomplete or "
                        "error; get_final_response raises, plain iteration ends quietly"
                    ),
                )
            ],
        ),
    ]
)


def test_every_stream_has_its_expected_report() -> None:
    """The two tables name the same streams."""
    assert list(EXPECTED) == list(STREAMS)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_report_is_exact(name: str) -> None:
    """Each stream reports exactly these rules, at these events, with these messages."""
    assert check_events("openai-responses", STREAMS[name]) == EXPECTED[name]


# name -> the dialect notes (what clients accept, named rather than flagged)
NOTES: dict[str, list[str]] = {
    "done-after-the-terminal-is-named": [
        "data: [DONE] after the terminal event, as OpenAI-compatible servers send; "
        "openai-python stops reading there"
    ],
    "no-sequence-numbers-named": [
        "no sequence_number, as older OpenAI recordings and compatible servers send"
    ],
    "sequence-appears-mid-stream": [
        "no sequence_number, as older OpenAI recordings and compatible servers send"
    ],
    "error-then-failed-is-one-terminal": [
        "an error event followed by response.failed, as OpenAI sends"
    ],
    "error-then-incomplete": ["an error event followed by response.failed, as OpenAI sends"],
    "error-then-failed-twice": ["an error event followed by response.failed, as OpenAI sends"],
    "error-then-failed-status-checked": [
        "an error event followed by response.failed, as OpenAI sends"
    ],
    "sequence-jumps-after-appearing": [
        "no sequence_number, as older OpenAI recordings and compatible servers send"
    ],
    "done-without-deltas-named": [
        "response.output_text.done without deltas, as LM Studio and GitHub Copilot send"
    ],
}


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_dialect_notes_are_exact(name: str) -> None:
    """A stream with a known provider habit gets its note, once; the others get none."""
    checker = StreamChecker("openai-responses")
    checker.feed(b"".join(STREAMS[name]))
    checker.close()
    assert checker.notes == NOTES.get(name, [])
