"""What a miss says, word for word (it is the unmatched response's body and the stderr line),
and the matcher's choices that only show in it: nearest candidate, host, method case."""

from __future__ import annotations

import json

import pytest

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.matching.differences import MatchOptions, describe_request, diff_requests
from replayproxy._core.matching.matcher import Difference, Hit, Matcher, Miss
from replayproxy._errors import UsageError

URL = "https://api.example.test/v1/chat?b=2&a=1"


def req(url: str = URL, body: object = None, method: str = "POST") -> Request:
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    return Request(method, url, body=data)


def recorded(*requests: Request) -> list[Interaction]:
    return [Interaction(r, None, Ending(EndKind.NO_RESPONSE, 0)) for r in requests]


def test_each_kind_of_miss_explained_word_for_word() -> None:
    """Empty cassette, used up, differing, and cannot-serve misses: exact text, both forms."""
    empty = Matcher([]).match(req())
    assert empty == Miss("POST /v1/chat?b=2&a=1", None, (), host="api.example.test")
    assert empty.explain() == (
        "replayproxy: no recorded interaction matches POST /v1/chat?b=2&a=1 "
        "(host api.example.test)\n"
        "the cassette holds no interactions"
    )
    assert empty.one_line() == (
        "unmatched POST /v1/chat?b=2&a=1 (host api.example.test): the cassette is empty"
    )

    m = Matcher(recorded(req(body={"n": 1})))
    assert m.match(req(body={"n": 1})) == Hit(0, 0)
    used = m.match(req(body={"n": 1}))
    assert used == Miss("POST /v1/chat?b=2&a=1", 0, (), used_up=True, host="api.example.test")
    assert used.explain().splitlines()[1] == (
        "it matches recorded interaction #0, but every matching interaction was already "
        "replayed: each recording is served once per run (restart replayproxy, or pass "
        "--allow-repeats to serve the last again)"
    )
    assert used.one_line() == (
        "unmatched POST /v1/chat?b=2&a=1 (host api.example.test): #0 matches but was used up "
        "(restart, or --allow-repeats)"
    )

    differs = Matcher(recorded(req(body={"n": 1}))).match(req(URL + "&c=3", {"n": 2}, "PUT"))
    assert differs.explain() == (
        "replayproxy: no recorded interaction matches PUT /v1/chat?b=2&a=1&c=3 "
        "(host api.example.test)\n"
        "closest recorded interaction: #0, which differs in 3 places:\n"
        "  method: recorded POST, requested PUT\n"
        "  query: recorded (none), requested c=3\n"
        "  body at /n: recorded 1, requested 2\n"
        "these options clear the other differences: --ignore-query c --ignore-body-field /n\n"
        "no option makes a different method match; to record it: "
        "replayproxy record --append CASSETTE"
    )
    assert differs.one_line() == (
        "unmatched PUT /v1/chat?b=2&a=1&c=3 (host api.example.test): nearest #0 differs in "
        "method: recorded POST, requested PUT; query: recorded (none), requested c=3; "
        "body at /n: recorded 1, requested 2 (add --ignore-query c --ignore-body-field /n)"
    )

    cannot = Miss("GET /x", 3, (), reason="the fault needs an SSE body")
    assert cannot.explain() == (
        "replayproxy: cannot serve GET /x (recorded #3)\nthe fault needs an SSE body"
    )
    assert cannot.one_line() == "cannot serve GET /x (#3): the fault needs an SSE body"


def test_difference_text_names_the_part_or_the_body_pointer() -> None:
    """A body difference at the root reads "body at /"; other parts read by their name."""
    assert str(Difference("path", "/a", "/b")) == "path: recorded /a, requested /b"
    assert str(Difference("body", "1", "2", pointer="")) == "body at /: recorded 1, requested 2"
    assert str(Difference("body", "1", "2", pointer="/x")) == "body at /x: recorded 1, requested 2"


def test_describe_request_shows_path_and_query_only() -> None:
    """Method, path (``/`` when empty) and the query as sent; no host, no lone '?'."""
    assert describe_request(req("https://h.test")) == "POST /"
    assert describe_request(req("https://h.test/p")) == "POST /p"
    assert describe_request(req("https://h.test/p?x=1", method="GET")) == "GET /p?x=1"


