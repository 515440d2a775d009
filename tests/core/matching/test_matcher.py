"""Request matching: what matches, in which order, and how a miss is explained."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._core.matching.differences import REDACTED, MatchOptions, diff_requests
from replayproxy._core.matching.matcher import Hit, Matcher, Miss
from replayproxy._errors import UsageError

CHAT = "https://api.openai.com/v1/chat/completions"


def post(url: str = CHAT, body: object = None, method: str = "POST") -> Request:
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    return Request(method, url, body=data)


def recorded(*requests: Request) -> list[Interaction]:
    return [Interaction(r, None, Ending(EndKind.NO_RESPONSE, 0)) for r in requests]


def test_json_body_key_order_and_whitespace_are_ignored() -> None:
    """A JSON body matches whatever its key order and whitespace."""
    rec = post(body=b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    req = post(body=b'{"messages":[{"content":"hi","role":"user"}],"model":"m"}')
    assert diff_requests(rec, req) == ()


def test_host_is_ignored_by_default_and_checked_with_match_host() -> None:
    """A forward-proxy recording matches a base-URL request, unless match_host is set."""
    rec = post("https://api.openai.com/v1/chat/completions", {"a": 1})
    req = post("http://127.0.0.1:4567/v1/chat/completions", {"a": 1})
    assert diff_requests(rec, req) == ()
    diffs = diff_requests(rec, req, MatchOptions(match_host=True))
    assert [d.part for d in diffs] == ["host"]


def test_each_part_that_differs_is_reported() -> None:
    """Method, path, query and body differences are each listed."""
    rec = post(CHAT + "?a=1", {"x": 1})
    req = post("https://h/v1/other?a=2", {"x": 2}, method="PUT")
    assert [d.part for d in diff_requests(rec, req)] == ["method", "path", "query", "body"]


def test_query_order_is_ignored_but_values_count() -> None:
    """Query parameters compare as a multiset."""
    assert diff_requests(post(CHAT + "?a=1&b=2"), post(CHAT + "?b=2&a=1")) == ()
    assert diff_requests(post(CHAT + "?a=1&a=2"), post(CHAT + "?a=1")) != ()


def test_first_differing_json_pointer_is_reported() -> None:
    """The body difference names the first differing member by JSON pointer."""
    rec = post(body={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    req = post(body={"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    (diff,) = diff_requests(rec, req)
    assert diff.pointer == "/messages/0/content"
    assert '"hi"' in str(diff) and '"hello"' in str(diff)


def test_missing_and_extra_members_are_differences() -> None:
    """An absent member and an extra member are both differences, shown as (absent)."""
    (diff,) = diff_requests(post(body={"a": 1, "b": 2}), post(body={"a": 1}))
    assert diff.pointer == "/b" and diff.requested == "(absent)"
    (diff,) = diff_requests(post(body={"a": 1}), post(body={"a": 1, "c": [1]}))
    assert diff.pointer == "/c" and diff.recorded == "(absent)"


def test_true_and_one_are_different_json_values() -> None:
    """JSON true does not match 1 (Python's bool/int equality is not used)."""
    assert diff_requests(post(body={"stream": True}), post(body={"stream": 1})) != ()


def test_non_json_bodies_compare_bytes() -> None:
    """Bodies that are not JSON compare byte for byte."""
    assert diff_requests(post(body=b"a=1&b=2"), post(body=b"a=1&b=2")) == ()
    (diff,) = diff_requests(post(body=b"a=1&b=2"), post(body=b"a=1&b=3"))
    assert diff.part == "body" and diff.pointer is None


def test_ignored_query_parameters_and_body_fields() -> None:
    """--ignore-query and --ignore-body-field drop those members on both sides."""
    opts = MatchOptions(
        ignore_query=frozenset({"ts"}),
        ignore_body_fields=("/stream_options", "/messages/0/name", "/absent/deep"),
    )
    rec = post(CHAT + "?ts=1", {"stream_options": {"a": 1}, "messages": [{"name": "x", "c": 1}]})
    req = post(CHAT + "?ts=2", {"messages": [{"c": 1, "name": "y"}]})
    assert diff_requests(rec, req, opts) == ()
    assert diff_requests(rec, req) != ()


def test_pointer_escapes_and_bad_pointers() -> None:
    """JSON pointers follow RFC 6901 escapes; a pointer without '/' is a UsageError."""
    assert parse_pointer("/a~1b/c~0d") == ("a/b", "c~d")
    with pytest.raises(UsageError, match="must start with '/'"):
        MatchOptions(ignore_body_fields=("stream_options",))
    with pytest.raises(UsageError):
        MatchOptions(ignore_body_fields=("",))
    rec = post(body={"a/b": 1, "z": 0})
    assert (
        diff_requests(rec, post(body={"z": 0}), MatchOptions(ignore_body_fields=("/a~1b",))) == ()
    )


def test_redacted_values_match_anything() -> None:
    """A redacted query value or body value recorded as the marker matches any value."""
    rec = post(
        f"https://g/v1/models/x:streamGenerateContent?alt=sse&key={REDACTED}", {"k": REDACTED}
    )
    req = post("https://g/v1/models/x:streamGenerateContent?key=AIzaSECRET&alt=sse", {"k": "s3"})
    assert diff_requests(rec, req) == ()


def test_a_redacted_query_value_of_any_name_matches_anything() -> None:
    """Not only credential parameters: a recorded query value that is the redaction marker
    (a custom secret the recorder was told to redact) matches any value; others still count."""
    rec = post(f"{CHAT}?sig={REDACTED}&v=1", {"a": 1})
    assert diff_requests(rec, post(f"{CHAT}?v=1&sig=abc", {"a": 1})) == ()
    (diff,) = diff_requests(rec, post(f"{CHAT}?v=2&sig=abc", {"a": 1}))
    assert (diff.part, diff.recorded, diff.requested) == ("query", "v=1", "v=2")


def test_identical_requests_replay_in_recorded_order_then_miss() -> None:
    """Identical requests take the recorded interactions in order; then they are used up."""
    m = Matcher(recorded(post(body={"a": 1}), post(body={"b": 1}), post(body={"a": 1})))
    assert m.match(post(body={"a": 1})) == Hit(0, 0)
    assert m.match(post(body={"a": 1})) == Hit(2, 0)
    miss = m.match(post(body={"a": 1}))
    assert isinstance(miss, Miss) and miss.used_up and miss.nearest == 2
    assert "--allow-repeats" in miss.explain()
    assert m.unused() == (1,)


def test_allow_repeats_serves_the_last_match_again() -> None:
    """With allow_repeats the last matching interaction is served again, counting repeats."""
    m = Matcher(
        recorded(post(body={"a": 1}), post(body={"a": 1})), MatchOptions(allow_repeats=True)
    )
    assert [m.match(post(body={"a": 1})) for _ in range(4)] == [
        Hit(0, 0),
        Hit(1, 0),
        Hit(1, 1),
        Hit(1, 2),
    ]


def test_miss_names_the_nearest_interaction_and_how_it_differs() -> None:
    """The nearest interaction differs least (a body difference beats a path difference)."""
    m = Matcher(
        recorded(post("https://a/v1/embeddings", {"a": 1}), post(body={"model": "m", "n": 1}))
    )
    miss = m.match(post(body={"model": "m", "n": 2}))
    assert isinstance(miss, Miss) and miss.nearest == 1 and not miss.used_up
    text = miss.explain()
    assert "POST /v1/chat/completions" in text and "#1" in text and "/n" in text
    assert "/n" in miss.one_line() and "\n" not in miss.one_line()


def test_empty_cassette_miss() -> None:
    """With no interactions, a miss says the cassette is empty."""
    miss = Matcher([]).match(post())
    assert isinstance(miss, Miss) and miss.nearest is None
    assert "no interactions" in miss.explain()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6), st.randoms())
