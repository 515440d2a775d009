"""The fault registry (core/faults/registry.py): every definition complete, and every one applied.

A definition that parses but that the planners never apply, or that has neither a WebSocket
applier nor the reason it has none, fails here; so does a new definition the planners would
need another edit to apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from replayproxy._core.cassette.websocket import WsClose, WsCloseKind
from replayproxy._core.faults import (
    FAULTS,
    FaultDef,
    Outcome,
    Phase,
    definitions,
    outcome_of,
    parse,
    plan,
)
from replayproxy._core.faults import spec as spec_mod
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.faults.position import Step
from replayproxy._core.faults.ws_appliers import WsState
from replayproxy._core.schedule.model import Schedule, from_interaction, scale
from replayproxy._errors import FaultSpecError
from replayproxy.testing import ws_interaction, ws_text
from tests.faults.builders import interaction

NO_OP_BY_DESIGN: Mapping[str, str] = {}
"""Faults whose example leaves the plan as recorded on purpose, with why (none today)."""

NAMES = [d.name for d in definitions()]
WS_MESSAGES = [
    ws_text(10, False, {"type": "session.created"}),
    ws_text(20, True, {"type": "response.create"}),
    ws_text(30, False, {"type": "response.created"}),
    ws_text(40, False, {"type": "response.output_text.delta", "delta": "hi"}),
    ws_text(50, False, {"type": "response.done"}),
]


def test_the_outcome_classes_are_the_five_a_client_can_meet() -> None:
    """Outcome has exactly the five classes the fault matrix groups faults by."""
    assert [o.name for o in Outcome] == [
        "SAME_EVENTS", "INCOMPLETE", "PROVIDER_ERROR", "ALTERED_EVENTS", "HANG",
    ]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_every_definition_is_complete(name: str) -> None:
    """Each definition has its name as key, a summary, a phase, an outcome, an HTTP applier,
    a WebSocket applier or (only then) the reason it has none, documented parameters, and an
    example that parses as itself."""
    d = FAULTS[name]
    assert d.name == name and d.summary
    assert isinstance(d.phase, Phase) and isinstance(d.outcome, Outcome)
    assert callable(d.http)
    assert (d.ws is None) is bool(d.ws_unsupported), "a WebSocket applier, or why it has none"
    assert d.ws is None or callable(d.ws)
    assert all(p.help for p in d.allowed().values()), "every parameter has a help line"
    assert set(d.required) <= set(d.params)
    assert d.one_of is None or set(d.one_of.names) <= set(d.params)
    assert parse(d.example).name == name
    assert not d.cut_before_speed or d.phase is Phase.TIMING


def test_definitions_and_the_mapping_agree() -> None:
    """definitions() lists every fault of FAULTS once, in its order."""
    assert [d.name for d in definitions()] == list(FAULTS)
    assert all(isinstance(d, FaultDef) for d in definitions())


@pytest.mark.parametrize("name", NAMES)
def test_every_fault_is_applied_over_http(name: str) -> None:
    """Planning a recorded stream with the fault's example changes the schedule."""
    it = interaction("anthropic-text")
    got = plan(it, 0, faults=[parse(FAULTS[name].example)])
    if name in NO_OP_BY_DESIGN:
        assert got == from_interaction(it)
    else:
        assert got != from_interaction(it)


@pytest.mark.parametrize("name", [d.name for d in definitions() if d.ws is not None])
def test_every_websocket_applier_is_applied(name: str) -> None:
    """Planning a recorded WebSocket session with the example changes the session or its
    head, or (a RESPONSE fault) refuses the upgrade."""
    it = ws_interaction(WS_MESSAGES)
    recorded = ws_faults.plan(it, 0)
    got = ws_faults.plan(it, 0, faults=[parse(FAULTS[name].example)])
    if FAULTS[name].phase is Phase.RESPONSE:
        assert got is None
    else:
        assert got is not None and got != recorded


