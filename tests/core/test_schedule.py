"""Schedules built from recorded interactions: absolute offsets, endings and speed scaling."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy.core.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy.core.schedule import (
    Finish,
    FinishKind,
    Head,
    Schedule,
    Write,
    from_interaction,
    instant_body,
    scale,
)

MS = 1_000_000
REQ = Request("POST", "https://api.openai.com/v1/chat/completions")


def interaction(frames: list[tuple[int, bytes]], end: EndKind, end_ms: int, head_ms: int = 300):
    resp = Response(
        200,
        "OK",
        headers=((b"content-type", b"text/event-stream"),),
        head_offset_ns=head_ms * MS,
        frames=tuple(Frame(t * MS, d) for t, d in frames),
    )
    return Interaction(REQ, resp, Ending(end, end_ms * MS))


def test_offsets_are_absolute_and_frames_kept_as_recorded() -> None:
    """Each write keeps its frame's bytes and absolute offset; the head keeps its TTFB."""
    s = from_interaction(
        interaction([(310, b"a"), (350, b"bc"), (400, b"d")], EndKind.COMPLETE, 401)
    )
    assert s.head is not None and s.head.at_ns == 300 * MS and s.head.status == 200
    assert [(w.at_ns, w.data) for w in s.writes] == [
        (310 * MS, b"a"),
        (350 * MS, b"bc"),
        (400 * MS, b"d"),
    ]
    assert s.finish.at_ns == 401 * MS and s.finish.kind is FinishKind.COMPLETE
    assert s.body == b"abcd"


@pytest.mark.parametrize(
    ("end", "kind"),
    [
        (EndKind.COMPLETE, FinishKind.COMPLETE),
        (EndKind.RESET, FinishKind.RESET),
        (EndKind.INCOMPLETE, FinishKind.CLOSE),
        (EndKind.HANG, FinishKind.HANG),
        (EndKind.CLIENT_GONE, FinishKind.CLOSE),
        (EndKind.ERROR, FinishKind.CLOSE),
    ],
)
def test_each_recorded_ending_has_a_finish(end: EndKind, kind: FinishKind) -> None:
    """A reset stays a reset, a truncation a close without terminator, a hang a hang."""
    assert from_interaction(interaction([(310, b"a")], end, 320)).finish.kind is kind


def test_no_response_means_no_head() -> None:
    """An interaction without a response head gives a schedule that only closes."""
    s = from_interaction(Interaction(REQ, None, Ending(EndKind.NO_RESPONSE, 50 * MS)))
    assert s.head is None and s.writes == () and s.finish.kind is FinishKind.CLOSE
    assert s.finish.at_ns == 50 * MS


def test_nothing_is_scheduled_before_the_head_or_after_the_finish() -> None:
    """Writes never precede the head, and the finish never precedes the last write."""
    s = from_interaction(interaction([(100, b"a"), (400, b"b")], EndKind.COMPLETE, 200))
    assert s.writes[0].at_ns == 300 * MS
    assert s.finish.at_ns == 400 * MS


def test_speed_two_halves_and_zero_removes_every_wait() -> None:
    """scale(2) halves every offset; scale(0) puts everything at 0; negative is refused."""
    s = from_interaction(interaction([(310, b"a"), (350, b"b")], EndKind.COMPLETE, 360))
    half = scale(s, 2)
    assert half.head is not None and half.head.at_ns == 150 * MS
    assert [w.at_ns for w in half.writes] == [155 * MS, 175 * MS] and half.finish.at_ns == 180 * MS
    zero = scale(s, 0)
    assert zero.head is not None and zero.head.at_ns == 0
    assert {w.at_ns for w in zero.writes} == {0} and zero.finish.at_ns == 0
    with pytest.raises(ValueError):
        scale(s, -1)


frames_strategy = st.lists(
    st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=8)), max_size=20
).map(lambda fs: sorted(fs, key=lambda f: f[0]))


@given(frames_strategy, st.floats(min_value=0.01, max_value=100), st.sampled_from(list(EndKind)))
def test_scaling_keeps_bytes_and_order(
    frames: list[tuple[int, bytes]], speed: float, end: EndKind
) -> None:
    """Scaling never changes the bytes, their split, or the order of offsets."""
    if end is EndKind.NO_RESPONSE:
        return
    s = from_interaction(interaction(frames, end, 5_000, head_ms=0))
    scaled = scale(s, speed)
    assert [w.data for w in scaled.writes] == [d for _, d in frames]
    ats = [w.at_ns for w in scaled.writes]
    assert ats == sorted(ats)
    assert all(a <= scaled.finish.at_ns for a in ats)


def _instant(writes: tuple[Write, ...], finish: Finish, head_at: int = 0) -> Schedule:
    return Schedule(Head(head_at, 200, "OK", ()), writes, finish)


def test_instant_body_only_when_nothing_is_timed_or_split() -> None:
    """instant_body gives the body only for one write and a clean end, all at t=0."""
    done = Finish(0, FinishKind.COMPLETE)
    assert instant_body(_instant((Write(0, b"abc"),), done)) == b"abc"
    assert instant_body(_instant((), done)) == b""
    assert instant_body(_instant((Write(0, b"a"), Write(0, b"b")), done)) is None  # a split
    assert instant_body(_instant((Write(5, b"a"),), done)) is None  # a gap
    assert instant_body(_instant((Write(0, b"a"),), done, head_at=5)) is None  # a TTFB
    assert instant_body(_instant((Write(0, b"a"),), Finish(0, FinishKind.RESET))) is None
    assert instant_body(_instant((Write(0, b"a"),), Finish(0, FinishKind.HANG))) is None
    assert instant_body(Schedule(None, (), Finish(0, FinishKind.CLOSE))) is None
