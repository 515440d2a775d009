"""Cassette diffs: interaction, frame and event differences, aligned across inserts/removals."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given

from replayproxy.core.diff import diff
from replayproxy.core.edit import Edits, apply
from replayproxy.core.model import Cassette, EndKind
from tests.cassette.builders import cassettes, sample_cassette


@given(cassettes)
def test_a_cassette_has_no_difference_with_itself(c: Cassette) -> None:
    """diff(c, c) is empty for any cassette."""
    assert diff(c, c) == []


def test_dropped_event_shows_at_event_and_frame_level() -> None:
    """Dropping event 1 shows as a removed event and a removed frame, nothing else."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), drop_events=(1,)))
    found = {(d.level, d.what, d.a_index) for d in diff(a, b)}
    assert found == {
        ("frame", "frame count", 0),
        ("frame", "frame 1", 0),
        ("event", "event count", 0),
        ("event", "event 1", 0),
    }
    ev = next(d for d in diff(a, b) if d.what == "event 1")
    assert ev.a.startswith('\'data: {"n":1') and ev.b == ""


def test_resplit_shows_only_frames() -> None:
    """A re-split stream has the same events: only frame differences are reported."""
    a = sample_cassette()
    b = apply(a, Edits(select=(1,), rechunk="events"))
    levels = {d.level for d in diff(a, b)}
    assert levels == {"frame"}


def test_head_end_and_faults_differences() -> None:
    """Status, end kind/time and faults each give one interaction-level difference."""
    a = sample_cassette()
    x = a.interactions[0]
    assert x.response is not None
    y = replace(x, response=replace(x.response, status=500), faults=("hang",))
    b = apply(a.with_interactions((y, *a.interactions[1:])), Edits(select=(0,), end=EndKind.RESET))
    got = {d.what: (d.a, d.b) for d in diff(a, b)}
    assert got == {"status": ("200", "500"), "end": ("complete", "reset"),
                   "faults": ("(none)", "hang")}  # fmt: skip


def test_removed_interaction_does_not_shift_the_rest() -> None:
    """Deleting interaction 0 is reported once, as only in A; the others still pair up."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), delete=True))
    (d,) = diff(a, b)
    assert (d.what, d.a_index, d.b_index) == ("only in A", 0, None)


def test_timing_changes_show_per_frame() -> None:
    """A slower stream reports each frame's old and new time."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), speed=0.5))
    times = [(d.what, d.a, d.b) for d in diff(a, b) if d.level == "frame"]
    assert times[0] == ("frame 0 time", "+70ms", "+140ms")
    assert len(times) == 4
