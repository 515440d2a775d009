"""The contract grammar's rules, each branch: small streams against small contracts and the exact
report for each (rule, event, message), both ways where a rule has two (the terminal event
missing, something after it; the order broken, the order left incomplete)."""

from __future__ import annotations

from typing import Any

import pytest

from replayproxy._core.check import Contract, check_frames, parse_contract
from tests.check.reports import sse_event

CHAT = parse_contract(
    """
[events]
start = ["started"]
terminal = ["committed", "rejected"]
order = "started (delta | tool_call)* usage? (committed | rejected)"
[fields]
same = ["turn_id"]
[fields.required]
delta = ["text"]
tool_call = ["name", "arguments"]
""",
    fmt="toml",
)
TYPED = parse_contract(
    """
[stream]
type_field = "meta.kind"
sentinels = ["[DONE]"]
[events]
start = ["begin"]
terminal = ["[DONE]"]
""",
    fmt="toml",
)
ORDER_ONLY = parse_contract('[events]\norder = "a b"', fmt="toml")
START_ONLY = parse_contract('[events]\nstart = ["a"]', fmt="toml")
TWO_SAME = parse_contract('[fields]\nsame = ["a", "b"]', fmt="toml")
FIELDS_ONLY = parse_contract('[fields]\nsame = ["id"]\n[fields.required]\na = ["x"]', fmt="toml")
REQUIRED_ONLY = parse_contract('[fields.required]\na = ["x"]', fmt="toml")


def ev(kind: str | None, **fields: Any) -> bytes:
    return sse_event({"turn_id": "t1", **fields}, kind)


def raw(kind: str | None, data: Any) -> bytes:
    return sse_event(data, kind)


TURN = [ev("started"), ev("delta", text="a"), ev("usage"), ev("committed")]

STREAMS: dict[str, tuple[Contract, list[bytes]]] = {
    "clean": (CHAT, TURN),
    "after-terminal-once": (CHAT, [*TURN, ev("delta", text="b"), ev("rejected")]),
    "untyped-after-terminal": (
        TYPED,
        [raw(None, {"meta": {"kind": "begin"}}), raw(None, "[DONE]"), raw(None, {"x": 1})],
    ),
    "type-field-missing-and-not-a-string": (
        TYPED,
        [
            raw(None, {"meta": {"kind": "begin"}}),
            raw(None, {"meta": {}}),
            raw(None, {"meta": {"kind": 5}}),
            raw(None, {"meta": {"kind": ""}}),
            raw(None, {"meta": {"kind": list(range(30))}}),
            raw(None, {"meta": "begin"}),
            raw(None, "{oops"),
            raw(None, "[DONE]"),
        ],
    ),
    "untyped-events-only": (TYPED, [raw(None, {"x": 1}), raw(None, {"x": 2})]),
    "no-event-line-is-message": (START_ONLY, [raw(None, {"x": 1})]),
    "start-checked-on-the-first-only": (START_ONLY, [raw("a", {}), raw("b", {})]),
    "order-broken-first": (ORDER_ONLY, [raw("b", {}), raw("c", {})]),
    "order-broken-once": (ORDER_ONLY, [raw("a", {}), raw("c", {}), raw("d", {})]),
    "order-allows-nothing": (ORDER_ONLY, [raw("a", {}), raw("b", {}), raw("b", {})]),
    "order-incomplete": (ORDER_ONLY, [raw("a", {})]),
    "order-broken-then-ends": (ORDER_ONLY, [raw("c", {})]),
    "same-missing-and-changed-once": (
        CHAT,
        [
            ev("started"),
            sse_event({"text": "x"}, "delta"),
            ev("delta", text="b", turn_id="t2"),
            ev("delta", text="c", turn_id="t3"),
            ev("committed"),
        ],
    ),
    "same-long-values-cut": (
        FIELDS_ONLY,
        [raw("a", {"id": "x" * 50, "x": 1}), raw("b", {"id": "y" * 50})],
    ),
    "same-values-shown-to-40-characters": (
        FIELDS_ONLY,
        [raw("a", {"id": "x" * 38, "x": 1}), raw("b", {"id": "y" * 38})],
    ),
    "same-values-cut-after-40-characters": (
        FIELDS_ONLY,
        [raw("a", {"id": "x" * 39, "x": 1}), raw("b", {"id": "y" * 39})],
    ),
    "two-same-fields-first-missing": (TWO_SAME, [raw("a", {"a": 1, "b": 2}), raw("b", {"b": 3})]),
    "two-same-fields-second-changes": (
        TWO_SAME,
        [raw("a", {"a": 1, "b": 2}), raw("b", {"a": 1, "b": 3})],
    ),
    "required-lacks-two": (CHAT, [ev("started"), ev("tool_call"), ev("committed")]),
    "payload-not-an-object-same": (CHAT, [ev("started"), raw("delta", [1]), ev("committed")]),
    "payload-not-an-object-required": (REQUIRED_ONLY, [raw("a", [1]), raw("b", [1])]),
    "payload-not-an-object-no-fields": (START_ONLY, [raw("a", 5)]),
    "invalid-json-has-no-field-rules": (
        CHAT,
        [ev("started"), raw("delta", "{oops"), ev("committed")],
    ),
    "empty-terminal-contract": (CHAT, []),
    "empty-start-only-contract": (START_ONLY, []),
    "empty-fields-only-contract": (FIELDS_ONLY, []),
    "truncated-after-delta": (CHAT, TURN[:2]),
}

