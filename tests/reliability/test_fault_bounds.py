"""Fault parameters are bounded, and no fault builds an unbounded number of writes.

``keepalive:every=1e-8`` once built every write in memory on mitmproxy's loop (771 MiB for a
46 ms stream); ``stall:for=1e300`` overflowed while planning. Durations now have a documented
maximum, intervals a minimum, and a fault that would build more than MAX_WRITES writes for one
response is refused, before anything is built, with a one-line error naming the interaction.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from replayproxy._core import faults
from replayproxy._core.cassette.model import Interaction
from replayproxy._core.faults import bytes as bytes_faults
from replayproxy._core.faults import timing
from replayproxy._core.faults.spec import MAX_SECONDS, MAX_WRITES
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.checks import check_speed
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import FaultSpecError, UsageError
from replayproxy.testing import MS, cassette, interaction

DAY_NS = 86_400 * 1_000_000_000


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("stall:for=1e300", "at most 86400"),
        ("ttfb:delay=1e300", "at most 86400"),
        ("stall:time=1e300", "at most 86400"),
        ("split:bytes=1,gap=1e300", "at most 86400"),
        ("ttfb:delay=inf", "at most 86400"),
        ("ttfb:delay=nan", "at most 86400"),
        ("hang:time=86401", "at most 86400"),
        ("keepalive:until=1e9", "at most 86400"),
        ("jitter:ms=1e300", "at most 86400000"),
        ("keepalive:every=1e-8", "at least 0.01"),
        ("keepalive:every=0", "at least 0.01"),
        ("status:retry-after=1e300", "at most 86400"),
    ],
)
def test_out_of_range_fault_parameters_are_one_line_errors(spec: str, message: str) -> None:
    """Durations above the maximum, infinities, NaN and too short intervals are refused."""
    with pytest.raises(FaultSpecError, match=message) as info:
        faults.parse(spec)
    assert "\n" not in str(info.value)


def test_the_largest_allowed_duration_plans() -> None:
    """``stall:for=MAX_SECONDS`` is accepted and planned exactly (no overflow, no rounding)."""
    it = interaction([b"data: 1\n\n", b"data: 2\n\n"])
    out = faults.plan(it, 0, faults=[faults.parse(f"ttfb:delay={MAX_SECONDS:g}")])
    assert out.head is not None and out.head.at_ns == 50 * MS + DAY_NS


@pytest.mark.parametrize("speed", ["1e-300", "0.0001", "1e300"])
def test_speeds_that_would_overflow_are_refused(speed: str) -> None:
    """A speed so small (or large) that offsets overflow is a one-line UsageError."""
    with pytest.raises(UsageError, match=r"speed must be 0 or from 0\.001"):
        check_speed(speed)


def _gappy(days: int) -> Interaction:
    """An SSE stream with a recorded gap of ``days`` days between its two events."""
    day_ms = DAY_NS // MS
    return interaction([b"data: 1\n\n", b"data: 2\n\n"], head_ms=0, at_ms=[80, days * day_ms])


@pytest.mark.parametrize(
    "spec", ["keepalive:every=0.01", "keepalive:every=0.01,interaction=0", "throttle:bps=1"]
)
def test_a_fault_that_would_build_too_many_writes_is_refused_cheaply(spec: str) -> None:
    """keepalive over a recorded gap of 300 days, or 1 byte/s over a big body, is refused
    before any write is built: bounded memory, naming the interaction and the bound."""
    it = _gappy(300) if spec.startswith("keepalive") else interaction([b"x" * 1_100_000])
    tracemalloc.start()
    try:
        with pytest.raises(FaultSpecError, match=f"at most {MAX_WRITES}") as info:
            faults.plan(it, 0, faults=[faults.parse(spec)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value).startswith("interaction 0 (POST /v1/chat/completions)")
    assert peak < 20 * 2**20, f"planning a refused fault peaked at {peak} bytes"


def test_a_refused_fault_is_answered_as_cannot_serve() -> None:
    """Through a session, the refusal is a Miss with the reason (the explained 500)."""
    session = ReplaySession(cassette(_gappy(1)), speed=1, faults=["keepalive:every=0.01"])
    it = _gappy(1)
    result = session.resolve(it.request)
    assert isinstance(result, Miss)
    assert f"at most {MAX_WRITES}" in result.reason


# -- the counts used to refuse match what the faults build ---------------------------------------

_writes = st.lists(st.tuples(st.integers(0, 5_000), st.binary(min_size=1, max_size=30)), max_size=8)


def _schedule(gaps_data: list[tuple[int, bytes]], finish: FinishKind) -> Schedule:
    t = 1_000
    writes = []
    for gap, data in gaps_data:
        t += gap * 1_000_000
        writes.append(Write(t, data))
    return Schedule(Head(1_000, 200, "", ()), tuple(writes), Finish(t + 3_000_000, finish))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _writes,
    st.sampled_from(list(FinishKind)),
    st.floats(0.01, 2.0),
    st.floats(0, 3.0),
    st.data(),
)
def test_keepalive_count_is_what_keepalive_builds(
    gd: list[tuple[int, bytes]], finish: FinishKind, every: float, until: float, data: st.DataObject
) -> None:
    """keepalive_count predicts exactly how many keepalives keepalive() inserts."""
    schedule = _schedule(gd, finish)
    ends = [0]
    for _, d in gd:
        ends.append(ends[-1] + len(d))
    boundaries = data.draw(st.lists(st.sampled_from(ends), unique=True))
    built = timing.keepalive(schedule, boundaries, every, until, b": k\n\n")
    assert len(built.writes) - len(schedule.writes) == timing.keepalive_count(
        schedule, boundaries, every, until
    )


@settings(max_examples=200, deadline=None)
@given(_writes, st.integers(1, 500))
def test_throttle_count_is_what_throttle_builds(gd: list[tuple[int, bytes]], bps: int) -> None:
    """throttle_count predicts exactly how many writes throttle() makes."""
    schedule = _schedule(gd, FinishKind.COMPLETE)
    assert len(timing.throttle(schedule, bps).writes) == timing.throttle_count(schedule, bps)


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300),
    st.sampled_from([None, "utf8", "crlf", "midline", "random"]),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(0, 2**32),
)
@example(b"\x00" * 9, "random", 1, 10, 2)  # found by hypothesis: 3 points drawn, bound 2
def test_split_count_bounds_the_split_points(
    body: bytes, at: str | None, size: int, avg: int, seed: int
) -> None:
    """split_count is never below the number of points split_points builds."""
    use_size = size if at is None else None
    points = bytes_faults.split_points(body, at, use_size, avg, random.Random(seed))
    assert len(points) <= bytes_faults.split_count(body, at, use_size, avg)


def test_planning_the_longest_keepalive_run_allowed_stays_bounded() -> None:
    """A hang with keepalives every 0.01 s for 900 s (90,000 writes) plans in
    bounded memory (generous bound; the figure is measured in benchmarks/)."""
    it = interaction([b"data: 1\n\n", b"data: 2\n\n"])
    tracemalloc.start()
    try:
        out = faults.plan(
            it, 0, faults=[faults.parse("keepalive:every=0.01,until=900"), faults.parse("hang")]
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 85_000 < len(out.writes) <= MAX_WRITES
    assert peak < 100 * 2**20


@pytest.mark.parametrize(
    ("fault", "on_loop"),
    [("jitter:ms=1", False), (None, True)],
    ids=["with-a-fault-on-a-worker-thread", "cheap-on-the-loop"],
)
def test_planning_runs_off_the_event_loop_when_it_can_be_slow(
    monkeypatch: pytest.MonkeyPatch, fault: str | None, on_loop: bool
) -> None:
    """With a fault to plan (time proportional to the frames), matching and planning run on a
    worker thread, never on the thread of the event loop that serves every other stream
    (ReplayServer's, as mitmproxy's for the addon); without one, on a small cassette, they
    run on the loop (a lookup: the thread hand-off would cost more)."""
    import threading

    import httpx

    from replayproxy._engine.server import ReplayServer

    threads: list[str] = []
    real_plan = faults.plan

    def spy(*args: object, **kwargs: object) -> Schedule:
        threads.append(threading.current_thread().name)
        return real_plan(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(faults, "plan", spy)
    it = interaction([b"data: 1\n\n"])
    with ReplayServer(cassette(it), speed=0, faults=[fault] if fault else []) as server:
        r = httpx.post(server.url + "/v1/chat/completions", content=it.request.body, timeout=10)
    assert r.status_code == 200
    assert len(threads) == 1, threads
    assert (threads[0] == "replayproxy-origin") is on_loop, threads
