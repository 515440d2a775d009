"""Cassette diffs stated exactly: each field's difference with its level, indices, label and
both renderings; frames and events added, removed, changed and re-timed; the alignment of
interactions; and how a timing tolerance applies."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Interaction
from replayproxy._core.tools.diff import Difference, Timing, diff
from replayproxy.testing import MS, SSE_HEADERS, interaction, request


def ix(
    frames: tuple[tuple[int, bytes], ...] = ((10, b"A"), (20, b"B")),
    *,
    url: str = "https://x.test/v1/chat?q=1",
    headers: tuple[tuple[bytes, bytes], ...] = (),
    body: bytes = b"{}",
) -> Interaction:
    return interaction(
        [d for _, d in frames],
        request=request(url=url, headers=((b"a", b"1"),), body=body),
        reason="OK",
        headers=headers,
        head_ms=5,
        at_ms=[t for t, _ in frames],
        end=Ending(EndKind.COMPLETE, 30 * MS),
    )


EXACT = Timing()


def one(x: Interaction, y: Interaction, timing: Timing = EXACT) -> list[tuple[str, str, str, str]]:
    """The differences of two one-interaction cassettes as (level, what, a, b)."""
    found = diff(Cassette((x,)), Cassette((y,)), timing)
    assert all((d.a_index, d.b_index, d.label) == (0, 0, "POST /v1/chat") for d in found)
    return [(d.level, d.what, d.a, d.b) for d in found]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda x: replace(x, request=replace(x.request, method="PUT")), ("method", "POST", "PUT")),
        (
            lambda x: replace(x, request=replace(x.request, http_version="HTTP/2.0")),
            ("request http version", "HTTP/1.1", "HTTP/2.0"),
        ),
        (
            lambda x: replace(x, request=replace(x.request, headers=((b"a", b"1"), (b"b", b"\n")))),
            ("request header b", "", "\\n"),
        ),
        (
            lambda x: replace(x, response=replace(x.response, status=500)),
            ("status", "200", "500"),
        ),
        (
            lambda x: replace(x, response=replace(x.response, reason="Fine")),
            ("reason", "OK", "Fine"),
        ),
        (
            lambda x: replace(x, response=replace(x.response, http_version="HTTP/2.0")),
            ("response http version", "HTTP/1.1", "HTTP/2.0"),
        ),
        (
            lambda x: replace(x, response=replace(x.response, headers=((b"x", b"y"),))),
            ("response header x", "", "y"),
        ),
        (
            lambda x: replace(x, response=replace(x.response, head_offset_ns=5 * MS + 1)),
            ("time to first byte", "+5ms", "+5.000001ms"),
        ),
        (
            lambda x: replace(x, end=replace(x.end, kind=EndKind.RESET)),
            ("end", "complete", "reset"),
        ),
        (
            lambda x: replace(x, end=replace(x.end, offset_ns=31 * MS)),
            ("end time", "+30ms", "+31ms"),
        ),
        (
            lambda x: replace(x, end=replace(x.end, message="gone")),
            ("end message", "", "gone"),
        ),
        (
            lambda x: replace(x, faults=("hang", "drop:event=1")),
            ("faults", "(none)", "hang drop:event=1"),
        ),
    ],
)  # fmt: skip
def test_each_field_is_one_interaction_difference(
    change: object, expected: tuple[str, str, str]
) -> None:
    """A changed field gives exactly one interaction-level difference, rendered both sides."""
    assert callable(change)
    x = ix()
    assert one(x, change(x)) == [("interaction", *expected)]


def test_request_body_and_url() -> None:
    """A different body or URL is the other interaction of a replace, paired with it."""
    x = ix()
    assert one(x, replace(x, request=replace(x.request, body=b'{"a":1}'))) == [
        ("interaction", "request body", '"{}"', "'{\"a\":1}'"),
    ]
    assert one(x, replace(x, request=replace(x.request, url="https://x.test/v1/chat?q=2"))) == [
        ("interaction", "url", "https://x.test/v1/chat?q=1", "https://x.test/v1/chat?q=2"),
    ]


def test_response_none_on_one_side() -> None:
    """A response on one side only: its status against ``none``, then the ending."""
    x = ix()
    y = replace(x, response=None, end=Ending(EndKind.NO_RESPONSE, 30 * MS))
    assert one(x, y) == [
        ("interaction", "response", "200", "none"),
        ("interaction", "end", "complete", "no_response"),
    ]
    assert one(y, x)[0] == ("interaction", "response", "none", "200")


def test_long_bodies_are_cut_to_120_characters() -> None:
    """A rendering longer than 120 characters keeps 117 and ends with ..."""
    x = ix()
    long_a, long_b = b"a" * 200, b"a" * 117 + b"b"
    ((_, _, a, b),) = one(
        replace(x, request=replace(x.request, body=long_a)),
        replace(x, request=replace(x.request, body=long_b)),
    )
    assert a == '"' + "a" * 116 + "..."
    assert b == '"' + "a" * 117 + 'b"'  # exactly 120: kept whole


def test_frames_added_removed_changed_and_retimed() -> None:
    """Frame count, a re-timed equal frame, a changed frame and one only in B, each exact; the
    body (not an event stream) differs from its first differing byte."""
    x = ix(((10, b"A"), (20, b"B"), (30, b"C")))
    y = ix(((10, b"A"), (25, b"B"), (30, b"X"), (40, b"D")))
    assert one(x, y) == [
        ("frame", "frame count", "3", "4"),
        ("frame", "frame 1 time", "+20ms", "+25ms"),
        ("frame", "frame 2", '+30ms "C"', '+30ms "X"'),
        ("frame", "frame 3 (B)", "", '+40ms "D"'),
        ("interaction", "body (differs from byte 2)", '"ABC"', '"ABXD"'),
    ]
    assert one(y, x)[:4] == [
        ("frame", "frame count", "4", "3"),
        ("frame", "frame 1 time", "+25ms", "+20ms"),
        ("frame", "frame 2", '+30ms "X"', '+30ms "C"'),
        ("frame", "frame 3", '+40ms "D"', ""),
    ]


def test_a_body_that_is_a_prefix_differs_from_its_end() -> None:
    """One body the start of the other: they differ from the shorter one's length."""
    assert one(ix(((10, b"AB"),)), ix(((10, b"ABC"),)))[-1] == (
        "interaction", "body (differs from byte 2)", '"AB"', '"ABC"',
    )  # fmt: skip


