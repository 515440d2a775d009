"""Cassette edits stated exactly: every option counts as an edit, each error message in full,
JSON redaction's paths and re-serialization, endings, the fault list and timing corner cases."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import pytest

from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Frame, Interaction, Request
from replayproxy._core.tools.edit import Edits, apply, parse_position
from replayproxy._core.tools.event_field import FieldEdit
from replayproxy._errors import FaultSpecError, UsageError
from replayproxy.testing import MS
from tests.cassette.samples import SSE_EVENTS, sample_cassette, sse_interaction

E0, E1, E2, E3 = SSE_EVENTS
SAMPLE_VALUES: dict[str, object] = {
    "delete": True,
    "redact_headers": ("x",),
    "redact_json": ("/user",),
    "bake": ("hang",),
    "insert_events": ((0, b"data: x\n\n"),),
    "drop_events": (0,),
    "duplicate_events": (0,),
    "set_event_fields": (FieldEdit(0, "/a", 1),),
    "truncate": "events=1",
    "split": ("bytes=1",),
    "merge": ((0, 1),),
    "rechunk": "one",
    "gap": 0.0,
    "ttfb": 0.0,
    "speed": 1.0,
    "end": EndKind.RESET,
    "end_at": 0.0,
    "remove_faults": ("all",),
    "add_faults": ("hang",),
}
BODY_FIELDS = {
    "bake", "insert_events", "drop_events", "duplicate_events", "set_event_fields", "truncate",
    "split", "merge", "rechunk", "gap", "ttfb", "speed",
}  # fmt: skip


@pytest.mark.parametrize("name", [f.name for f in fields(Edits) if f.name != "select"])
def test_every_option_is_an_edit(name: str) -> None:
    """Each option alone (even a zero time) makes the edit non-empty; exactly the body and
    timing options touch the body."""
    edits = Edits(**{name: SAMPLE_VALUES[name]})  # type: ignore[arg-type]
    assert not edits.is_empty()
    assert edits.touches_body() is (name in BODY_FIELDS)


def test_no_option_is_no_edit() -> None:
    """An Edits with only a selection is empty and touches nothing."""
    assert Edits(select=(1,)).is_empty() and not Edits(select=(1,)).touches_body()


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("events=3", ("events", 3.0)),
        (" frames = 2 ", ("frames", 2.0)),
        ("bytes=0", ("bytes", 0.0)),
        ("time=1.5", ("time", 1.5)),
    ],
)
def test_parse_position(text: str, position: tuple[str, float]) -> None:
    """KEY=VALUE with spaces around either side, as in fault specs."""
    assert parse_position(text) == position


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("events3", "bad position 'events3': expected events=N, frames=N, bytes=N or time=SECONDS"),
        ("lines=3", "bad position 'lines=3': expected events=N, frames=N, bytes=N or time=SECONDS"),
        ("=3", "bad position '=3': expected events=N, frames=N, bytes=N or time=SECONDS"),
        ("events=x", "bad position 'events=x': not a valid number"),
        ("events=1=2", "bad position 'events=1=2': not a valid number"),
        ("events=-1", "bad position 'events=-1': must be >= 0"),
        ("time=-1", "bad position 'time=-1': must be a number of seconds from 0 to at most 86400"),
    ],
)  # fmt: skip
def test_parse_position_errors(text: str, message: str) -> None:
    """A bad position names itself and what was expected."""
    with pytest.raises(UsageError) as err:
        parse_position(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("edits", "error", "message"),
    [
        (Edits(select=(3,)), UsageError, "no interaction 3 (the cassette has 3, 0-2)"),
        (Edits(select=(-1,)), UsageError, "no interaction -1 (the cassette has 3, 0-2)"),
        (Edits(delete=True, gap=0.0), UsageError,
         "--delete cannot be combined with other edits; run edit twice"),
        (Edits(delete=True, add_faults=("hang",)), UsageError,
         "--delete cannot be combined with other edits; run edit twice"),
        (Edits(rechunk="bytes=0"), UsageError,
         "bad --rechunk 'bytes=0': expected events, one or bytes=N (N > 0)"),
        (Edits(rechunk="frames=2"), UsageError,
         "bad --rechunk 'frames=2': expected events, one or bytes=N (N > 0)"),
        (Edits(rechunk="bytes=\u0663"), UsageError,
         "bad --rechunk 'bytes=\u0663': expected events, one or bytes=N (N > 0)"),
        (Edits(split=("lines=1",)), UsageError,
         "bad position 'lines=1': expected events=N, frames=N, bytes=N or time=SECONDS"),
        (Edits(select=(2,), speed=-1.0), UsageError, "--speed must be >= 0, got -1.0"),
        (Edits(select=(0,), speed=-0.5), UsageError, "--speed must be >= 0, got -0.5"),
        (Edits(select=(0,), drop_events=(4,)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --drop-event 4: no event 4 "
         "(the stream has 4 events)"),
        (Edits(select=(0,), duplicate_events=(-1,)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --duplicate-event -1: no event -1 "
         "(the stream has 4 events)"),
        (Edits(select=(0,), insert_events=((5, b"x"),)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --insert-event 5: no place 5 (0-4 are)"),
        (Edits(select=(0,), insert_events=((-1, b"x"),)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --insert-event -1: no place -1 (0-4 are)"),
        (Edits(select=(0,), merge=((2, 4),)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --merge 2-4: has 4 frames"),
        (Edits(select=(0,), merge=((2, 1),)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --merge 2-1: has 4 frames"),
        (Edits(select=(0,), merge=((-1, 1),)), FaultSpecError,
         "interaction 0 (POST /v1/chat/completions): --merge -1-1: has 4 frames"),
        (Edits(redact_json=("/user", "/nope")), UsageError,
         "--redact-json /nope: no selected request body has that field"),
        (Edits(select=(2,), redact_json=("/user",)), UsageError,
         "--redact-json /user: no selected request body has that field"),
    ],
)  # fmt: skip
def test_bad_edits_give_exact_errors(edits: Edits, error: type[Exception], message: str) -> None:
    """Each bad edit is one exact line naming the interaction, the option and the problem."""
    with pytest.raises(error) as err:
        apply(sample_cassette(), edits)
    assert str(err.value) == message


def test_merge_of_the_last_frames_and_of_one_frame() -> None:
    """--merge 2-3 joins the last two frames at the last one's time; --merge 1-1 is no change."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(merge=((2, 3),))).interactions
    assert y.frames == (x.frames[0], x.frames[1], Frame(x.frames[3].offset_ns, E2 + E3))
    (z,) = apply(Cassette((x,)), Edits(merge=((1, 1),))).interactions
    assert z == x


