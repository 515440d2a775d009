"""The buffered-delivery judgement (``stream.buffered``): its thresholds, both sides of each."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.check.delivery import BURST_NS, MIN_EVENTS, WAIT_NS, Arrival, buffered
from replayproxy.testing import MS


def test_the_issues_gzip_case_is_buffered() -> None:
    """10 bytes (gzip's header, no event) at 11 ms, then every event at 2190 ms: buffered, and
    the message names the frame count, the first and last arrival and the bytes."""
    message = buffered([Arrival(11 * MS, 10, 0), Arrival(2190 * MS, 802, 14)])
    assert message is not None
    assert message.startswith("all 14 events arrived within 0.0 ms of each other, 2190.0 ms")
    assert "(2 frame(s), 812 bytes: 10 bytes at 11.0 ms ... 802 bytes at 2190.0 ms)" in message


def test_events_spread_over_the_providers_gaps_are_streamed() -> None:
    """One event every 30 ms after 300 ms: incremental."""
    assert buffered([Arrival((300 + 30 * i) * MS, 40, 1) for i in range(7)]) is None


def test_the_burst_threshold_both_sides() -> None:
    """Events within BURST_NS of each other are a burst; one nanosecond more is not."""
    at = 500 * MS
    assert buffered([Arrival(at, 40, 1), Arrival(at + BURST_NS, 40, 1)]) is not None
    assert buffered([Arrival(at, 40, 1), Arrival(at + BURST_NS + 1, 40, 1)]) is None


def test_the_wait_threshold_both_sides() -> None:
    """A burst WAIT_NS after the request is buffering; a burst sooner is too fast to tell."""
    assert buffered([Arrival(WAIT_NS, 80, 2)]) is not None
    assert buffered([Arrival(WAIT_NS - 1, 80, 2)]) is None


def test_fewer_than_two_events_cannot_be_judged() -> None:
    """One event cannot be spread out; frames that complete no event do not count."""
    assert MIN_EVENTS == 2
    assert buffered([Arrival(2 * 1000 * MS, 80, 1)]) is None
    assert buffered([Arrival(100 * MS, 10, 0), Arrival(3000 * MS, 10, 0)]) is None
    assert buffered([]) is None


@given(
    gaps=st.lists(st.integers(0, 5 * MS), min_size=1, max_size=20),
    wait=st.integers(0, 3000 * MS),
)
def test_any_delivery_spread_wider_than_a_burst_is_streamed(gaps: list[int], wait: int) -> None:
    """Property: when the event-carrying frames span more than BURST_NS, never buffered; when
    they span at most BURST_NS after WAIT_NS, always buffered."""
    times = [wait]
    for gap in gaps:
        times.append(times[-1] + gap)
    arrivals = [Arrival(t, 30, 1) for t in times]
    spread = times[-1] - times[0]
    result = buffered(arrivals)
    assert (result is not None) == (spread <= BURST_NS and wait >= WAIT_NS)
