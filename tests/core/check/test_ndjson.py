"""The NDJSON layer of the checker: what it hands the grammar (each line's index, byte span,
text and JSON), where it reports a bad line, and the end of the stream, under any split."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.ndjson import NDJSONLayer


class _Recorder(Grammar):
    """A grammar that keeps what the layer hands it."""

    sentinels = frozenset({"[DONE]"})

    def __init__(self) -> None:
        super().__init__(Report(), RequestOptions())
        self.events: list[StreamEvent] = []
        self.end: int | None = None

    def event(self, ev: StreamEvent) -> None:
        self.events.append(ev)

    def finish(self, end: int) -> None:
        self.end = end


def _run(frames: list[bytes]) -> tuple[_Recorder, list[tuple[str, int | None, int | None, str]]]:
    grammar = _Recorder()
    layer = NDJSONLayer(grammar.report, grammar)
    for frame in frames:
        layer.feed(frame)
    layer.close()
    found = [(v.rule, v.event, v.offset, v.message) for v in grammar.report.items]
    return grammar, found


BODY = b'{"a":1}\r\n\n  \n[DONE]\n{"b":\xff2}\n{"c":3}'


def _expected_events() -> list[tuple[Any, ...]]:
    return [
        (0, 0, 9, '{"a":1}', {"a": 1}),
        (1, 13, 20, "[DONE]", None),
        (2, 20, 29, '{"b":\ufffd2}', INVALID),
        (3, 29, 36, '{"c":3}', {"c": 3}),
    ]


def test_lines_are_events_with_their_index_and_byte_span() -> None:
    """Each non-blank line is one event: its index among events (blank lines are not events),
    its first byte, the byte after its newline (the body's end for an unterminated last line),
    its text without CR, and its JSON (None for a sentinel, INVALID when not JSON); the grammar
    is told the body's length at the end."""
    grammar, _ = _run([BODY])
    got = [(e.index, e.start, e.end, e.data, e.payload) for e in grammar.events]
    assert got == _expected_events()
    assert all(e.name is None for e in grammar.events)
    assert grammar.end == len(BODY)


def test_bad_lines_are_reported_at_their_event_and_first_byte() -> None:
    """Invalid UTF-8, not-JSON and the unterminated last line: each at the line's event index
    and first byte."""
    _, found = _run([BODY])
    assert found == [
        ("ndjson.utf8", 2, 20, "invalid UTF-8 in this line"),
        ("ndjson.json", 2, 20, "line is not JSON (Expecting value): '{\"b\":\ufffd2}'"),
        (
            "ndjson.unterminated",
            3,
            29,
            "the stream ends inside a line (7 bytes without the closing newline); "
            "line readers that wait for '\\n' drop it",
        ),
    ]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("x" * 60, "x" * 60),
        ("x" * 61, "x" * 57 + "..."),
    ],
)
def test_a_long_line_that_is_not_json_is_shown_cut_to_60_characters(line: str, shown: str) -> None:
    """Up to 60 characters are quoted whole; a longer line, its first 57 and '...'."""
    _, found = _run([line.encode() + b"\n"])
    assert found == [("ndjson.json", 0, 0, f"line is not JSON (Expecting value): {shown!r}")]


def test_an_empty_body_hands_the_grammar_no_event_and_its_end() -> None:
    """No bytes: no event, no violation, and the end of the stream at byte 0."""
    grammar, found = _run([])
    assert (grammar.events, found, grammar.end) == ([], [], 0)


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(0, len(BODY)), max_size=12))
def test_any_split_hands_the_grammar_the_same_events(cuts: list[int]) -> None:
    """Property: however the body is split into frames, the events, violations and end are the
    same."""
    points = sorted(set(cuts))
    frames = [BODY[a:b] for a, b in zip([0, *points], [*points, len(BODY)], strict=True)]
    grammar, found = _run(frames)
    whole, whole_found = _run([BODY])
    assert found == whole_found
    assert grammar.events == whole.events and grammar.end == len(BODY)
