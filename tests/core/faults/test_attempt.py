"""The ``attempt=N`` selector (core/faults/params.py, spec.py, applies/select/servings in
core/faults/__init__.py, the WebSocket planner): a fault acts on the N-th serving of an
interaction only, and a session may serve the interaction N + 1 times so the retry matches."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.faults import FAULTS, applies, parse, plan, select, servings
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.schedule.model import FinishKind
from replayproxy._errors import FaultSpecError
from replayproxy.testing import interaction, realtime_turns, ws_interaction

IT = interaction([b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n", b"data: 4\n\n"])


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_every_fault_accepts_attempt(name: str) -> None:
    """attempt= is a selector: every fault takes it, as interaction= and path=."""
    extra = "bytes=1" if name == "split" else ",".join(f"{k}=1" for k in FAULTS[name].required)
    text = f"{name}:attempt=2" + (f",{extra}" if extra else "")
    assert parse(text).value("attempt") == 2


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "x", ""])
def test_attempt_must_be_a_whole_number_from_one(value: str) -> None:
    """attempt=0, negatives, fractions and words are one-line errors saying what is valid."""
    with pytest.raises(FaultSpecError) as e:
        parse(f"close:events=3,attempt={value}")
    assert str(e.value) == (
        f"fault 'close': attempt={value!r}: must be a whole number >= 1 (1 = the first serving)"
    )
    assert "\n" not in str(e.value)


@given(st.integers(-(10**6), 10**6))
def test_attempt_parses_every_whole_number_from_one_and_refuses_the_rest(n: int) -> None:
    """Any integer: 1 and up parse to themselves, 0 and below are the one-line error."""
    if n >= 1:
        assert parse(f"hang:attempt={n}").value("attempt") == n
    else:
        with pytest.raises(FaultSpecError, match="must be a whole number >= 1"):
            parse(f"hang:attempt={n}")


@given(st.integers(1, 50), st.integers(0, 60))
def test_applies_only_to_the_named_serving(attempt: int, replay_count: int) -> None:
    """attempt=N acts on exactly the serving with replay_count == N - 1."""
    spec = parse(f"reset:events=1,attempt={attempt}")
    assert applies(spec, IT, 0, replay_count) is (replay_count == attempt - 1)


def test_attempt_combines_with_the_other_selectors() -> None:
    """interaction= and path= still select; attempt= narrows what they selected."""
    spec = parse("reset:events=1,attempt=1,interaction=1")
    assert applies(spec, IT, 1, 0)
    assert not applies(spec, IT, 0, 0)
    assert not applies(spec, IT, 1, 1)
    assert not applies(parse("reset:events=1,attempt=1,path=/other"), IT, 0, 0)
    assert not applies(parse("reset:events=1,attempt=1,p=0"), IT, 0, 0)


def test_the_first_serving_fails_and_the_retry_gets_the_recording() -> None:
    """plan() of serving 1 ends as the fault says; serving 2 is the recording untouched."""
    faults = [parse("close:events=2,attempt=1")]
    first = plan(IT, 0, faults=faults, replay_count=0)
    second = plan(IT, 0, faults=faults, replay_count=1)
    assert first.body == b"data: 1\n\ndata: 2\n\n"
    assert first.finish.kind is FinishKind.CLOSE
    assert second == plan(IT, 0)


def test_select_lists_stored_faults_first_and_only_those_that_apply() -> None:
    """select() is what the planners apply: stored, then given, after the selectors."""
    stored = interaction(faults=("ttfb:delay=1,attempt=2",))
    given_ = [parse("close:events=1,attempt=1"), parse("hang:events=1,interaction=5")]
    assert [str(s) for s in select(stored, 0, given_, 0)] == ["close:events=1,attempt=1"]
    assert [str(s) for s in select(stored, 0, given_, 1)] == ["ttfb:delay=1,attempt=2"]
    assert select(stored, 0, given_, 2) == []


@pytest.mark.parametrize(
    ("stored", "given_", "index", "expected"),
    [
        ((), [], 0, 1),
        ((), ["close:events=1"], 0, 1),
        ((), ["close:events=1,attempt=1"], 0, 2),
        ((), ["close:events=1,attempt=1", "reset:events=2,attempt=3"], 0, 4),
        (("close:events=1,attempt=2",), [], 0, 3),
        (("close:events=1,attempt=2",), ["reset:events=1,attempt=4"], 0, 5),
        ((), ["close:events=1,attempt=1,interaction=1"], 0, 1),
        ((), ["close:events=1,attempt=1,interaction=1"], 1, 2),
        ((), ["close:events=1,attempt=1,path=/v1/other"], 0, 1),
        ((), ["close:events=1,attempt=1,path=/v1/chat/*"], 0, 2),
        ((), ["close:events=1,attempt=2,p=0"], 0, 3),
        (("not a fault",), ["close:events=1,attempt=1"], 0, 2),
    ],
)
def test_servings_is_one_more_than_the_largest_attempt_named(
    stored: tuple[str, ...], given_: list[str], index: int, expected: int
) -> None:
    """Only faults that select the interaction (interaction=, path=) count; p= does not
    change how many servings are allowed (the draw is per serving)."""
    it = interaction(faults=stored)
    assert servings(it, index, [parse(g) for g in given_]) == expected


@given(st.lists(st.integers(1, 1000), max_size=5))
def test_servings_property(attempts: list[int]) -> None:
    """For any attempts named, servings = max + 1 (1 without any)."""
    specs = [parse(f"hang:events=1,attempt={n}") for n in attempts]
    assert servings(IT, 0, specs) == max(attempts, default=0) + 1


def test_websocket_faults_select_by_attempt_too() -> None:
    """The WebSocket planner uses the same selectors: the first upgrade is cut, the second
    replays the whole session."""
    it = ws_interaction(realtime_turns())
    assert it.websocket is not None
    faults = [parse("truncate:events=1,attempt=1")]
    first = ws_faults.plan(it, 0, faults=faults, replay_count=0)
    second = ws_faults.plan(it, 0, faults=faults, replay_count=1)
    assert first is not None and second is not None
    assert len(first[0].messages) < len(it.websocket.messages)
    assert second == ws_faults.plan(it, 0)