def test_any_json_object_matches_itself_reserialized(
    doc: dict[str, object], rnd: random.Random
) -> None:
    """Any JSON object matches itself with keys shuffled and different whitespace."""
    items = list(doc.items())
    rnd.shuffle(items)
    again = json.dumps(dict(items), indent=rnd.choice([None, 1])).encode()
    assert diff_requests(post(body=json.dumps(doc).encode()), post(body=again)) == ()


@given(json_values, json_values)
def test_difference_is_found_exactly_when_values_differ(a: object, b: object) -> None:
    """diff_requests reports a body difference iff the JSON values differ (no redaction)."""
    da, db = json.dumps(a).encode(), json.dumps(b).encode()
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    redacted = REDACTED in da.decode()
    if not redacted:
        assert (diff_requests(post(body=da), post(body=db)) == ()) == same


@given(st.binary(max_size=64), st.binary(max_size=64))
def test_arbitrary_bytes_never_crash_matching(a: bytes, b: bytes) -> None:
    """Any body bytes are compared without errors; equal bytes always match."""
    diffs = diff_requests(post(body=a), post(body=b))
    if a == b:
        assert diffs == ()


def test_credential_query_parameters_never_match_or_show() -> None:
    """A ``key`` query parameter is ignored in matching and redacted in explanations."""
    rec = post("https://g/v1beta/m:streamGenerateContent?alt=sse", {"a": 1})
    req = post("https://g/v1beta/m:streamGenerateContent?key=AIzaSECRET&alt=sse", {"a": 1})
    assert diff_requests(rec, req) == ()
    miss = Matcher(recorded(rec)).match(
        post("https://g/v1beta/m:streamGenerateContent?key=AIzaSECRET&alt=json", {"a": 1})
    )
    assert isinstance(miss, Miss)
    assert "AIzaSECRET" not in miss.explain() and "AIzaSECRET" not in miss.one_line()
    assert "key=<redacted>" in miss.explain()


