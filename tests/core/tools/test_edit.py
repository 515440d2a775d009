"""Cassette edits: each operation's exact effect, and that it leaves everything else untouched."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Cassette, Ending, EndKind, Frame, Interaction
from replayproxy._core.schedule.model import from_interaction, to_interaction
from replayproxy._core.tools.edit import Edits, apply, parse_position
from replayproxy._errors import FaultSpecError, UsageError
from replayproxy.testing import MS
from replayproxy.testing.strategies import interactions
from tests.cassette.samples import SSE_EVENTS, sample_cassette, sse_interaction

E0, E1, E2, E3 = SSE_EVENTS


def edit_one(edits: Edits, index: int = 0) -> tuple[Interaction, Interaction]:
    """Apply ``edits`` to interaction ``index`` of the sample; check the others are untouched."""
    before = sample_cassette()
    after = apply(before, replace(edits, select=(index,)))
    assert after.meta == before.meta
    assert len(after.interactions) == len(before.interactions)
    for i, (a, b) in enumerate(zip(before.interactions, after.interactions, strict=True)):
        if i != index:
            assert a == b
    x, y = before.interactions[index], after.interactions[index]
    assert y.request == x.request and y.recorded_at == x.recorded_at
    return x, y


def head_untouched(x: Interaction, y: Interaction) -> None:
    assert x.response is not None and y.response is not None
    assert (y.response.status, y.response.reason, y.response.headers) == (
        x.response.status,
        x.response.reason,
        x.response.headers,
    )
    assert y.response.head_offset_ns == x.response.head_offset_ns


def body(x: Interaction) -> bytes:
    assert x.response is not None
    return x.response.body


def test_no_edits_change_nothing() -> None:
    """An empty edit returns an equal cassette."""
    assert apply(sample_cassette(), Edits()) == sample_cassette()


@given(interactions())
def test_schedule_round_trip_keeps_an_interaction(x: Interaction) -> None:
    """from_interaction then to_interaction gives the interaction back (when its times are sane)."""
    if x.response is not None:
        head = max(0, x.response.head_offset_ns)
        frames = tuple(Frame(max(head, f.offset_ns), f.data) for f in x.response.frames)
        frames = tuple(sorted(frames, key=lambda f: f.offset_ns))
        x = replace(x, response=replace(x.response, head_offset_ns=head, frames=frames))
    assert to_interaction(from_interaction(x), x) == x


def test_drop_event_removes_exactly_its_frame() -> None:
    """Dropping event 1 of a one-event-per-frame stream removes that frame and nothing else."""
    x, y = edit_one(Edits(drop_events=(1,)))
    head_untouched(x, y)
    assert y.frames == (x.frames[0], x.frames[2], x.frames[3])
    assert y.end == x.end


def test_drop_event_split_across_frames_keeps_the_other_bytes_and_times() -> None:
    """Dropping an event that straddles frames removes its bytes; the rest keep their times."""
    x, y = edit_one(Edits(drop_events=(1,)), index=1)
    assert body(y) == E0 + E2 + E3
    # the bytes that remain arrive in the frames (and at the times) they arrived in before
    assert [f.offset_ns for f in y.frames] == [f.offset_ns for f in x.frames]
    assert y.frames[0].data == x.frames[0].data[: len(E0)]
    assert y.end == x.end


def test_duplicate_event_sends_it_twice_at_its_time() -> None:
    """Duplicating event 2 repeats its bytes right after it, written when it was."""
    _, y = edit_one(Edits(duplicate_events=(2,)))
    assert body(y) == E0 + E1 + E2 + E2 + E3
    assert [f.offset_ns for f in y.frames] == [70 * MS, 90 * MS, 110 * MS, 110 * MS, 130 * MS]


def test_insert_event_goes_before_the_numbered_event() -> None:
    """An inserted event lands before event N, sent with the byte before it."""
    extra = b'data: {"error":"boom"}\n\n'
    x, y = edit_one(Edits(insert_events=((3, extra),)))
    assert body(y) == E0 + E1 + E2 + extra + E3
    assert Frame(110 * MS, extra) in y.frames
    assert y.frames[-1] == x.frames[-1]


def test_event_numbers_refer_to_the_stream_before_the_edit() -> None:
    """Several event edits in one call all number the events as recorded."""
    _, y = edit_one(Edits(drop_events=(0,), duplicate_events=(2,), insert_events=((1, b"x"),)))
    assert body(y) == b"x" + E1 + E2 + E2 + E3


@pytest.mark.parametrize(
    ("position", "expected", "end_ms"),
    [
        ("events=2", E0 + E1, 90),
        ("frames=3", E0 + E1 + E2, 110),
        ("bytes=10", E0[:10], 70),
        ("time=0.1", E0 + E1, 100),
    ],
)
def test_truncate_cuts_at_the_position(position: str, expected: bytes, end_ms: int) -> None:
    """Truncation keeps the bytes before the position; the end moves there, its kind stays."""
    x, y = edit_one(Edits(truncate=position))
    head_untouched(x, y)
    assert body(y) == expected
    assert all(f in x.frames or f.data == E0[:10] for f in y.frames)
    assert y.end == Ending(EndKind.COMPLETE, end_ms * MS)


def test_truncate_then_reset_ending() -> None:
    """Truncation combined with --end reset gives a stream that resets where it was cut."""
    _, y = edit_one(Edits(truncate="events=1", end=EndKind.RESET))
    assert body(y) == E0
    assert y.end == Ending(EndKind.RESET, 70 * MS)


def test_split_at_positions_keeps_bytes_and_times() -> None:
    """Splitting at bytes=5 and inside event 2 adds frame boundaries, nothing else."""
    x, y = edit_one(Edits(split=("bytes=5", "bytes=" + str(len(E0 + E1) + 3))))
    assert body(y) == body(x)
    assert [f.data for f in y.frames][:2] == [E0[:5], E0[5:]]
    assert len(y.frames) == len(x.frames) + 2
    assert {f.offset_ns for f in y.frames} == {f.offset_ns for f in x.frames}


def test_merge_joins_frames_at_the_last_ones_time() -> None:
    """Merging frames 1-2 makes one frame, sent when frame 2 was."""
    x, y = edit_one(Edits(merge=((1, 2),)))
    assert y.frames == (x.frames[0], Frame(110 * MS, E1 + E2), x.frames[3])


def test_rechunk_events_gives_one_frame_per_event_when_it_completed() -> None:
    """Rechunking a badly split stream by events yields one frame per event, timed by its end."""
    x, y = edit_one(Edits(rechunk="events"), index=1)
    assert [f.data for f in y.frames] == SSE_EVENTS
    assert [f.offset_ns for f in y.frames] == [70 * MS, 90 * MS, 110 * MS, 110 * MS]
    assert y.end == x.end


@pytest.mark.parametrize(("mode", "sizes"), [("one", None), ("bytes=7", 7)])
def test_rechunk_by_size(mode: str, sizes: int | None) -> None:
    """Rechunking into one frame or fixed-size frames keeps the body and the last time."""
    x, y = edit_one(Edits(rechunk=mode))
    assert body(y) == body(x)
    assert y.frames[-1].offset_ns == x.frames[-1].offset_ns
    if sizes is None:
        assert len(y.frames) == 1
    else:
        assert all(len(f.data) == 7 for f in y.frames[:-1])


def test_gap_spaces_frames_evenly_and_keeps_the_tail() -> None:
    """--gap 0.005 puts frame i at head + 5 ms * (i + 1); the end keeps its distance."""
    _, y = edit_one(Edits(gap=0.005))
    assert [f.offset_ns for f in y.frames] == [55 * MS, 60 * MS, 65 * MS, 70 * MS]
    assert y.end == Ending(EndKind.COMPLETE, 71 * MS)


def test_ttfb_moves_the_head_and_everything_after_it() -> None:
    """--ttfb 0.2 sets the head at 200 ms and shifts frames and end by the same amount."""
    x, y = edit_one(Edits(ttfb=0.2))
    assert y.response is not None and y.response.head_offset_ns == 200 * MS
    assert [f.offset_ns - 150 * MS for f in y.frames] == [f.offset_ns for f in x.frames]
    assert y.end.offset_ns == x.end.offset_ns + 150 * MS


def test_speed_divides_every_time() -> None:
    """--speed 2 halves every offset; the bytes stay."""
    x, y = edit_one(Edits(speed=2))
    assert y.frames == tuple(Frame(f.offset_ns // 2, f.data) for f in x.frames)
    assert y.response is not None and y.response.head_offset_ns == 25 * MS
    _, refused = edit_one(Edits(speed=2), index=2)
    assert refused.response is None
    assert refused.end == Ending(EndKind.NO_RESPONSE, 1500_000, "connection refused")


@pytest.mark.parametrize(
    ("kind", "at", "expected"),
    [
        (EndKind.RESET, None, Ending(EndKind.RESET, 131 * MS)),
        (EndKind.HANG, 1.5, Ending(EndKind.HANG, 1500 * MS)),
        (None, 0.2, Ending(EndKind.COMPLETE, 200 * MS)),
    ],
)
def test_end_sets_the_ending(kind: EndKind | None, at: float | None, expected: Ending) -> None:
    """--end sets how (and optionally when) the response ends; frames are untouched."""
    x, y = edit_one(Edits(end=kind, end_at=at))
    assert y.frames == x.frames
    assert y.end == expected


def test_faults_attach_validated_and_remove() -> None:
    """Attached faults are validated and stored; --remove-fault drops exact matches or all."""
    _, y = edit_one(Edits(add_faults=("truncate:events=2", "reset:bytes=3")))
    assert y.faults == ("truncate:events=2", "reset:bytes=3")
    c = apply(sample_cassette(), Edits(select=(0,), add_faults=("truncate:events=2", "hang")))
    c = apply(c, Edits(select=(0,), remove_faults=("hang",)))
    assert c.interactions[0].faults == ("truncate:events=2",)
    c = apply(c, Edits(remove_faults=("all",)))
    assert c.interactions[0].faults == ()
    with pytest.raises(FaultSpecError, match="unknown fault 'explode'"):
        apply(sample_cassette(), Edits(add_faults=("explode",)))


def test_bake_applies_a_fault_for_good() -> None:
    """Baking reset:events=2 cuts the recording there and makes it end with a reset."""
    _, y = edit_one(Edits(bake=("reset:events=2",)))
    assert body(y) == E0 + E1
    assert y.end.kind == EndKind.RESET


def test_delete_removes_the_selected_interactions() -> None:
    """--delete -i 1 leaves interactions 0 and 2, unchanged."""
    before = sample_cassette()
    after = apply(before, Edits(select=(1,), delete=True))
    assert after.interactions == (before.interactions[0], before.interactions[2])
    with pytest.raises(UsageError, match="cannot be combined"):
        apply(before, Edits(select=(1,), delete=True, speed=2))


def test_redact_header_after_the_fact() -> None:
    """--redact-header replaces the value (request and response), keeping name and order."""
    x, _ = edit_one(Edits())
    after = apply(sample_cassette(), Edits(select=(0,), redact_headers=("Authorization",)))
    y = after.interactions[0]
    assert y.request.headers == (
        (b"content-type", b"application/json"),
        (b"authorization", b"<redacted>"),
    )
    assert replace(y, request=x.request) == x


def test_redact_json_field_rewrites_the_request_body() -> None:
    """--redact-json user replaces that field's value; other fields and the layout stay."""
    after = apply(sample_cassette(), Edits(redact_json=("/user",)))
    y = after.interactions[0]
    assert y.request.body == b'{"model":"m","stream":true,"user":"<redacted>","messages":[]}'
    assert after.interactions[2] == sample_cassette().interactions[2]  # no JSON body: untouched
    with pytest.raises(UsageError, match="no selected request body has that field"):
        apply(sample_cassette(), Edits(redact_json=("/nope/deeper",)))


