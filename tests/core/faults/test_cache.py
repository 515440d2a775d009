"""Which servings a fault applies to (selectors, seeded p= draws), and the bounded cache of
deterministic schedules a caller of plan() owns (PlanCache, core/faults/__init__.py)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from replayproxy._core.faults import PlanCache, applies, parse, plan
from tests.faults.builders import interaction


def test_the_same_plan_is_served_from_the_cache() -> None:
    """Asking again with the same interaction object, index, speed and faults returns the very
    same schedule; any difference (or an equal but different interaction) builds a new one."""
    it = interaction("anthropic-text")
    hang = [parse("hang:events=3")]
    cache = PlanCache()
    first = plan(it, 0, faults=hang, cache=cache)
    assert plan(it, 0, faults=hang, cache=cache) is first
    assert plan(it, 1, faults=hang, cache=cache) is not first
    assert plan(it, 0, speed=2.0, faults=hang, cache=cache) is not first
    assert plan(it, 0, faults=[parse("hang:events=4")], cache=cache) is not first
    twin = replace(it)
    assert plan(twin, 0, faults=hang, cache=cache) is not first
    assert plan(twin, 0, faults=hang, cache=cache) == first


def test_without_a_cache_every_plan_is_built_anew() -> None:
    """plan() keeps nothing of its own: without a cache the same question builds a new plan."""
    it = interaction("anthropic-text")
    hang = [parse("hang:events=3")]
    assert plan(it, 0, faults=hang) is not plan(it, 0, faults=hang)
    assert plan(it, 0, faults=hang) == plan(it, 0, faults=hang)


def test_seeded_faults_are_not_cached() -> None:
    """jitter and split draw per serving: each plan is built anew."""
    it = interaction("anthropic-text")
    cache = PlanCache()
    for fault in ("jitter:ms=5", "split:at=random"):
        spec = [parse(fault)]
        assert plan(it, 0, faults=spec, cache=cache) is not plan(it, 0, faults=spec, cache=cache)
    assert len(cache) == 0


def test_the_cache_is_bounded_oldest_out_first() -> None:
    """At maxsize entries, the oldest entry makes room for the new one."""
    cache = PlanCache(maxsize=3)
    it = interaction("anthropic-text")
    first = plan(it, 0, cache=cache)
    plan(it, 1, cache=cache)
    plan(it, 2, cache=cache)
    assert len(cache) == 3
    assert plan(it, 0, cache=cache) is first
    plan(it, 3, cache=cache)  # evicts index 0's plan
    assert len(cache) == 3
    assert plan(it, 0, cache=cache) is not first


def _it(path: str = "/v1/messages") -> object:
    return interaction("anthropic-text", path=path)


@pytest.mark.parametrize(
    ("fault", "index", "path", "applied"),
    [
        ("hang", 0, "/v1/messages", True),
        ("hang:interaction=2", 2, "/v1/messages", True),
        ("hang:interaction=2", 1, "/v1/messages", False),
        ("hang:path=/v1/*", 0, "/v1/messages", True),
        ("hang:path=/v1/*", 0, "/v2/messages", False),
        ("hang:path=/V1/*", 0, "/v1/messages", False),
        ("hang:p=1", 0, "/v1/messages", True),
        ("hang:p=0", 0, "/v1/messages", False),
        ("hang:path=/v1/*,interaction=0", 0, "/v1/messages", True),
        ("hang:path=/v2/*,interaction=0", 0, "/v1/messages", False),
    ],
)
def test_selectors(fault: str, index: int, path: str, applied: bool) -> None:
    """interaction=I and path=GLOB (case-sensitive) select; p=1 always, p=0 never applies."""
    assert applies(parse(fault), _it(path), index) is applied  # type: ignore[arg-type]


def test_probability_draws_are_seeded_by_fault_seed_index_and_serving() -> None:
    """p= draws from random.Random("p:SPEC:SEED:INDEX:COUNT"): the same run always makes the
    same draws, and each serving (replay_count) of each interaction its own."""
    it = _it()
    for text in ("hang:p=0.5", "hang:p=0.5,seed=3", "reset:p=0.25,seed=9"):
        spec = parse(text)
        for index, count in ((0, 0), (1, 0), (0, 1), (4, 7)):
            seed = spec.integer("seed")
            draw = random.Random(f"p:{text}:{seed}:{index}:{count}").random()
            assert applies(spec, it, index, count) is (draw < spec.number("p"))  # type: ignore[arg-type]
    assert applies(parse("hang:p=0.5,seed=6"), it, 0) is applies(
        parse("hang:p=0.5,seed=6"), it, 0, 0
    )  # type: ignore[arg-type]


def test_a_replay_session_owns_a_cache_and_plans_each_interaction_once() -> None:
    """Each ReplaySession builds an interaction's plan once and serves that very schedule to
    every repeat; another session over the same cassette has its own."""
    from replayproxy._core.cassette.model import Cassette
    from replayproxy._core.matching.differences import MatchOptions
    from replayproxy._engine.session import ReplaySession, Served

    it = interaction("anthropic-text")
    options = MatchOptions(allow_repeats=True)
    session = ReplaySession(Cassette(interactions=(it,)), speed=0, options=options)
    served = [session.resolve(it.request) for _ in range(3)]
    assert all(isinstance(s, Served) for s in served)
    first, *repeats = (s.schedule for s in served if isinstance(s, Served))
    assert all(r is first for r in repeats)
    other = ReplaySession(Cassette(interactions=(it,)), speed=0, options=options).resolve(
        it.request
    )
    assert isinstance(other, Served)
    assert other.schedule is not first and other.schedule == first
