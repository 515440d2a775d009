"""The simulator's timing model and fault knobs (pure): plan() and from_knobs()."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._errors import UsageError
from replayproxy.testing import Behavior, from_knobs, plan

events_st = st.lists(st.binary(min_size=1, max_size=30), min_size=1, max_size=40).map(tuple)
gaps_st = st.one_of(
    st.floats(0, 0.5),
    st.lists(st.floats(0, 0.5), min_size=1, max_size=5).map(tuple),
)


@given(events_st, st.floats(0, 1), gaps_st, st.frozensets(st.integers(0, 45)))
def test_plan_keeps_bytes_and_order(
    events: tuple[bytes, ...], ttfb: float, gaps: float | tuple[float, ...], merge: frozenset[int]
) -> None:
    """Without a fault, the writes carry every event byte in order; times never go backwards."""
    p = plan(events, Behavior(ttfb_s=ttfb, gap_s=gaps, merge=merge))
    assert b"".join(w.data for w in p.writes) == b"".join(events)
    assert sum(w.events for w in p.writes) == len(events)
    assert len(p.writes) == len(events) - len(merge & set(range(1, len(events))))
    times = [p.head_at_s] + [w.at_s for w in p.writes]
    assert times == sorted(times)
    assert p.writes[0].at_s == pytest.approx(ttfb)
    assert p.finish == "complete"


@given(events_st, st.integers(0, 50), st.sampled_from(["reset", "close", "hang"]))
def test_plan_cuts_at_fault(events: tuple[bytes, ...], n: int, kind: str) -> None:
    """A fault after N writes keeps exactly the first N writes and names the finish."""
    p = plan(events, Behavior(**{f"{kind}_after": n}))  # type: ignore[arg-type]
    assert len(p.writes) == min(n, len(events))
    assert [w.data for w in p.writes] == list(events[:n])
    assert p.finish == kind


def test_gap_list_cycles() -> None:
    """A gap list applies before writes 1, 2, ... and repeats when exhausted."""
    p = plan((b"a", b"b", b"c", b"d", b"e"), Behavior(ttfb_s=1.0, gap_s=(0.1, 0.2)))
    assert [w.at_s for w in p.writes] == pytest.approx([1.0, 1.1, 1.3, 1.4, 1.6])


def test_modelled_timing_shape() -> None:
    """The modelled timing has a few-hundred-ms TTFB, 10-60 ms gaps, some merged events."""
    b = Behavior.modelled()
    assert b.ttfb_s == pytest.approx(0.3)
    assert isinstance(b.gap_s, tuple)
    assert all(0.010 <= g <= 0.060 for g in b.gap_s)
    assert 100 < len(b.merge) < 400  # ~10 % of 2000 indices
    fast = Behavior.modelled(scale=0.1)
    assert fast.ttfb_s == pytest.approx(0.03)
    assert Behavior.modelled(seed=1) != Behavior.modelled(seed=2)
    assert Behavior.modelled(seed=1) == Behavior.modelled(seed=1)


def test_knobs_override_fields() -> None:
    """Per-request knobs replace the matching fields of the base behavior."""
    base = Behavior(ttfb_s=0.5, reset_after=3)
    b = from_knobs(
        base,
        {"x-sim-gap-ms": "10,20", "x-sim-close-after": "2", "x-sim-stream": "gemini-text",
         "x-sim-merge": "1, 4", "x-sim-status": "429"},
    )  # fmt: skip
    assert b.ttfb_s == 0.5 and b.gap_s == (0.01, 0.02)
    assert b.close_after == 2 and b.reset_after is None
    assert b.stream == "gemini-text" and b.merge == frozenset({1, 4}) and b.status == 429
    assert from_knobs(base, {}) == base
    modelled = from_knobs(base, {"x-sim-model": "0.5,3"})
    assert modelled.ttfb_s == pytest.approx(0.15) and modelled.reset_after == 3
    assert modelled.gap_s == Behavior.modelled(0.5, 3).gap_s


@pytest.mark.parametrize(
    "knobs",
    [
        {"x-sim-gap-ms": "fast"},
        {"x-sim-ttfb-ms": "-5"},
        {"x-sim-reset-after": "x"},
        {"x-sim-reset-after": "-1"},
        {"x-sim-status": "99"},
        {"x-sim-model": "a,b"},
        {"x-sim-reset-after": "1", "x-sim-hang-after": "2"},
    ],
)
def test_bad_knobs_are_one_line_usage_errors(knobs: dict[str, str]) -> None:
    """A malformed knob raises a one-line UsageError naming the problem."""
    with pytest.raises(UsageError) as info:
        from_knobs(Behavior(), knobs)
    assert "\n" not in str(info.value) and str(info.value)


@given(st.dictionaries(st.sampled_from(["x-sim-gap-ms", "x-sim-ttfb-ms", "x-sim-merge",
                                        "x-sim-reset-after", "x-sim-status", "x-sim-model"]),
                       st.text(max_size=12)))  # fmt: skip
def test_any_knob_text_gives_behavior_or_usage_error(knobs: dict[str, str]) -> None:
    """Arbitrary knob text never crashes: it yields a Behavior or a UsageError."""
    try:
        b = from_knobs(Behavior(), knobs)
    except UsageError as e:
        assert str(e)
    else:
        assert isinstance(b, Behavior)
