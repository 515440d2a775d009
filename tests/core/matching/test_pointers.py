"""JSON pointers (RFC 6901) for --ignore-body-field: escapes, array indexes, and that ignoring
one member never hides a difference next to it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Request
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._core.matching.differences import MatchOptions, diff_requests
from replayproxy._errors import UsageError


def post(body: object) -> Request:
    return Request("POST", "https://api.example.test/v1/chat", body=json.dumps(body).encode())


def body_diffs(recorded: object, requested: object, *ignore: str) -> list[tuple[str | None, str]]:
    opts = MatchOptions(ignore_body_fields=ignore)
    return [(d.pointer, d.recorded) for d in diff_requests(post(recorded), post(requested), opts)]


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", ()),
        ("/", ("",)),
        ("//", ("", "")),
        ("/a~1b", ("a/b",)),
        ("/c~0d", ("c~d",)),
        ("/~01", ("~1",)),  # ~0 then 1, not ~ then 01: unescape ~1 first (RFC 6901 §4)
        ("/~10", ("/0",)),
        ("/~0~1", ("~/",)),
        ("/a b/%25", ("a b", "%25")),
        ("/m/0", ("m", "0")),
    ],
)
def test_rfc_6901_tokens(pointer: str, tokens: tuple[str, ...]) -> None:
    """RFC 6901 examples and escape-order edge cases split into the right tokens."""
    assert parse_pointer(pointer) == tokens


@pytest.mark.parametrize("pointer", ["/~2", "/a~", "/~a", "a", "#/a"])
def test_bad_pointers_are_usage_errors(pointer: str) -> None:
    """A pointer not starting with '/' or with a '~' not followed by 0 or 1 is refused."""
    with pytest.raises(UsageError, match="JSON pointer"):
        MatchOptions(ignore_body_fields=(pointer,))


def test_an_escaped_tilde_one_names_its_own_member() -> None:
    """Ignoring /~01 drops the member named "~1", not one named "/"."""
    rec, req = {"~1": 1, "/": 1}, {"~1": 2, "/": 1}
    assert body_diffs(rec, req, "/~01") == []
    assert body_diffs(rec, req, "/~1") == [("/~01", "1")]


def test_an_ignored_nested_field_does_not_hide_its_sibling() -> None:
    """Ignoring /a/b drops only b: a differing a/c (object) or m/0/c (array) still differs."""
    assert body_diffs({"a": {"b": 1, "c": 2}}, {"a": {"b": 9, "c": 3}}, "/a/b") == [("/a/c", "2")]
    assert body_diffs({"a": {"b": 1, "c": 2}}, {"a": {"b": 9, "c": 2}}, "/a/b") == []
    rec = {"m": [{"name": "x", "c": 1}, {"c": 5}]}
    req = {"m": [{"name": "y", "c": 2}, {"c": 5}]}
    assert body_diffs(rec, req, "/m/0/name") == [("/m/0/c", "1")]


def test_array_indexes_are_exact_decimal() -> None:
    """/m/1 drops the second item; /m/01, /m/-, /m/+1 and out-of-range indexes drop nothing."""
    rec, req = {"m": ["a", "b"]}, {"m": ["a", "c"]}
    assert body_diffs(rec, req, "/m/1") == []
    for pointer in ("/m/01", "/m/-", "/m/+1", "/m/2", "/m/\u0661"):
        assert body_diffs(rec, req, pointer) == [("/m/1", '"b"')], pointer


@given(st.lists(st.text(alphabet="ab~/0", max_size=4), min_size=1, max_size=3))
def test_reported_pointers_parse_back_to_their_path(keys: list[str]) -> None:
    """Property: the pointer a difference reports, parsed, is the path of the differing member."""
    rec: object = 1
    req: object = 2
    for key in reversed(keys):
        rec, req = {key: rec}, {key: req}
    (d,) = diff_requests(post(rec), post(req))
    assert d.pointer is not None and parse_pointer(d.pointer) == tuple(keys)


def test_ignored_array_items_past_nine_are_dropped_from_the_end_first() -> None:
    """Ignoring /x/9 and /x/10 drops those two items as numbered in the request: item 10 goes
    before item 9 (numerically; as text "9" sorts after "10", and dropping 9 first would shift
    the old item 11 into place 10)."""
    recorded = {"x": list(range(12))}
    requested = {"x": [*range(9), 99, 98, 11]}
    assert body_diffs(recorded, requested, "/x/9", "/x/10") == []
    assert body_diffs(recorded, requested, "/x/10", "/x/9") == []
