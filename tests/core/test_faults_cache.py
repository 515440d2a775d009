"""plan() builds each deterministic schedule once per (interaction, index, speed, faults) and
serves it from a bounded cache; seeded faults are built anew (core/faults/__init__.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from replayproxy.core import faults
from replayproxy.core.faults import parse, plan
from tests.faults.builders import interaction


def test_the_same_plan_is_served_from_the_cache() -> None:
    """Asking again with the same interaction object, index, speed and faults returns the very
    same schedule; any difference (or an equal but different interaction) builds a new one."""
    it = interaction("anthropic-text")
    hang = [parse("hang:events=3")]
    first = plan(it, 0, faults=hang)
    assert plan(it, 0, faults=hang) is first
    assert plan(it, 1, faults=hang) is not first
    assert plan(it, 0, speed=2.0, faults=hang) is not first
    assert plan(it, 0, faults=[parse("hang:events=4")]) is not first
    twin = replace(it)
    assert plan(twin, 0, faults=hang) is not first
    assert plan(twin, 0, faults=hang) == first


def test_seeded_faults_are_not_cached() -> None:
    """jitter and split draw per serving: each plan is built anew."""
    it = interaction("anthropic-text")
    for fault in ("jitter:ms=5", "split:at=random"):
        spec = [parse(fault)]
        assert plan(it, 0, faults=spec) is not plan(it, 0, faults=spec)


def test_the_cache_is_bounded_oldest_out_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """At _PLANS_MAX entries, the oldest entry makes room for the new one."""
    monkeypatch.setattr(faults, "_PLANS", {})
    monkeypatch.setattr(faults, "_PLANS_MAX", 3)
    it = interaction("anthropic-text")
    first = plan(it, 0)
    plan(it, 1)
    plan(it, 2)
    assert len(faults._PLANS) == 3
    assert plan(it, 0) is first
    plan(it, 3)  # evicts index 0's plan
    assert len(faults._PLANS) == 3
    assert plan(it, 0) is not first