# The Matcher compares precomputed keys (an index by method/host/path, then query and body);
# it must pick exactly what comparing with diff_requests, interaction by interaction, picks.
_methods = st.sampled_from(["GET", "POST", "post"])
_urls = st.builds(
    lambda host, path, query: f"https://{host}{path}{'?' + query if query else ''}",
    st.sampled_from(["a.example", "B.example"]),
    st.sampled_from(["/v1/chat/completions", "/v1/responses", "/"]),
    st.lists(
        st.builds(
            "{}={}".format,
            st.sampled_from(["x", "y", "key", "api-version"]),
            st.sampled_from(["1", "2", "", REDACTED]),
        ),
        max_size=3,
    ).map("&".join),
)
_bodies = st.one_of(
    st.builds(
        lambda d: json.dumps(d).encode(),
        st.dictionaries(
            st.sampled_from(["model", "stream", "n", "stream_options"]),
            st.sampled_from([None, True, 1, 1.0, "m", REDACTED, {"include_usage": True}]),
            max_size=3,
        ),
    ),
    st.sampled_from([b"", b"not json", b"  "]),
)
_requests = st.builds(lambda m, u, b: Request(m, u, body=b), _methods, _urls, _bodies)
_options = st.builds(
    MatchOptions,
    ignore_query=st.sampled_from([frozenset(), frozenset({"y"})]),
    ignore_body_fields=st.sampled_from([(), ("/stream_options",), ("/stream_options/x", "/n")]),
    match_host=st.booleans(),
    allow_repeats=st.booleans(),
    equivalence=st.booleans(),
)


def _filled_in(req: Request) -> Request:
    """A request as a client sends it: the values the recorder redacted are real again."""
    return Request(
        req.method,
        req.url.replace(REDACTED, "s3cret"),
        body=req.body.replace(json.dumps(REDACTED).encode(), b'"s3cret"'),
    )


def _retyped(v: object, how: int) -> object:
    if v is True:
        return 1 if how == 1 else v
    if type(v) is int:
        return float(v) if how == 1 else v == 1 or v
    if type(v) is float and v.is_integer():
        return int(v)
    return v


def _tweaked(req: Request, how: int) -> Request:
    """The request with its JSON body changed in a way matching may or may not ignore."""
    try:
        doc = json.loads(req.body)
    except ValueError:
        return req
    if not isinstance(doc, dict):
        return req
    if how == 0:
        doc.pop("stream_options", None) if "stream_options" in doc else doc.update(
            stream_options={"x": 1}
        )
    else:  # same value as JSON text, different type: true/1, 1/1.0
        doc = {k: _retyped(v, how) for k, v in doc.items()}
    return Request(req.method, req.url, body=json.dumps(doc).encode())