def test_merge_ranges_apply_from_the_last() -> None:
    """Two ranges given in any order refer to the frames before the edit."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(merge=((0, 1), (2, 3)))).interactions
    assert y.frames == (Frame(90 * MS, E0 + E1), Frame(130 * MS, E2 + E3))


def test_rechunk_bytes_one_and_more_than_the_body() -> None:
    """bytes=1 gives a frame per byte, each at the time its byte was recorded; a size past the
    body keeps one frame at the last time."""
    x = sse_interaction([b"ab", b"c"])
    (y,) = apply(Cassette((x,)), Edits(rechunk="bytes=1")).interactions
    assert y.frames == (Frame(70 * MS, b"a"), Frame(70 * MS, b"b"), Frame(90 * MS, b"c"))
    (z,) = apply(Cassette((x,)), Edits(rechunk="bytes=99")).interactions
    assert z.frames == (Frame(90 * MS, b"abc"),)


def test_rechunk_after_an_empty_frame_keeps_the_byte_times() -> None:
    """An empty frame holds no byte: a byte's time is that of the frame that carried it."""
    x = sse_interaction([b"ab", b"", b"cd"])
    (y,) = apply(Cassette((x,)), Edits(rechunk="bytes=2")).interactions
    assert y.frames == (Frame(70 * MS, b"ab"), Frame(110 * MS, b"cd"))
    (z,) = apply(Cassette((x,)), Edits(rechunk="bytes=3")).interactions
    assert z.frames == (Frame(110 * MS, b"abc"), Frame(110 * MS, b"d"))


