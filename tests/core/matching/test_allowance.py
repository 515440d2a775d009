"""The matcher's serving allowance (core/matching/matcher.py): an interaction whose faults name
``attempt=N`` may be served N + 1 times without allow_repeats; recorded order still comes
first, and past the allowance it is the usual "used up" miss."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.faults import parse, servings
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.matcher import Hit, Matcher, Miss
from replayproxy.testing import interaction, request

IT = interaction()


def _twice(it: Interaction, n: int) -> int:
    return 2


def test_without_an_allowance_an_interaction_is_served_once() -> None:
    """The default: the second identical request is a used-up miss."""
    m = Matcher([IT])
    assert m.match(request()) == Hit(0, 0)
    miss = m.match(request())
    assert isinstance(miss, Miss) and miss.used_up


def test_the_allowance_serves_the_retry_then_misses() -> None:
    """servings=2: served twice (replay counts 0 and 1), the third is used up."""
    m = Matcher([IT], servings=_twice)
    assert m.match(request()) == Hit(0, 0)
    assert m.match(request()) == Hit(0, 1)
    miss = m.match(request())
    assert isinstance(miss, Miss) and miss.used_up and miss.nearest == 0


def test_recorded_order_comes_before_the_allowance() -> None:
    """Two identical recordings: each is served once in order before either is repeated."""
    m = Matcher([IT, IT], servings=_twice)
    assert [m.match(request()) for _ in range(4)] == [Hit(0, 0), Hit(1, 0), Hit(0, 1), Hit(1, 1)]
    assert isinstance(m.match(request()), Miss)


def test_allow_repeats_still_serves_the_last_past_the_allowance() -> None:
    """allow_repeats goes on past the allowance, counting the servings."""
    m = Matcher([IT], MatchOptions(allow_repeats=True), servings=_twice)
    assert [m.match(request()) for _ in range(4)] == [Hit(0, n) for n in range(4)]


def test_added_interactions_get_their_allowance() -> None:
    """An interaction recorded during the session (served live once) is asked too."""
    m = Matcher([], servings=lambda it, n: servings(it, n, [parse("hang:attempt=1")]))
    m.add(IT, used=True)
    assert m.allowed == [2]
    assert m.match(request()) == Hit(0, 1)
    assert isinstance(m.match(request()), Miss)


@given(st.integers(1, 6), st.integers(1, 12))
def test_hits_are_bounded_by_servings(allowed: int, asked: int) -> None:
    """For any allowance, exactly min(asked, allowed) requests hit, with counts 0, 1, ..."""
    m = Matcher([IT], servings=lambda it, n: allowed)
    results = [m.match(request()) for _ in range(asked)]
    hits = [r for r in results if isinstance(r, Hit)]
    assert hits == [Hit(0, n) for n in range(min(asked, allowed))]
    assert all(isinstance(r, Miss) and r.used_up for r in results[len(hits) :])