@given(st.lists(_requests, max_size=6), st.data(), _options)
def test_matcher_picks_what_diff_requests_says_matches(
    recorded_requests: list[Request], data: st.DataObject, options: MatchOptions
) -> None:
    """Matcher.match agrees with a reference built on diff_requests, request after request."""
    again = st.sampled_from(recorded_requests or [post()])
    incoming = data.draw(
        st.lists(
            _requests
            | again
            | again.map(_filled_in)
            | st.builds(_tweaked, again, st.sampled_from([0, 1, 2])),
            min_size=1,
            max_size=6,
        )
    )
    matcher = Matcher(recorded(*recorded_requests), options)
    uses = [0] * len(recorded_requests)
    for req in incoming:
        candidates = [
            n for n, rec in enumerate(recorded_requests) if not diff_requests(rec, req, options)
        ]
        fresh = [n for n in candidates if uses[n] == 0]
        got = matcher.match(req)
        if fresh or (candidates and options.allow_repeats):
            n = fresh[0] if fresh else candidates[-1]
            assert got == Hit(n, uses[n])
            uses[n] += 1
        else:
            assert isinstance(got, Miss)
            assert got.used_up == bool(candidates)
            if candidates:
                assert got.nearest == candidates[-1]


# -- explaining a miss: every difference, ranked, with the options that fix it ------------------

RESPONSES = "https://api.openai.com/v1/responses"


def test_a_miss_names_every_difference_and_the_host_with_a_pasteable_fix() -> None:
    """Three differing body fields and another host: the miss holds all four, the explanation
    lists the three that are compared (the host is not, without match_host) and names the
    host in its first line."""
    rec = post(RESPONSES, {"model": "m", "input": "hi", "stream": True})
    req = post(
        "http://127.0.0.1:9/v1/responses",
        {
            "model": "m",
            "input": "hello",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "tool_choice": "required",
        },
    )
    miss = Matcher(recorded(rec)).match(req)
    assert isinstance(miss, Miss) and miss.nearest == 0 and miss.host == "127.0.0.1:9"
    assert [(d.part, d.pointer) for d in miss.differences] == [
        ("host", None),
        ("body", "/input"),
        ("body", "/include"),
        ("body", "/tool_choice"),
    ]
    text = miss.explain()
    assert "host 127.0.0.1:9" in text.splitlines()[0]
    assert "differs in 3 places" in text
    assert "host: recorded" not in text
    fix = "--ignore-body-field /input --ignore-body-field /include --ignore-body-field /tool_choice"
    assert f"to match it, add: {fix}" in text
    assert miss.fixable
    assert " ".join(miss.options) == fix
    # The options it suggests do make the request match.
    opts = MatchOptions(ignore_body_fields=("/input", "/include", "/tool_choice"))
    assert isinstance(Matcher(recorded(rec), opts).match(req), Hit)
    short = miss.short()
    assert short.isascii() and "\n" not in short
    assert "differs in /input, /include, /tool_choice;" in short and fix in short


def test_query_differences_are_one_per_parameter_with_ignore_query() -> None:
    """Each differing query parameter is its own difference with its --ignore-query option."""
    miss = Matcher(recorded(post(CHAT + "?a=1&b=2&c=3"))).match(post(CHAT + "?a=1&b=9&c=4"))
    assert isinstance(miss, Miss)
    assert [str(d) for d in miss.differences] == [
        "query: recorded b=2, requested b=9",
        "query: recorded c=3, requested c=4",
    ]
    assert miss.options == ("--ignore-query b", "--ignore-query c") and miss.fixable


def test_a_different_path_or_method_has_no_option_and_says_to_record() -> None:
    """No option makes another path match: the explanation says to record the request."""
    miss = Matcher(recorded(post(CHAT, {"a": 1}))).match(
        post("https://api.openai.com/v1/embeddings", {"a": 2})
    )
    assert isinstance(miss, Miss) and not miss.fixable
    text = miss.explain()
    assert "path: recorded /v1/chat/completions, requested /v1/embeddings" in text
    assert "no option makes a different path match" in text and "record --append" in text
    assert "these options clear the other differences: --ignore-body-field /a" in text


def test_match_host_differences_say_how_to_stop_comparing_hosts() -> None:
    """With --match-host a different host is compared and the fix is to leave the flag out."""
    opts = MatchOptions(match_host=True)
    miss = Matcher(recorded(post(CHAT)), opts).match(
        post("https://other.example/v1/chat/completions")
    )
    assert isinstance(miss, Miss) and miss.differences[0].compared
    assert "leave it out" in miss.explain()
    assert "not compared" not in miss.explain()