def test_query_and_non_json_body_differences_read_plainly() -> None:
    """A query that disappeared reads (none); a non-JSON body against JSON reads as sizes."""
    (q,) = diff_requests(req("https://h/p?a=1"), req("https://h/p"))
    assert (q.part, q.recorded, q.requested) == ("query", "a=1", "(none)")
    (b,) = diff_requests(req(body=b"plain text"), req(body={"a": 1}))
    assert (b.part, b.recorded, b.requested, b.pointer) == (
        "body",
        "10 bytes",
        "8 bytes (not equal)",
        None,
    )


def test_long_and_non_ascii_values_are_shortened_readably() -> None:
    """Values over 80 characters are cut to 77 plus "..."; non-ASCII is shown as written."""
    (d,) = diff_requests(req(body={"t": "x" * 79}), req(body={"t": "\u00e9" * 79}))
    assert d.recorded == '"' + "x" * 76 + "..." and len(d.recorded) == 80
    assert d.requested == '"' + "\u00e9" * 76 + "..."
    (d,) = diff_requests(req(body={"t": "x" * 77}), req(body={"t": "y"}))
    assert d.recorded == '"' + "x" * 77 + '"' and len(d.recorded) == 79
    (d,) = diff_requests(req(body={"t": "x" * 78}), req(body={"t": "y"}))
    assert d.recorded == '"' + "x" * 78 + '"' and len(d.recorded) == 80


def test_the_nearest_candidate_prefers_an_unused_one() -> None:
    """Two recorded requests differing alike: the miss names the one not yet used."""
    m = Matcher(recorded(req(body={"n": 1}), req(body={"n": 2})))
    assert m.match(req(body={"n": 1})) == Hit(0, 0)
    miss = m.match(req(body={"n": 3}))
    assert isinstance(miss, Miss) and miss.nearest == 1


def test_the_explanation_leaves_ignored_fields_out() -> None:
    """A miss lists only differences that count: an ignored body field is not among them."""
    opts = MatchOptions(ignore_body_fields=("/ts",))
    miss = Matcher(recorded(req(body={"ts": 1, "n": 1})), opts).match(req(body={"ts": 2, "n": 2}))
    assert isinstance(miss, Miss)
    assert [(d.pointer, d.recorded) for d in miss.differences] == [("/n", "1")]


def test_host_counts_only_with_match_host_and_ignores_case() -> None:
    """Without match_host another host matches; with it, only the same host in any case."""
    rec = recorded(req("https://api.example.test/v1/chat"))
    assert Matcher(rec).match(req("http://127.0.0.1:9/v1/chat")) == Hit(0, 0)
    strict = MatchOptions(match_host=True)
    assert Matcher(rec, strict).match(req("https://API.Example.TEST/v1/chat")) == Hit(0, 0)
    miss = Matcher(rec, strict).match(req("http://127.0.0.1:9/v1/chat"))
    assert isinstance(miss, Miss)
    assert [(d.part, d.recorded, d.requested) for d in miss.differences] == [
        ("host", "api.example.test", "127.0.0.1:9")
    ]


def test_method_case_does_not_matter() -> None:
    """A recorded POST answers a request sent as post."""
    assert Matcher(recorded(req())).match(req(method="post")) == Hit(0, 0)


def test_ignoring_the_whole_body_is_refused_with_its_reason() -> None:
    """--ignore-body-field '' names the option and why."""
    with pytest.raises(UsageError) as info:
        MatchOptions(ignore_body_fields=("",))
    assert str(info.value) == "--ignore-body-field '' would ignore the whole body"