def test_insert_event_at_the_end_and_in_an_empty_stream() -> None:
    """Place N (the number of events) appends after the last event; an empty event stream
    takes an inserted event at byte 0."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(insert_events=((4, b"data: 4\n\n"),))).interactions
    assert y.response is not None and y.response.body == b"".join(SSE_EVENTS) + b"data: 4\n\n"
    empty = sse_interaction([])
    (z,) = apply(Cassette((empty,)), Edits(insert_events=((0, b"data: 0\n\n"),))).interactions
    assert z.response is not None and z.response.body == b"data: 0\n\n"


def test_edits_on_the_same_event_apply_insert_then_drop_then_duplicate() -> None:
    """At one event number: the inserted event goes before it, and the event itself is dropped
    or duplicated, whatever the order given."""
    x = sse_interaction()
    edits = Edits(insert_events=((1, b"data: new\n\n"),), duplicate_events=(1,))
    (y,) = apply(Cassette((x,)), edits).interactions
    assert y.response is not None
    assert y.response.body == E0 + b"data: new\n\n" + E1 + E1 + E2 + E3
    edits = Edits(insert_events=((1, b"data: new\n\n"),), drop_events=(1,))
    (z,) = apply(Cassette((x,)), edits).interactions
    assert z.response is not None and z.response.body == E0 + b"data: new\n\n" + E2 + E3


def _refused() -> Cassette:
    x = Interaction(Request("GET", "/"), None, Ending(EndKind.NO_RESPONSE, 4 * MS, "refused"))
    return Cassette((x,))


@pytest.mark.parametrize(
    ("edits", "end_ns"),
    [(Edits(speed=2.0), 2 * MS), (Edits(speed=0.0), 0), (Edits(gap=1.0), 4 * MS)],
)
def test_timing_without_a_response_moves_only_the_end(edits: Edits, end_ns: int) -> None:
    """No head, no frames: only --speed changes anything (the end's time)."""
    (y,) = apply(_refused(), edits).interactions
    assert y.response is None and y.end == Ending(EndKind.NO_RESPONSE, end_ns, "refused")


def test_gap_without_frames_keeps_the_tail_after_the_head() -> None:
    """A response with no frames: the end keeps its distance from the head."""
    x = sse_interaction([])
    (y,) = apply(Cassette((x,)), Edits(gap=0.5)).interactions
    assert y.frames == () and y.end == x.end


def test_gap_and_ttfb_and_speed_together() -> None:
    """Gap first (frames 5 ms apart after the head), then the head moved to 100 ms with
    everything after it, then twice as fast."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(gap=0.005, ttfb=0.1, speed=2.0)).interactions
    assert y.response is not None and y.response.head_offset_ns == 50 * MS
    assert [f.offset_ns for f in y.frames] == [52_500_000, 55 * MS, 57_500_000, 60 * MS]
    assert y.end.offset_ns == 60_500_000


@pytest.mark.parametrize(
    ("edits", "end", "has_response"),
    [
        (Edits(end=EndKind.COMPLETE), Ending(EndKind.COMPLETE, 131 * MS), True),
        (Edits(end=EndKind.RESET), Ending(EndKind.RESET, 131 * MS), True),
        (Edits(end_at=0.2), Ending(EndKind.COMPLETE, 200 * MS), True),
        (Edits(end_at=0.0000000015), Ending(EndKind.COMPLETE, 2), True),
        (Edits(end=EndKind.NO_RESPONSE), Ending(EndKind.NO_RESPONSE, 131 * MS), False),
    ],
)
def test_ending_edits(edits: Edits, end: Ending, has_response: bool) -> None:
    """The kind and/or time; a new kind drops the old message; no_response drops the response."""
    x = sse_interaction()
    x = replace(x, end=replace(x.end, message="was"))
    (y,) = apply(Cassette((x,)), edits).interactions
    expected = end if end.kind is not EndKind.COMPLETE else replace(end, message="was")
    assert y.end == expected
    assert (y.response is not None) is has_response


def test_fault_list_edits() -> None:
    """Removal matches the spec text ignoring surrounding spaces, then additions are appended
    stripped; "all" removes every stored fault."""
    x = replace(sse_interaction(), faults=("hang", " truncate:events=1 ", "hang"))
    (y,) = apply(Cassette((x,)), Edits(remove_faults=(" truncate:events=1",))).interactions
    assert y.faults == ("hang", "hang")
    edits = Edits(remove_faults=("hang",), add_faults=(" reset:bytes=3 ",))
    (z,) = apply(Cassette((x,)), edits).interactions
    assert z.faults == (" truncate:events=1 ", "reset:bytes=3")
    (w,) = apply(Cassette((x,)), Edits(remove_faults=("all",), add_faults=("hang",))).interactions
    assert w.faults == ("hang",)


def _json(body: bytes, *headers: tuple[bytes, bytes]) -> Cassette:
    x = Interaction(
        Request("POST", "/v1", headers=headers, body=body), None, Ending(EndKind.NO_RESPONSE, 0)
    )
    return Cassette((x,))


@pytest.mark.parametrize(
    ("body", "field", "redacted"),
    [
        (b'{"a":{"b":1,"c":2}}', "/a/b", b'{"a":{"b":"<redacted>","c":2}}'),
        (b'{"a": {"b": 1}}', "/a/b", b'{"a": {"b": "<redacted>"}}'),
        (b'{"a": 1, "b": [2, 3]}', "/a", b'{"a": "<redacted>", "b": [2, 3]}'),
        (b'{"a":{"b":1,"c":2}}', "/a/*", b'{"a":{"b":"<redacted>","c":"<redacted>"}}'),
        (b'{"m":[{"k":1},{"k":2}]}', "/m/*/k", b'{"m":[{"k":"<redacted>"},{"k":"<redacted>"}]}'),
        (b'{"m":[{"k":1},{"k":2}]}', "/m/1/k", b'{"m":[{"k":1},{"k":"<redacted>"}]}'),
        (b'{"m":[1,2]}', "/m/0", b'{"m":["<redacted>",2]}'),
        (b'{"u":"\xc3\xa9","k":1}', "/k", b'{"u":"\xc3\xa9","k":"<redacted>"}'),
        (b'{"u":"\\u00e9","k":1}', "/k", b'{"u":"\\u00e9","k":"<redacted>"}'),
        (b'{"a.b":1,"a":{"b":2}}', "/a.b", b'{"a.b":"<redacted>","a":{"b":2}}'),
        (b'{"a/b":1,"~":2}', "/a~1b", b'{"a/b":"<redacted>","~":2}'),
        (b'{"a/b":1,"~":2}', "/~0", b'{"a/b":1,"~":"<redacted>"}'),
    ],
)
def test_redact_json_paths(body: bytes, field: str, redacted: bytes) -> None:
    """JSON pointers with * and list indices; compact or spaced and non-ASCII kept as written;
    content-length follows, other headers stay."""
    headers = ((b"Content-Length", b"%d" % len(body)), (b"x", b"1"))
    (y,) = apply(_json(body, *headers), Edits(redact_json=(field,))).interactions
    assert y.request.body == redacted
    assert y.request.headers == ((b"Content-Length", b"%d" % len(redacted)), (b"x", b"1"))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"m":[1,2]}', "/m/2"),
        (b'{"m":[1,2]}', "/m/-1"),
        (b'{"m":[1,2]}', "/m/\u0661"),
        (b'{"m":[1,2]}', "/m/x"),
        (b'{"m":1}', "/m/x"),
        (b'{"m":{}}', "/m/*"),
        (b'"m"', "/m"),
        (b"not json", "/m"),
        (b"\xff", "/m"),
    ],
)
def test_redact_json_paths_that_name_nothing(body: bytes, field: str) -> None:
    """A path that names no value in the body is an error, and the body stays as it was."""
    with pytest.raises(UsageError, match=f"^--redact-json {re.escape(field)}: no selected"):
        apply(_json(body), Edits(redact_json=(field,)))


@pytest.mark.parametrize("field", ["user", "a.b", "/a~2"])
def test_redact_json_takes_only_pointers_in_the_core(field: str) -> None:
    """The core takes JSON pointers only (the CLI turns a dotted path into one): anything else
    is one line naming the option, the field and an example pointer."""
    with pytest.raises(
        UsageError,
        match=f"^--redact-json {re.escape(field)}: JSON pointer .* \\(e.g. /messages/0/content\\)$",
    ):
        apply(_json(b'{"user":1}'), Edits(redact_json=(field,)))


def test_redact_json_counts_a_field_found_in_any_selected_body() -> None:
    """Each field must be found in at least one selected body, not in every one."""
    a = _json(b'{"a":1}').interactions[0]
    b = _json(b'{"b":1}').interactions[0]
    c = apply(Cassette((a, b)), Edits(redact_json=("/a", "/b")))
    assert [x.request.body for x in c.interactions] == [
        b'{"a":"<redacted>"}',
        b'{"b":"<redacted>"}',
    ]


def test_redact_json_with_no_field_found_leaves_the_body() -> None:
    """A body where none of the fields is found is not re-serialized."""
    a = _json(b'{"a": 1,  "z":2}').interactions[0]
    b = _json(b'{"b":1}').interactions[0]
    c = apply(Cassette((a, b)), Edits(redact_json=("/b",)))
    assert c.interactions[0] == a


def test_unselected_interactions_and_the_rest_are_kept() -> None:
    """Only the selected interactions change, in place; delete keeps the others in order."""
    c = sample_cassette()
    after = apply(c, Edits(select=(0, 2), add_faults=("hang",)))
    assert [x.faults for x in after.interactions] == [("hang",), (), ("hang",)]
    assert after.interactions[1] == c.interactions[1]
    assert apply(c, Edits(select=(0, 2), delete=True)).interactions == (c.interactions[1],)
    assert apply(c, Edits(delete=True)).interactions == ()


def test_redact_headers_in_the_response_too() -> None:
    """--redact-header names any case and redacts request and response headers alike."""
    c = apply(sample_cassette(), Edits(select=(0,), redact_headers=("X-Request-ID", "HOST")))
    y = c.interactions[0]
    assert y.response is not None
    assert y.response.headers == (
        (b"content-type", b"text/event-stream"),
        (b"x-request-id", b"<redacted>"),
    )
    assert y.request == sample_cassette().interactions[0].request


@pytest.mark.parametrize(
    ("edits", "error", "message"),
    [
        (Edits(bake=("explode",)), FaultSpecError, "unknown fault 'explode'"),
        (Edits(add_faults=("explode",)), FaultSpecError, "unknown fault 'explode'"),
        (Edits(truncate="lines=1"), UsageError, "bad position 'lines=1'"),
        (Edits(split=("bytes=x",)), UsageError, "bad position 'bytes=x'"),
        (Edits(rechunk="bytes=0"), UsageError, "bad --rechunk 'bytes=0'"),
        (Edits(delete=True, speed=1.0), UsageError, "--delete cannot be combined"),
    ],
)
def test_options_are_checked_before_any_interaction(
    edits: Edits, error: type[Exception], message: str
) -> None:
    """A bad option is refused even when no interaction would use it."""
    with pytest.raises(error, match=message):
        apply(Cassette(()), edits)


def _json_response() -> Cassette:
    x = sse_interaction()
    assert x.response is not None
    json_type = ((b"content-type", b"application/json"),)
    return Cassette((replace(x, response=replace(x.response, headers=json_type)),))


NOT_A_STREAM = (
    "needs an event stream, but the body is application/json, not an event stream "
    "(text/event-stream or application/vnd.amazon.eventstream): it has no events"
)
CHAT = "interaction 0 (POST /v1/chat/completions)"
MODELS = "interaction 2 (GET /v1/models)"


@pytest.mark.parametrize(
    ("cassette", "edits", "message"),
    [
        (sample_cassette(), Edits(select=(2,), drop_events=(0,)),
         f"{MODELS}: event edit: the interaction has no response, so no events"),
        (_json_response(), Edits(drop_events=(0,)), f"{CHAT}: event edit: {NOT_A_STREAM}"),
        (_json_response(), Edits(rechunk="events"), f"{CHAT}: --rechunk events: {NOT_A_STREAM}"),
        (sample_cassette(), Edits(select=(2,), rechunk="events"),
         f"{MODELS}: --rechunk events: the interaction has no response, so no events"),
        (sample_cassette(), Edits(select=(0,), split=("bytes=999",)),
         f"{CHAT}: --split bytes=999: bytes=999 is past the end of the body (101 bytes)"),
        (sample_cassette(), Edits(select=(2,), split=("bytes=1",)),
         f"{MODELS}: --split bytes=1: the interaction has no response to cut"),
        (sample_cassette(), Edits(select=(0,), split=("events=9",)),
         f"{CHAT}: --split events=9: events=9 is past the last event (4 events)"),
        (sample_cassette(), Edits(select=(0,), truncate="events=9"),
         f"{CHAT}: --truncate events=9: events=9 is past the last event (4 events)"),
    ],
)  # fmt: skip
def test_edits_that_need_a_stream_or_a_position_name_the_option(
    cassette: Cassette, edits: Edits, message: str
) -> None:
    """An event or position edit that cannot apply names the interaction, the option and why."""
    with pytest.raises(FaultSpecError) as err:
        apply(cassette, edits)
    assert str(err.value) == message


def test_drop_and_duplicate_of_one_event_cancel_out() -> None:
    """Both on one event: it is duplicated, then one copy dropped (the stream is unchanged)."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(drop_events=(1,), duplicate_events=(1,))).interactions
    assert y.response is not None and y.response.body == E0 + E1 + E2 + E3


def test_retiming_keeps_every_frames_bytes() -> None:
    """Gap and time-to-first-byte edits move frames in time and keep their bytes."""
    x = sse_interaction()
    for edits in (Edits(gap=0.001), Edits(ttfb=0.3)):
        (y,) = apply(Cassette((x,)), edits).interactions
        assert [f.data for f in y.frames] == [f.data for f in x.frames]


def test_an_event_duplicated_twice_is_sent_three_times() -> None:
    """The same event number given twice: both edits apply."""
    x = sse_interaction()
    (y,) = apply(Cassette((x,)), Edits(duplicate_events=(1, 1))).interactions
    assert y.response is not None and y.response.body == E0 + E1 + E1 + E1 + E2 + E3


def test_insert_into_a_stream_without_events_goes_first() -> None:
    """A stream of only comments has no events: an inserted event goes before its bytes."""
    x = sse_interaction([b": ping\n\n"])
    (y,) = apply(Cassette((x,)), Edits(insert_events=((0, b"data: 0\n\n"),))).interactions
    assert y.response is not None and y.response.body == b"data: 0\n\n: ping\n\n"