def test_long_lists_of_differences_are_capped_but_counted() -> None:
    """A body differing in 30 members lists 20 and counts the rest."""
    rec = post(body={f"k{i}": i for i in range(30)})
    miss = Matcher(recorded(rec)).match(post(body={f"k{i}": -i - 1 for i in range(30)}))
    assert isinstance(miss, Miss) and len(miss.differences) == 30
    text = miss.explain()
    assert "differs in 30 places" in text and "... and 10 more" in text
    assert "body at /k19:" in text and "body at /k20:" not in text
    assert len(miss.options) == 30


def test_the_nearest_is_the_one_with_fewest_differences() -> None:
    """Between two body-only misses, the one with fewer differing members is nearest."""
    m = Matcher(recorded(post(body={"a": 1, "b": 1, "c": 1}), post(body={"a": 1, "b": 2, "c": 2})))
    miss = m.match(post(body={"a": 2, "b": 2, "c": 2}))
    assert isinstance(miss, Miss) and miss.nearest == 1 and len(miss.differences) == 1


def test_used_up_says_restart_or_allow_repeats() -> None:
    """A used-up recording tells the newcomer each recording is served once per run."""
    m = Matcher(recorded(post(body={"a": 1})))
    m.match(post(body={"a": 1}))
    miss = m.match(post(body={"a": 1}))
    assert isinstance(miss, Miss) and "restart replayproxy" in miss.explain()
    assert "--allow-repeats" in miss.short()


@given(json_values, json_values)
def test_every_difference_listed_is_real_and_the_fix_makes_it_match(a: object, b: object) -> None:
    """Ignoring every suggested pointer makes any two JSON objects match (when fixable)."""
    rec, req = post(body={"x": a, "y": 1}), post(body={"x": b, "y": 2})
    miss = Matcher(recorded(rec)).match(req)
    if isinstance(miss, Miss) and miss.fixable:
        pointers = tuple(o.removeprefix("--ignore-body-field ") for o in miss.options)
        assert isinstance(
            Matcher(recorded(rec), MatchOptions(ignore_body_fields=pointers)).match(req), Hit
        )


def test_an_added_interaction_is_matched_and_counted_as_served() -> None:
    """Matcher.add gives the next index and makes the interaction matchable by its request;
    it counts as served already (a later identical request is used up, or with allow_repeats
    served again), or, with used=False, as not yet served."""
    a, b = post(body={"n": 1}), post(CHAT + "?q=1", {"n": 2}, method="PUT")
    matcher = Matcher(recorded(a))
    assert matcher.add(recorded(b)[0]) == 1
    assert matcher.interactions[1].request == b and matcher.uses == [0, 1]
    used_up = matcher.match(b)
    assert isinstance(used_up, Miss) and used_up.used_up and used_up.nearest == 1
    c = post("https://other.example/v1/x?k=v", {"n": 3}, method="PATCH")
    assert matcher.add(recorded(c)[0], used=False) == 2
    assert matcher.match(c) == Hit(2, 0)
    assert matcher.unused() == (0,)
    repeats = Matcher(recorded(a), MatchOptions(allow_repeats=True, match_host=True))
    repeats.add(recorded(c)[0])
    assert repeats.match(c) == Hit(1, 1)
    other_host = post("https://elsewhere.example/v1/x?k=v", {"n": 3}, method="PATCH")
    assert isinstance(repeats.match(other_host), Miss)


def test_the_comparison_names_stay_importable_from_the_matcher() -> None:
    """MatchOptions, diff_requests and the rest moved to differences.py; users' imports from
    matcher.py still give the very same objects."""
    from replayproxy._core.matching import differences, explanation, matcher

    for name in ("REDACTED", "MatchOptions", "describe_request", "diff_requests"):
        assert getattr(matcher, name) is getattr(differences, name), name
    assert matcher.explain_differences is differences.explain_differences
    assert (matcher.Miss, matcher.Difference) == (explanation.Miss, explanation.Difference)
    assert set(matcher.__all__) >= {"MatchOptions", "diff_requests", "explain_differences"}