# name -> the violations, as (rule, event index, message)
EXPECTED: dict[str, list[tuple[str, int | None, str]]] = dict(
    [
        ("clean", []),
        (
            "after-terminal-once",
            [
                (
                    "contract.terminal",
                    4,
                    (
                        "delta after the terminal event committed (event 3); clients stop "
                        "reading at the terminal event and never see it"
                    ),
                )
            ],
        ),
        (
            "untyped-after-terminal",
            [
                ("contract.type", 2, "no field 'meta.kind': the event has no type to dispatch on"),
                (
                    "contract.terminal",
                    2,
                    (
                        "an event after the terminal event [DONE] (event 1); clients stop "
                        "reading at the terminal event and never see it"
                    ),
                ),
            ],
        ),
        (
            "type-field-missing-and-not-a-string",
            [
                ("contract.type", 1, "no field 'meta.kind': the event has no type to dispatch on"),
                (
                    "contract.type",
                    2,
                    ("a non-string 5 in field 'meta.kind': the event has no type to dispatch on"),
                ),
                (
                    "contract.type",
                    3,
                    ("a non-string '' in field 'meta.kind': the event has no type to dispatch on"),
                ),
                (
                    "contract.type",
                    4,
                    (
                        "a non-string [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11... in field "
                        "'meta.kind': the event has no type to dispatch on"
                    ),
                ),
                ("contract.type", 5, "no field 'meta.kind': the event has no type to dispatch on"),
                (
                    "sse.json",
                    6,
                    (
                        "data is not JSON (Expecting property name enclosed in double "
                        "quotes): '{oops'"
                    ),
                ),
            ],
        ),
        (
            "untyped-events-only",
            [
                ("contract.type", 0, "no field 'meta.kind': the event has no type to dispatch on"),
                ("contract.type", 1, "no field 'meta.kind': the event has no type to dispatch on"),
                (
                    "contract.terminal",
                    None,
                    (
                        "the stream ends after an untyped event without a terminal event "
                        "([DONE]); a client must not treat the closed connection as a "
                        "finished turn"
                    ),
                ),
            ],
        ),
        (
            "no-event-line-is-message",
            [
                (
                    "contract.start",
                    0,
                    (
                        "the first event is message, expected a: the client cannot tell "
                        "which turn this stream is"
                    ),
                )
            ],
        ),
        ("start-checked-on-the-first-only", []),
        ("order-broken-first", [("contract.order", 0, "b first; the order 'a b' allows a here")]),
        ("order-broken-once", [("contract.order", 1, "c after a; the order 'a b' allows b here")]),
        (
            "order-allows-nothing",
            [("contract.order", 2, "b after b; the order 'a b' allows nothing here")],
        ),
        (
            "order-incomplete",
            [("contract.order", None, "the stream ends after a; the order 'a b' needs b next")],
        ),
        (
            "order-broken-then-ends",
            [("contract.order", 0, "c first; the order 'a b' allows a here")],
        ),
        (
            "same-missing-and-changed-once",
            [
                ("contract.same", 1, "the delta event has no 'turn_id'"),
                (
                    "contract.same",
                    2,
                    (
                        "turn_id changed from 't1' to 't2': events of two turns are mixed "
                        "in one stream"
                    ),
                ),
            ],
        ),
        (
            "same-long-values-cut",
            [
                (
                    "contract.same",
                    1,
                    (
                        "id changed from 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... to "
                        "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...: events of two turns are "
                        "mixed in one stream"
                    ),
                )
            ],
        ),
        (
            "same-values-shown-to-40-characters",
            [
                (
                    "contract.same",
                    1,
                    (
                        "id changed from 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' to "
                        "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy': events of two turns are "
                        "mixed in one stream"
                    ),
                )
            ],
        ),
        (
            "same-values-cut-after-40-characters",
            [
                (
                    "contract.same",
                    1,
                    (
                        "id changed from 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... to "
                        "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...: events of two turns are "
                        "mixed in one stream"
                    ),
                )
            ],
        ),
        (
            "two-same-fields-first-missing",
            [
                ("contract.same", 1, "the b event has no 'a'"),
                (
                    "contract.same",
                    1,
                    "b changed from 2 to 3: events of two turns are mixed in one stream",
                ),
            ],
        ),
        (
            "two-same-fields-second-changes",
            [
                (
                    "contract.same",
                    1,
                    "b changed from 2 to 3: events of two turns are mixed in one stream",
                )
            ],
        ),
        (
            "required-lacks-two",
            [("contract.required", 1, "the tool_call event lacks 'name', 'arguments'")],
        ),
        (
            "payload-not-an-object-same",
            [
                (
                    "contract.same",
                    1,
                    (
                        "the delta event's payload is a JSON list, not an object with the "
                        "contract's fields"
                    ),
                )
            ],
        ),
        (
            "payload-not-an-object-required",
            [
                (
                    "contract.required",
                    0,
                    (
                        "the a event's payload is a JSON list, not an object with the "
                        "contract's fields"
                    ),
                )
            ],
        ),
        ("payload-not-an-object-no-fields", []),
        (
            "invalid-json-has-no-field-rules",
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
            "empty-terminal-contract",
            [("contract.terminal", None, "the stream has no events at all")],
        ),
        (
            "empty-start-only-contract",
            [("contract.start", None, "the stream has no events at all")],
        ),
        ("empty-fields-only-contract", []),
        (
            "truncated-after-delta",
            [
                (
                    "contract.terminal",
                    None,
                    (
                        "the stream ends after delta without a terminal event (committed | "
                        "rejected); a client must not treat the closed connection as a "
                        "finished turn"
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
    """Each stream reports exactly these rules, at these events (byte offsets: where the event
    starts, or the body's end), with these messages."""
    contract, events = STREAMS[name]
    body = b"".join(events)
    starts = [sum(len(e) for e in events[:i]) for i in range(len(events))]
    violations = check_frames([body], contract)
    assert [v.offset for v in violations] == [
        len(body) if v.event is None else starts[v.event] for v in violations
    ]
    assert [(v.rule, v.event, v.message) for v in violations] == EXPECTED[name]