@pytest.mark.parametrize("name", [d.name for d in definitions() if d.ws is None])
def test_a_fault_without_a_websocket_applier_is_refused_with_its_reason(name: str) -> None:
    """On a WebSocket session the fault is a one-line error giving its definition's reason."""
    example = FAULTS[name].example
    with pytest.raises(FaultSpecError) as info:
        ws_faults.plan(ws_interaction(WS_MESSAGES), 0, faults=[parse(example)])
    expected = f"interaction 0 (GET /v1/realtime): fault {example!r}: {FAULTS[name].ws_unsupported}"
    assert str(info.value) == expected
    assert name in ws_faults.UNSUPPORTED


@pytest.mark.parametrize("name", NAMES)
def test_outcome_of_names_what_a_client_meets(name: str) -> None:
    """outcome_of() gives the definition's outcome class."""
    assert outcome_of(name) is FAULTS[name].outcome


def test_every_outcome_class_has_a_fault() -> None:
    """Each class a client can meet is produced by some registered fault (the fault matrix
    has cells of every class)."""
    assert {d.outcome for d in definitions()} == set(Outcome)


def test_outcome_of_an_unknown_fault_is_a_one_line_error() -> None:
    """An unknown name is refused with the list of valid ones."""
    with pytest.raises(FaultSpecError, match=r"^unknown fault 'explode'; valid faults: close, "):
        outcome_of("explode")


def _marker(schedule: Schedule, step: Step) -> Schedule:
    """Ends the stream with the byte count seen, to show when in the phases it ran."""
    n = str(len(schedule.body)).encode()
    return replace(schedule, writes=(*schedule.writes, replace(schedule.writes[-1], data=n)))


def _ws_marker(state: WsState, step: Step) -> WsState:
    close = WsClose(state.session.close.offset_ns + 1, WsCloseKind.DROPPED)
    return replace(state, session=replace(state.session, close=close))


@pytest.mark.parametrize("phase", list(Phase))
def test_a_new_definition_is_parsed_and_applied_with_no_other_edit(
    phase: Phase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A definition added to the registry alone parses, and both planners apply it in its
    phase: after speed scaling for TIMING, before it otherwise."""
    new = FaultDef("new", "a fault", phase, Outcome.ALTERED_EVENTS, _marker, _ws_marker, "new")
    monkeypatch.setattr(spec_mod, "FAULTS", {**FAULTS, "new": new})
    it = interaction("anthropic-text")
    got = plan(it, 0, speed=2.0, faults=[parse("new")])
    recorded = scale(from_interaction(it), 2.0)
    assert got.writes[:-1] == recorded.writes
    assert got.writes[-1] == replace(recorded.writes[-1], data=str(len(it.response.body)).encode())  # type: ignore[union-attr]
    ws_it = ws_interaction(WS_MESSAGES)
    planned = ws_faults.plan(ws_it, 0, speed=2.0, faults=[parse("new")])
    assert planned is not None
    session, _ = planned
    assert session.close.kind is WsCloseKind.DROPPED
    scaled_close = round(ws_it.websocket.close.offset_ns / 2)  # type: ignore[union-attr]
    assert session.close.offset_ns == (scaled_close + 1 if phase is Phase.TIMING else scaled_close)


@pytest.mark.parametrize("phase", list(Phase))
def test_a_new_definition_without_a_websocket_applier_is_refused_with_its_reason(
    phase: Phase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In any phase, a definition with no WebSocket applier gives its reason on a session."""
    new = FaultDef(
        "new", "a fault", phase, Outcome.HANG, _marker, None, "new", ws_unsupported="no way"
    )
    monkeypatch.setattr(spec_mod, "FAULTS", {**FAULTS, "new": new})
    with pytest.raises(FaultSpecError, match=r"fault 'new': no way$"):
        ws_faults.plan(ws_interaction(WS_MESSAGES), 0, faults=[parse("new")])
