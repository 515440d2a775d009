"""Stream contracts for an application's own API: the contract file format, the order grammar,
and the checks (a passing stream, one stream breaking each part of the contract), under any
byte split."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.check import Contract, check_frames, parse_contract
from replayproxy._core.check.order import OrderMatcher, compile_order
from replayproxy._errors import UsageError
from replayproxy.checking import check, check_stream, load_contract
from tests.check.contract_cases import (
    APP_BASES,
    EXAMPLES,
    app_cases,
    contract,
    ndjson_events,
    sse_events,
)

CASES = app_cases()


def _rules(body: bytes, c: Contract, frames: list[bytes] | None = None) -> list[str]:
    return [v.rule for v in check_frames(frames or [body], c)]


def _split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]


@pytest.mark.parametrize("name", sorted(APP_BASES))
def test_the_example_streams_pass_their_contracts(name: str) -> None:
    """The recorded example streams in docs/examples pass the example contracts."""
    c, body = APP_BASES[name]
    assert check_frames([body()], c) == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_broken_part_of_the_contract_is_reported_alone(rule: str) -> None:
    """A stream breaking one part of the contract reports exactly that rule, as an error with
    a one-line message and the event it happened at (or the end of the stream)."""
    _, c, body = CASES[rule]
    violations = check_frames([body], c)
    assert {v.rule for v in violations} == {rule}, [str(v) for v in violations]
    for v in violations:
        assert v.severity == "error" or rule == "ndjson.unterminated"
        assert "\n" not in v.message and (v.offset is None or 0 <= v.offset <= len(body))


@settings(max_examples=60, deadline=None)
@given(rule=st.sampled_from(sorted(CASES)), cuts=st.lists(st.integers(0, 10**6), max_size=40))
def test_any_split_of_a_broken_app_stream_gives_the_same_report(rule: str, cuts: list[int]) -> None:
    """Property: however the bytes of a contract-breaking stream are split, the violations are
    the same."""
    _, c, body = CASES[rule]
    assert check_frames(_split(body, cuts), c) == check_frames([body], c)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(APP_BASES)), cuts=st.lists(st.integers(0, 10**6), max_size=60))
def test_any_split_of_a_passing_app_stream_passes(name: str, cuts: list[int]) -> None:
    """Property: a passing application stream passes under any split, byte by byte included."""
    c, body = APP_BASES[name]
    assert check_frames(_split(body(), cuts), c) == []


def test_byte_by_byte_matches_whole() -> None:
    """Fed one byte at a time, every contract case gives its whole-body result."""
    for _, c, body in CASES.values():
        assert check_frames([body[i : i + 1] for i in range(len(body))], c) == check_frames(
            [body], c
        )


def test_a_cut_stream_is_not_a_finished_turn() -> None:
    """Every cut before the terminal event is reported as contract.terminal (the client must not
    treat the closed connection as committed); a cut inside an event adds sse.unterminated (and
    sse.utf8 when it halves the '°')."""
    c = contract()
    body = b"".join(sse_events())
    terminal_at = body.rindex(b"event: committed")
    for cut in range(1, terminal_at + 1):
        rules = set(_rules(body[:cut], c))
        assert "contract.terminal" in rules, cut
        assert rules <= {"contract.terminal", "sse.unterminated", "sse.utf8"}, (cut, rules)


def test_terminal_must_be_last_and_only_once() -> None:
    """An event after the terminal event, or a second terminal event, is contract.terminal."""
    c = contract()
    ev = sse_events()
    assert _rules(b"".join([*ev, ev[1]]), c) == ["contract.terminal"]
    rejected = b'event: rejected\ndata: {"turn_id":"t_8f2c41","reason":"policy"}\n\n'
    assert _rules(b"".join([*ev, rejected]), c) == ["contract.terminal"]
    assert _rules(b"".join([*ev[:-1], rejected]), c) == []


def test_type_from_a_json_field_in_sse_and_sentinels() -> None:
    """type_field works with SSE framing too, nested by dots; a sentinel such as [DONE] is an
    event type of its own and may be the terminal event."""
    c = parse_contract(
        """
        [stream]
        type_field = "meta.kind"
        sentinels = ["[DONE]"]
        [events]
        start = ["begin"]
        terminal = ["[DONE]"]
        order = "begin chunk* [DONE]"
        [fields]
        same = ["meta.turn"]
        """,
        fmt="toml",
    )
    ok = (
        b'data: {"meta":{"kind":"begin","turn":7}}\n\n'
        b'data: {"meta":{"kind":"chunk","turn":7},"text":"hi"}\n\n'
        b"data: [DONE]\n\n"
    )
    assert check_frames([ok], c) == []
    assert _rules(ok.replace(b'"turn":7},"text"', b'"turn":8},"text"'), c) == ["contract.same"]
    assert _rules(ok[: ok.index(b"data: [DONE]")], c) == ["contract.terminal"]


def test_events_without_an_event_line_are_of_type_message() -> None:
    """With the SSE event: name as the type, an event without one is 'message' (EventSource's
    default), so it is checked by the order like any other type."""
    c = parse_contract('[events]\norder = "message+"\nterminal = ["message"]', fmt="toml")
    assert check_frames([b'data: {"a":1}\n\n'], c) == []
    assert _rules(b'data: {"a":1}\n\ndata: {"a":2}\n\n', c) == ["contract.terminal"]


def test_contract_with_neither_start_nor_terminal_checks_fields_only() -> None:
    """A contract may ask for fields only; an empty stream is then fine."""
    c = parse_contract('[stream]\ntype_field = "t"\n[fields]\nsame = ["id"]', fmt="toml")
    assert check_frames([b""], c) == []
    assert _rules(b'data: {"t":"x","id":1}\n\ndata: {"t":"y"}\n\n', c) == ["contract.same"]


def test_empty_stream_breaks_the_terminal_rule() -> None:
    """No events at all: the stream never reached its terminal event."""
    assert _rules(b"", contract()) == ["contract.terminal"]


def test_json_and_toml_contracts_are_the_same(tmp_path: Path) -> None:
    """A JSON contract file (by its .json suffix) equals the TOML one it mirrors."""
    toml_file = EXAMPLES / "chat-turn.contract.toml"
    as_json = tmp_path / "chat-turn.json"
    as_json.write_text(
        json.dumps(
            {
                "name": "chat turn",
                "stream": {"framing": "sse"},
                "events": {
                    "start": ["started"],
                    "terminal": ["committed", "rejected"],
                    "order": "started (delta | tool_call)* usage? (committed | rejected)",
                },
                "fields": {
                    "same": ["turn_id"],
                    "required": {
                        "delta": ["text"],
                        "tool_call": ["name", "arguments"],
                        "committed": ["message_id"],
                        "rejected": ["reason"],
                    },
                },
            }
        )
    )
    assert load_contract(as_json) == load_contract(toml_file)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1", "unknown key 'x'"),
        ("[stream]\nframing = 'xml'", "stream.framing must be 'sse' or 'ndjson'"),
        ("[stream]\nframing = 'ndjson'", "set stream.type_field"),
        ("[stream]\nfoo = 1", "unknown key stream.foo"),
        ("[events]\nstart = 3", "events.start must be a list of names"),
        ("[events]\nterminal = [1]", "events.terminal must be a list of names"),
        ("[stream]\nsentinels = ['']", "stream.sentinels must be a list of names"),
        ("[events]\norder = 'a (b'", "a '(' is not closed"),
        ("[events]\norder = 'a | | b'", "an empty alternative"),
        ("[events]\norder = 'a ; b'", "unexpected ';'"),
        ("[events]\norder = ''", "order is empty"),
        ("[events]\norder = 'a )'", "unexpected ')'"),
        ("[events]\norder = 'a b'\nterminal = ['c']", "'c' is a start or terminal event"),
        ("[fields]\nrequired = 1", "fields.required must be a table"),
        ("name = 3", "name must be a string"),
        ("[stream\n", "not valid TOML"),
    ],
)
def test_bad_contracts_are_one_line_usage_errors(text: str, message: str) -> None:
    """Every malformed contract is a UsageError whose one line says what to fix."""
    with pytest.raises(UsageError) as info:
        parse_contract(text, fmt="toml")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_load_contract_names_the_file_in_errors(tmp_path: Path) -> None:
    """A missing or malformed contract file is a one-line error naming the file."""
    with pytest.raises(UsageError, match=r"cannot read contract .*nope\.toml"):
        load_contract(tmp_path / "nope.toml")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match=r"bad\.json: contract: the document must be a table"):
        load_contract(bad)


@pytest.mark.parametrize(
    ("order", "accepted", "rejected"),
    [
        ("a b* c", ["a c", "a b b c"], ["a", "b c", "a c c"]),
        ("a (b | c)+ d?", ["a b", "a c b d", "a b d"], ["a d", "a b d d"]),
        ('"odd name" x', ["odd name|x"], ["x"]),
        ("(a | b)* c", ["c", "a b a c"], ["a"]),
    ],
)
def test_order_grammar(order: str, accepted: list[str], rejected: list[str]) -> None:
    """The order grammar accepts exactly the sentences of its regular language."""

    def run(sentence: str) -> bool:
        matcher = OrderMatcher(compile_order(order))
        words = sentence.split("|") if "|" in sentence else sentence.split()
        return all(matcher.step(w) for w in words) and matcher.complete

    assert all(run(s) for s in accepted), accepted
    assert not any(run(s) for s in rejected), rejected


def test_order_expected_lists_what_may_come_next() -> None:
    """expected() names the types the grammar can take next, and the contract.order message
    quotes them."""
    matcher = OrderMatcher(compile_order("started delta* (committed | rejected)"))
    assert matcher.expected() == ["started"]
    assert matcher.step("started")
    assert matcher.expected() == ["committed", "delta", "rejected"]
    assert not matcher.step("usage")
    assert matcher.expected() == ["committed", "delta", "rejected"]  # unchanged by a miss
    again = b'event: started\ndata: {"turn_id":"t_8f2c41"}\n\n'
    (v,) = [
        v
        for v in check_frames([b"".join(sse_events()[:2]) + again], contract())
        if v.rule == "contract.order"
    ]
    assert v.event == 2
    assert v.message.startswith("started after delta;")
    assert "allows committed | delta | rejected | tool_call | usage here" in v.message


def test_python_api_takes_a_contract_object_or_path() -> None:
    """check()/check_stream() take contract= as a Contract or a file path; the report names
    the contract as the dialect."""
    body = (EXAMPLES / "chat-turn.sse").read_bytes()
    path = EXAMPLES / "chat-turn.contract.toml"
    assert check(body, contract=path) == []
    report = check_stream(body[:-20], contract=str(path))
    assert report.dialect == "contract chat turn" and report.provider == "contract"
    assert {v.rule for v in report.errors} == {"sse.unterminated", "contract.terminal"}


def test_ndjson_contract_checks_lines_not_sse() -> None:
    """An NDJSON contract reads one JSON object a line; CRLF lines and blank keepalive lines
    are fine, and SSE rules do not apply."""
    c = contract("chat-turn-ndjson.contract.toml")
    lines = ndjson_events()
    crlf = b"".join(line.replace(b"\n", b"\r\n") for line in lines)
    assert check_frames([crlf], c) == []
    assert check_frames([b"\n".join(lines)], c) == []  # blank lines between events
    sse = b"".join(sse_events())
    assert {v.rule for v in check_frames([sse], c)} == {"ndjson.json", "contract.terminal"}


def test_start_only_checked_on_the_first_event() -> None:
    """contract.start looks at the first event only (a later start event is the order's job)."""
    c = dataclasses.replace(contract(), order=None)
    ev = sse_events()
    assert _rules(b"".join([*ev[:2], ev[0], *ev[2:]]), c) == []


def test_ndjson_crlf_lines_match_sentinels() -> None:
    """A CRLF-terminated NDJSON sentinel line (``[DONE]\\r\\n``) is the sentinel, not bad JSON."""
    c = parse_contract(
        '[stream]\nframing = "ndjson"\ntype_field = "t"\nsentinels = ["[DONE]"]\n'
        '[events]\nterminal = ["[DONE]"]\norder = "x* [DONE]"',
        fmt="toml",
    )
    assert check_frames([b'{"t":"x"}\r\n[DONE]\r\n'], c) == []
    assert _rules(b'{"t":"x"}\r\n', c) == ["contract.terminal"]
