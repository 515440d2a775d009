"""Schedules built from recorded interactions: absolute offsets, endings and speed scaling."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.schedule.model import (
    Finish,
    FinishKind,
    Head,
    Schedule,
    Write,
    from_interaction,
    instant_body,
    scale,
    to_interaction,
)
from replayproxy.testing import MS
from replayproxy.testing import _builders as builders

REQ = Request("POST", "https://api.openai.com/v1/chat/completions")


def interaction(frames: list[tuple[int, bytes]], end: EndKind, end_ms: int, head_ms: int = 300):
    """An SSE response whose frames are the (ms, bytes) pairs given, ending at ``end_ms``."""
    return builders.interaction(
        [d for _, d in frames],
        at_ms=[t for t, _ in frames],
        request=REQ,
        reason="OK",
        head_ms=head_ms,
        end=Ending(end, end_ms * MS),
    )


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


def test_written_back_ending_follows_the_finish() -> None:
    """to_interaction: an unchanged finish keeps the recorded ending exactly; a moved finish
    of the same kind keeps kind and message at the new time; another kind becomes the ending
    it stands for, without the old message."""
    resp = Response(200, "OK", "HTTP/2.0", (), 5 * MS, (Frame(6 * MS, b"a"),))
    x = Interaction(REQ, resp, Ending(EndKind.INCOMPLETE, 9 * MS, "peer closed"))
    s = from_interaction(x)
    assert to_interaction(s, x).end == x.end
    moved = Schedule(s.head, s.writes, Finish(12 * MS, FinishKind.CLOSE))
    assert to_interaction(moved, x).end == Ending(EndKind.INCOMPLETE, 12 * MS, "peer closed")
    expected = {
        FinishKind.COMPLETE: EndKind.COMPLETE,
        FinishKind.RESET: EndKind.RESET,
        FinishKind.HANG: EndKind.HANG,
    }
    for kind, end in expected.items():
        other = Schedule(s.head, s.writes, Finish(9 * MS, kind))
        assert to_interaction(other, x).end == Ending(end, 9 * MS, "")
    gone = Interaction(REQ, resp, Ending(EndKind.CLIENT_GONE, 9 * MS, "client left"))
    moved = Schedule(s.head, s.writes, Finish(10 * MS, FinishKind.CLOSE))
    assert to_interaction(moved, gone).end == Ending(EndKind.CLIENT_GONE, 10 * MS, "client left")


def test_written_back_response_takes_head_writes_and_version() -> None:
    """The head and writes become the response (HTTP version from the original, HTTP/1.1 when
    it had none); no head means no response."""
    x = Interaction(REQ, None, Ending(EndKind.NO_RESPONSE, 3 * MS, "refused"))
    head = Head(2 * MS, 201, "Created", ((b"a", b"b"),))
    s = Schedule(
        head, (Write(4 * MS, b"x"), Write(4 * MS, b"y")), Finish(5 * MS, FinishKind.COMPLETE)
    )
    y = to_interaction(s, x)
    assert y.response == Response(
        201,
        "Created",
        "HTTP/1.1",
        ((b"a", b"b"),),
        2 * MS,
        (Frame(4 * MS, b"x"), Frame(4 * MS, b"y")),
    )
    assert y.request == x.request and y.end == Ending(EndKind.COMPLETE, 5 * MS, "")
    h2 = Interaction(REQ, Response(200, "OK", "HTTP/2.0"), Ending(EndKind.COMPLETE, 0))
    assert to_interaction(s, h2).response.http_version == "HTTP/2.0"  # type: ignore[union-attr]
    none = Schedule(None, (), Finish(7 * MS, FinishKind.CLOSE))
    gone = to_interaction(none, h2)
    assert gone.response is None and gone.end == Ending(EndKind.INCOMPLETE, 7 * MS, "")


@pytest.mark.parametrize(
    ("head_at", "writes", "finish"),
    [
        (1, (), Finish(0, FinishKind.COMPLETE)),
        (0, (Write(1, b"a"),), Finish(1, FinishKind.COMPLETE)),
        (0, (), Finish(1, FinishKind.COMPLETE)),
        (0, (), Finish(0, FinishKind.CLOSE)),
        (0, (Write(0, b"a"),), Finish(0, FinishKind.RESET)),
    ],
)
def test_instant_body_refuses_anything_timed_or_unclean(
    head_at: int, writes: tuple[Write, ...], finish: Finish
) -> None:
    """A head, write or finish not at 0, or a finish other than a clean end: no instant body."""
    s = Schedule(Head(head_at, 200, "OK", ()), writes, finish)
    assert instant_body(s) is None
    assert instant_body(Schedule(None, (), Finish(0, FinishKind.COMPLETE))) is None


def test_scale_rounds_to_whole_nanoseconds_and_refuses_negative_speed() -> None:
    """Offsets divided by the speed are rounded to the nearest nanosecond; speed < 0 is an
    error; speed 1 changes nothing."""
    s = Schedule(Head(3, 200, "OK", ()), (Write(10, b"a"),), Finish(11, FinishKind.COMPLETE))
    assert scale(s, 1) == s
    t = scale(s, 3)
    assert (t.head.at_ns, t.writes[0].at_ns, t.finish.at_ns) == (1, 3, 4)  # type: ignore[union-attr]
    with pytest.raises(ValueError) as info:
        scale(s, -0.5)
    assert str(info.value) == "speed must be >= 0"
    bare = Schedule(None, (), Finish(9, FinishKind.CLOSE))
    assert scale(bare, 3) == Schedule(None, (), Finish(3, FinishKind.CLOSE))


def test_the_head_keeps_status_reason_and_headers_and_zero_stays_zero() -> None:
    """from_interaction copies the head's status, reason and headers; offsets of 0 stay 0."""
    resp = Response(429, "Too Many", headers=((b"retry-after", b"1"),), head_offset_ns=0)
    s = from_interaction(Interaction(REQ, resp, Ending(EndKind.COMPLETE, 0)))
    assert s.head == Head(0, 429, "Too Many", ((b"retry-after", b"1"),))
    assert s.finish == Finish(0, FinishKind.COMPLETE)
    refused = from_interaction(Interaction(REQ, None, Ending(EndKind.NO_RESPONSE, 0)))
    assert refused == Schedule(None, (), Finish(0, FinishKind.CLOSE))