def test_a_frame_later_within_the_tolerance_is_equal() -> None:
    """Times within the tolerance (inclusive) are equal; one nanosecond more is a difference."""
    x = ix()
    y = ix(((10, b"A"), (23, b"B")))
    assert one(x, y, Timing(tolerance_ns=3 * MS)) == []
    assert one(x, y, Timing(tolerance_ns=3 * MS - 1)) == [
        ("frame", "frame 1 time", "+20ms", "+23ms")
    ]
    head = replace(x, response=replace(x.response, head_offset_ns=8 * MS))  # type: ignore[type-var]
    assert one(x, head, Timing(tolerance_ns=3 * MS)) == []
    assert one(x, head, Timing(tolerance_ns=2 * MS))[0][1] == "time to first byte"
    late = replace(x, end=replace(x.end, offset_ns=33 * MS))
    assert one(x, late, Timing(tolerance_ns=3 * MS)) == []
    assert one(x, late, Timing(tolerance_ns=2 * MS)) == [
        ("interaction", "end time", "+30ms", "+33ms")
    ]


def test_ignored_timing() -> None:
    """With timing ignored: times never differ, a re-split of the same bytes is one line, and a
    changed frame is shown without its time."""
    x = ix()
    ignore = Timing(ignore=True)
    retimed = ix(((11, b"A"), (29, b"B")))
    retimed = replace(retimed, end=replace(retimed.end, offset_ns=99 * MS))
    assert one(x, retimed, ignore) == []
    assert one(x, ix(((12, b"AB"),)), ignore) == [
        ("frame", "frame splits (same bytes)", "2 frames", "1 frames"),
        ("frame", "frame 0 ends at body offset", "1", "2"),
    ]
    assert one(x, ix(((12, b"A"), (13, b""), (14, b"B"))), ignore) == [
        ("frame", "frame splits (same bytes)", "2 frames", "3 frames"),
        ("frame", "frame 1 ends at body offset", "2", "1"),
    ]
    assert one(x, ix(((12, b"A"), (13, b"C"))), ignore) == [
        ("frame", "frame 1", '"B"', '"C"'),
        ("interaction", "body (differs from byte 1)", '"AB"', '"AC"'),
    ]
    assert one(x, ix(((12, b"AB"),))) == [
        ("frame", "frame count", "2", "1"),
        ("frame", "frame 0", '+10ms "A"', '+12ms "AB"'),
        ("frame", "frame 1", '+20ms "B"', ""),
    ]