@pytest.mark.parametrize(
    ("edits", "error", "message"),
    [
        (Edits(truncate="events=x"), UsageError, "bad position 'events=x'"),
        (Edits(truncate="lines=3"), UsageError, "expected events=N, frames=N, bytes=N or time"),
        (Edits(select=(0,), drop_events=(9,)), FaultSpecError, r"interaction 0 \(POST /v1/chat"),
        (Edits(select=(2,), drop_events=(0,)), FaultSpecError, "no response"),
        (Edits(select=(7,), speed=2), UsageError, "no interaction 7"),
        (Edits(rechunk="lines"), UsageError, "bad --rechunk"),
        (Edits(select=(0,), merge=((2, 9),)), FaultSpecError, "has 4 frames"),
    ],
)
def test_bad_edits_are_one_line_errors(edits: Edits, error: type[Exception], message: str) -> None:
    """A bad position, event number, interaction or mode is a one-line error."""
    with pytest.raises(error, match=message) as e:
        apply(sample_cassette(), edits)
    assert "\n" not in str(e.value)


def test_parse_position_shares_the_fault_syntax() -> None:
    """Positions are parsed like fault spec positions."""
    assert parse_position("events=3") == ("events", 3.0)
    assert parse_position("time=1.5") == ("time", 1.5)


@given(st.lists(st.integers(0, len(b"".join(SSE_EVENTS))), max_size=6))
def test_any_split_keeps_the_body_and_the_timeline(points: list[int]) -> None:
    """Splitting anywhere never changes the bytes, their order, or the set of frame times."""
    x = sse_interaction()
    c = apply(Cassette((x,)), Edits(split=tuple(f"bytes={p}" for p in points)))
    (y,) = c.interactions
    assert body(y) == body(x)
    assert {f.offset_ns for f in y.frames} == {f.offset_ns for f in x.frames}
    assert y.end == x.end