def test_the_matcher_compares_json_documents_not_bytes() -> None:
    """The matcher (not only diff_requests) ignores key order and whitespace, drops ignored
    fields on both sides, and compares non-JSON bodies byte for byte."""
    rec = recorded(req(body=b'{"a": 1, "ts": 5, "m": [1, 2]}'), req(body=b"plain"))
    assert Matcher(rec).match(req(body=b'{"m":[1,2],"a":1,"ts":5}')) == Hit(0, 0)
    opts = MatchOptions(ignore_body_fields=("/ts",))
    assert Matcher(rec, opts).match(req(body={"a": 1, "ts": 9, "m": [1, 2]})) == Hit(0, 0)
    assert isinstance(Matcher(rec).match(req(body={"a": 1, "ts": 9, "m": [1, 2]})), Miss)
    assert Matcher(rec).match(req(body=b"plain")) == Hit(1, 0)
    assert isinstance(Matcher(rec).match(req(body=b"plain ")), Miss)


def test_blank_query_values_count_and_paths_are_shown_both_sides() -> None:
    """``?stream=`` is a parameter (blank values are kept), so it differs from no query; a
    path difference shows both paths."""
    (q,) = diff_requests(req("https://h/p?stream="), req("https://h/p"))
    assert (q.part, q.recorded, q.requested) == ("query", "stream=", "(none)")
    (p,) = diff_requests(req("https://h/a"), req("https://h/b"))
    assert (p.part, p.recorded, p.requested) == ("path", "/a", "/b")


def test_one_line_lists_twenty_differences_and_counts_the_rest() -> None:
    """Past 20 differences the stderr line says how many more there are, not all of them."""
    diffs = tuple(Difference("body", str(i), str(i + 1), f"/k{i}") for i in range(23))
    line = Miss("POST /v1/x", 0, diffs).one_line()
    assert line.count("body at /k") == 20
    assert "body at /k19:" in line and "/k20" not in line
    assert line.endswith("; ... and 3 more")
    twenty = Miss("POST /v1/x", 0, diffs[:20]).one_line()
    assert twenty.count("body at /k") == 20 and "more" not in twenty


def test_the_nearest_is_chosen_with_the_options_in_force() -> None:
    """An ignored query parameter does not count against a recorded request when the nearest
    is chosen: one body difference beats two, though without the option it would not."""
    options = MatchOptions(ignore_query=frozenset({"t"}))
    near = Request("POST", "https://h/v1/chat?t=1", body=b'{"x": 1}')
    far = Request("POST", "https://h/v1/chat?t=9", body=b'{"x": 3, "y": 1}')
    matcher = Matcher(
        [Interaction(r, None, Ending(EndKind.NO_RESPONSE, 0)) for r in (near, far)], options
    )
    miss = matcher.match(Request("POST", "https://h/v1/chat?t=9", body=b'{"x": 2}'))
    assert isinstance(miss, Miss) and miss.nearest == 0


def test_between_equal_candidates_the_nearest_is_on_the_requests_host() -> None:
    """Two recorded requests that differ from the request alike: the one recorded for the
    host the request went to is named."""
    recorded = [
        Request("POST", f"https://{host}/v1/chat", body=b'{"x": 1}')
        for host in ("a.test", "b.test")
    ]
    matcher = Matcher([Interaction(r, None, Ending(EndKind.NO_RESPONSE, 0)) for r in recorded])
    miss = matcher.match(Request("POST", "https://b.test/v1/chat", body=b'{"x": 2}'))
    assert isinstance(miss, Miss) and miss.nearest == 1


def test_a_different_top_level_body_has_no_option() -> None:
    """Bodies that differ as a whole (an array recorded, an object sent) are one difference
    at the root, which no --ignore-body-field can clear."""
    (diff,) = diff_requests(
        Request("POST", "https://h/v1/x", body=b"[1]"),
        Request("POST", "https://h/v1/x", body=b'{"a": 1}'),
    )
    assert (diff.part, diff.pointer, diff.option) == ("body", "", None)


def test_a_repeated_query_parameter_shows_all_its_values() -> None:
    """A parameter given twice is shown as both of its pairs, joined with '&'."""
    (diff,) = diff_requests(
        Request("GET", "https://h/v1/x?a=1&a=2"), Request("GET", "https://h/v1/x?a=1&a=3")
    )
    assert (diff.recorded, diff.requested) == ("a=1&a=2", "a=1&a=3")