def test_same_sizes_but_moved_bytes_are_a_resplit() -> None:
    """Same frame count, same bytes, different cut: still a re-split, with timing ignored."""
    x = ix(((10, b"AB"), (20, b"C")))
    assert one(x, ix(((10, b"A"), (20, b"BC"))), Timing(ignore=True)) == [
        ("frame", "frame splits (same bytes)", "2 frames", "2 frames"),
        ("frame", "frame 0 ends at body offset", "2", "1"),
    ]


E = [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"]


def test_events_added_removed_and_changed() -> None:
    """Event streams are compared event by event: count, changed and added, exactly."""
    x = ix(((10, E[0] + E[1] + E[2]),), headers=SSE_HEADERS)
    y = ix(((10, E[0] + b"data: one\n\n" + E[2] + E[3]),), headers=SSE_HEADERS)
    events = [d for d in one(x, y) if d[0] == "event"]
    assert events == [
        ("event", "event count", "3", "4"),
        ("event", "event 1", '"data: 1\\n\\n"', '"data: one\\n\\n"'),
        ("event", "event 3 (B)", "", '"data: 3\\n\\n"'),
    ]
    back = [d for d in one(y, x) if d[0] == "event"]
    assert back[-1] == ("event", "event 3", '"data: 3\\n\\n"', "")


def test_one_side_an_event_stream_the_other_not() -> None:
    """When only one body is an event stream, bodies are compared byte by byte."""
    x = ix(((10, E[0]),), headers=SSE_HEADERS)
    y = ix(((10, b"data: 0\n\n!"),), headers=((b"content-type", b"application/json"),))
    what = "body (differs from byte 9)"
    assert one(x, y)[-1] == ("interaction", what, '"data: 0\\n\\n"', '"data: 0\\n\\n!"')


def test_meta_differences() -> None:
    """Meta is compared as a whole: one cassette-level difference listing both sides."""
    a = Cassette((), (("k", "1"), ("j", "2")))
    b = Cassette((), (("k", "1"),))
    assert diff(a, b) == [Difference("cassette", None, None, "", "meta", "k=1, j=2", "k=1")]


def test_interactions_are_aligned_by_request() -> None:
    """Interactions pair up by method, URL and body: a replaced run pairs as far as it goes,
    the rest are only in A or only in B, with their own indices and labels."""
    p, q, r, s, t = (ix(url=f"https://x.test/{n}") for n in "pqrst")
    a = Cassette((p, q, r))
    b = Cassette((p, s, t, r))
    found = [(d.a_index, d.b_index, d.label, d.what) for d in diff(a, b)]
    assert found == [
        (1, 1, "POST /q", "url"),
        (None, 2, "POST /t", "only in B"),
    ]
    back = [(d.a_index, d.b_index, d.label, d.what) for d in diff(b, a)]
    assert back == [(1, 1, "POST /s", "url"), (2, None, "POST /t", "only in A")]
    assert [(d.a_index, d.b_index, d.what) for d in diff(Cassette((p, q)), Cassette((q,)))] == [
        (0, None, "only in A")
    ]
    assert [(d.a_index, d.b_index, d.what) for d in diff(Cassette((q,)), Cassette((p, q)))] == [
        (None, 0, "only in B")
    ]


def test_long_runs_of_few_distinct_items_still_align() -> None:
    """Hundreds of frames, events or interactions, each equal to some 80 others: one inserted
    is reported as that one alone (difflib's "popular item" heuristic would pair the rest
    wrongly and report them all)."""
    keys = random.Random(0).choices("012", k=250)  # no pattern, so one alignment is best
    frames = [(10 + i, k.encode()) for i, k in enumerate(keys)]
    x, y = ix(tuple(frames)), ix((*frames[:100], (109, b"new"), *frames[100:]))
    assert [d for d in one(x, y) if d[0] == "frame"] == [
        ("frame", "frame count", "250", "251"),
        ("frame", "frame 100 (B)", "", '+109ms "new"'),
    ]
    events = [(10 + i, b"data: %s\n\n" % k.encode()) for i, k in enumerate(keys)]
    sx = ix(tuple(events), headers=SSE_HEADERS)
    sy = ix((*events[:100], (109, b"data: new\n\n"), *events[100:]), headers=SSE_HEADERS)
    assert [d for d in one(sx, sy) if d[0] == "event"] == [
        ("event", "event count", "250", "251"),
        ("event", "event 100 (B)", "", '"data: new\\n\\n"'),
    ]
    many = [ix(url=f"https://x.test/{k}") for k in keys]
    extra = ix(url="https://x.test/other")
    found = diff(Cassette(tuple(many)), Cassette((*many[:100], extra, *many[100:])))
    assert [(d.a_index, d.b_index, d.what) for d in found] == [(None, 100, "only in B")]


def test_a_run_of_changed_events_is_reported_event_by_event() -> None:
    """Two events replaced by three: each pair, then the extra one of B; and the other way."""
    x = ix(((10, E[0] + E[1] + E[2] + E[3]),), headers=SSE_HEADERS)
    y = ix(
        ((10, E[0] + b"data: a\n\n" + b"data: b\n\n" + b"data: c\n\n" + E[3]),), headers=SSE_HEADERS
    )
    assert [d for d in one(x, y) if d[0] == "event"] == [
        ("event", "event count", "4", "5"),
        ("event", "event 1", '"data: 1\\n\\n"', '"data: a\\n\\n"'),
        ("event", "event 2", '"data: 2\\n\\n"', '"data: b\\n\\n"'),
        ("event", "event 3 (B)", "", '"data: c\\n\\n"'),
    ]
    assert [d for d in one(y, x) if d[0] == "event"] == [
        ("event", "event count", "5", "4"),
        ("event", "event 1", '"data: a\\n\\n"', '"data: 1\\n\\n"'),
        ("event", "event 2", '"data: b\\n\\n"', '"data: 2\\n\\n"'),
        ("event", "event 3", '"data: c\\n\\n"', ""),
    ]


def test_differences_name_both_indices_in_a_run_of_pairs() -> None:
    """In a run of paired interactions, each difference names its own index on each side;
    an interaction on one side only is a whole Difference with empty renderings."""
    p, q, r = (ix(url=f"https://x.test/{n}") for n in "pqr")
    slow = replace(q, end=replace(q.end, kind=EndKind.RESET))
    found = diff(Cassette((r, p, q)), Cassette((p, slow)))
    assert found == [
        Difference("interaction", 0, None, "POST /r", "only in A", "", ""),
        Difference("interaction", 2, 1, "POST /q", "end", "complete", "reset"),
    ]
    assert diff(Cassette((p, q)), Cassette((r, p, slow))) == [
        Difference("interaction", None, 0, "POST /r", "only in B", "", ""),
        Difference("interaction", 1, 2, "POST /q", "end", "complete", "reset"),
    ]


@pytest.mark.parametrize("at", [0, 1, 120, 249, 250])
def test_one_item_inserted_into_a_run_of_identical_ones_is_that_one_alone(at: int) -> None:
    """250 equal interactions, frames or events and one more anywhere in the run: one
    difference at its index (difflib alone reported 121 inserted and 120 deleted for 120)."""
    same = ix(url="https://x.test/same")
    extra = ix(url="https://x.test/extra")
    run = (same,) * 250
    found = diff(Cassette(run), Cassette((*run[:at], extra, *run[at:])))
    assert [(d.a_index, d.b_index, d.what) for d in found] == [(None, at, "only in B")]
    back = diff(Cassette((*run[:at], extra, *run[at:])), Cassette(run))
    assert [(d.a_index, d.b_index, d.what) for d in back] == [(at, None, "only in A")]
    pings = [(10 + i, b"data: ping\n\n") for i in range(250)]  # same bytes, one ms apart
    x = ix(tuple(pings), headers=SSE_HEADERS)
    y = ix((*pings[:at], (10 + at, b"data: new\n\n"), *pings[at:]), headers=SSE_HEADERS)
    assert [d for d in one(x, y) if d[0] in ("frame", "event")] == [
        ("frame", "frame count", "250", "251"),
        ("frame", f"frame {at} (B)", "", f'+{10 + at}ms "data: new\\n\\n"'),
        ("event", "event count", "250", "251"),
        ("event", f"event {at} (B)", "", '"data: new\\n\\n"'),
    ]


def test_a_change_at_the_start_and_an_insertion_in_the_run_are_both_alone() -> None:
    """The first interaction changed and one inserted into the run after it: two differences
    (the common tail pairs the run's end, so the matcher sees the run's start aligned)."""
    same = ix(url="https://x.test/same")
    a = Cassette((ix(url="https://x.test/p"), *(same,) * 250))
    b = Cassette((ix(url="https://x.test/q"), *(same,) * 120, ix(url="https://x.test/e"),
                  *(same,) * 130))  # fmt: skip
    assert [(d.a_index, d.b_index, d.what) for d in diff(a, b)] == [
        (0, 0, "url"),
        (None, 121, "only in B"),
    ]


def test_of_two_recordings_of_one_request_the_removed_one_is_named() -> None:
    """Equal requests, different responses: removing either reports that one (the keys alone
    cannot tell them apart, the whole interactions can)."""
    first, second = ix(((10, b"A"),)), ix(((10, b"B"),))
    other = ix(url="https://x.test/other")
    a = Cassette((first, second, other))
    for removed, kept in ((0, second), (1, first)):
        found = diff(a, Cassette((kept, other)))
        assert [(d.a_index, d.b_index, d.what) for d in found] == [(removed, None, "only in A")]


def test_a_changed_item_between_runs_pairs_with_its_counterpart() -> None:
    """Equal heads and tails pair one to one; what differs between them is compared as before
    (a replaced item is one pair with its field differences, not a delete and an insert)."""
    same = ix(url="https://x.test/same")
    a = Cassette((same,) * 100 + (ix(url="https://x.test/p"),) + (same,) * 100)
    b = Cassette((same,) * 100 + (ix(url="https://x.test/q"),) + (same,) * 100)
    assert [(d.a_index, d.b_index, d.what) for d in diff(a, b)] == [(100, 100, "url")]
    assert diff(a, a) == []
    assert [(d.a_index, d.b_index, d.what) for d in diff(Cassette(()), a)][:1] == [
        (None, 0, "only in B")
    ]
