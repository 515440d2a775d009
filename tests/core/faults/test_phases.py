"""The planners' phases (core/faults/__init__.py apply_all, core/faults/websocket.py plan): what
is applied, resolved or refused when, whatever order the faults are given in."""

from __future__ import annotations

from replayproxy._core.cassette.model import Ending, EndKind, Interaction
from replayproxy._core.faults import apply_all, parse, plan, timing
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.faults.position import Context
from replayproxy._core.schedule.model import from_interaction
from replayproxy.testing import ws_interaction, ws_text
from tests.faults.builders import interaction

WS_MESSAGES = [
    ws_text(10, False, {"type": "session.created"}),
    ws_text(20, True, {"type": "response.create"}),
    ws_text(30, False, {"type": "response.created"}),
    ws_text(40, False, {"type": "response.output_text.delta", "delta": "hi"}),
    ws_text(50, False, {"type": "response.done"}),
]


def test_apply_all_keeps_the_recorded_timeline_by_default() -> None:
    """Without a speed, apply_all() scales nothing (speed 1), as `cassette edit --bake` needs."""
    it = interaction("anthropic-text")
    ctx = Context(it, 0)
    assert apply_all(from_interaction(it), [], ctx) == from_interaction(it)
    assert apply_all(from_interaction(it), [parse("hang:events=2")], ctx) == plan(
        it, 0, faults=[parse("hang:events=2")]
    )


def test_a_timing_fault_without_a_position_resolves_none() -> None:
    """Only positioned timing faults (stall) have a position resolved: ttfb applies to an
    interaction that has no response to cut."""
    it = interaction("anthropic-text")
    unanswered = Interaction(it.request, None, Ending(EndKind.COMPLETE, 0))
    planned = plan(unanswered, 0, faults=[parse("ttfb:delay=1")])
    assert planned == timing.ttfb(from_interaction(unanswered), 1.0)


def test_a_stall_position_counts_the_events_left_by_the_edits_in_any_order() -> None:
    """A stall's events=N is resolved after every event edit, listed before it or after."""
    it = interaction("anthropic-text")
    stall, drop = parse("stall:for=1,events=2"), parse("drop:event=0")
    assert plan(it, 0, faults=[stall, drop]) == plan(it, 0, faults=[drop, stall])
    assert plan(it, 0, faults=[stall, drop]) != plan(it, 0, faults=[stall])


def test_a_websocket_stall_counts_the_messages_left_by_the_edits_in_any_order() -> None:
    """The same on a WebSocket session: server messages are counted after the edits."""
    it = ws_interaction(WS_MESSAGES)
    stall, drop = parse("stall:for=1,events=2"), parse("drop:event=0")
    first = ws_faults.plan(it, 0, faults=[stall, drop])
    assert first == ws_faults.plan(it, 0, faults=[drop, stall])
    assert first != ws_faults.plan(it, 0, faults=[drop]) != ws_faults.plan(it, 0, faults=[stall])


def test_a_refused_upgrade_is_decided_before_websocket_refusals() -> None:
    """status refuses the upgrade before anything else is checked: with a fault that cannot
    apply to a session, the plan is still "serve the HTTP response" (None)."""
    it = ws_interaction(WS_MESSAGES)
    assert ws_faults.plan(it, 0, faults=[parse("keepalive"), parse("status:code=429")]) is None
