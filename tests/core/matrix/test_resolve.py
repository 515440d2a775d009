"""A cell's concrete faults on a cassette (core/matrix/resolve.py): symbols resolved per
interaction, non-streams left out, skips with their reason, and every concrete spec planning on
the recorded stream (shipped cassettes and the simulator's real streams)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._core.faults import parse, plan
from replayproxy._core.faults.provider import terminal_index
from replayproxy._core.matrix import SETS, Cell, Resolved, cells, resolve
from replayproxy._core.wire.events import event_spans
from replayproxy.testing import (
    JSON_HEADERS,
    PROVIDER_HOSTS,
    STREAMS,
    cassette,
    interaction,
    sse_frames,
    stream_interaction,
    ws_interaction,
    ws_text,
)
from replayproxy.testing import strategies as rst

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "cassettes").glob("*.cassette"))
SIMULATED = sorted(n for n, s in STREAMS.items() if s.sse or "bedrock" in n)


def _models() -> Interaction:
    return interaction(
        [b'{"data": []}'], headers=JSON_HEADERS, url="https://api.openai.com/v1/models"
    )


def _check(c: Cell, cas: Cassette) -> Resolved:
    """Resolve ``c`` and plan every concrete spec on its interaction: none may raise."""
    r = resolve(c, cas)
    assert (r.faults == ()) == (r.skipped is not None), r
    by_index: dict[int, list[str]] = {}
    for text in r.faults:
        spec = parse(text)
        by_index.setdefault(spec.integer("interaction"), []).append(text)
    for index, texts in by_index.items():
        plan(cas.interactions[index], index, speed=0, faults=[parse(t) for t in texts])
    return r


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_cell_resolves_and_plans_on_the_shipped_cassettes(path: Path) -> None:
    """Each cell of ``all`` resolves on each shipped cassette to specs that parse and plan on
    the recorded stream; none is skipped (every shipped cassette is one full stream)."""
    cas = store.load(path)
    assert SHIPPED, "no shipped cassettes found"
    for c in SETS["all"]:
        r = _check(c, cas)
        assert r.skipped is None, (c.id, r.skipped)
        assert all(",interaction=0" in f or f.endswith(":interaction=0") for f in r.faults)


@pytest.mark.parametrize("name", SIMULATED)
def test_every_cell_resolves_or_skips_on_the_simulators_streams(name: str) -> None:
    """On each real provider stream the simulator serves (SSE and AWS event-stream), every
    cell resolves and plans, or is skipped with a reason."""
    cas = cassette(stream_interaction(name))
    for c in SETS["all"]:
        r = _check(c, cas)
        if r.skipped is not None:
            assert r.skipped.startswith(f"no event stream can take {c.spec}: interaction 0: ")


def test_symbols_are_resolved_per_interaction() -> None:
    """In a cassette of a JSON call and two streams, each stream gets its own concrete spec
    with its index: its middle, its terminal event, its provider's overloaded status; the
    JSON call gets none."""
    chat, anthropic = stream_interaction("openai-chat-text"), stream_interaction("anthropic-text")
    cas = cassette(_models(), chat, anthropic)
    bodies = [
        (i.response.body, i.response.header("content-type"))
        for i in (chat, anthropic)
        if i.response
    ]
    spans = [event_spans(body, ctype) for body, ctype in bodies]
    terminals = [terminal_index(b, s) for (b, _), s in zip(bodies, spans, strict=True)]
    assert resolve(Cell("cuts", "reset:events=middle", "incomplete"), cas).faults == (
        f"reset:events={len(spans[0]) // 2},interaction=1",
        f"reset:events={len(spans[1]) // 2},interaction=2",
    )
    assert resolve(Cell("cuts", "truncate:events=before-terminal", "incomplete"), cas).faults == (
        f"truncate:events={terminals[0]},interaction=1",
        f"truncate:events={terminals[1]},interaction=2",
    )
    assert resolve(Cell("errors", "status:code=overloaded", "provider-error"), cas).faults == (
        "status:code=503,interaction=1",
        "status:code=529,interaction=2",
    )
    content = resolve(Cell("events", "drop:event=content", "altered"), cas).faults
    for text, t in zip(content, terminals, strict=True):
        n = parse(text).integer("event")
        assert t is not None and 0 < n < t


def test_faults_applied_together_stay_together() -> None:
    """A ``+`` cell gives each stream all its faults; the keepalive cell has keepalives to send
    during the short stall, even at speed 0."""
    cas = cassette(stream_interaction("openai-chat-text"))
    c = next(c for c in SETS["stalls"] if "keepalive" in c.spec)
    r = resolve(c, cas)
    assert [f.partition(":")[0] for f in r.faults] == ["stall", "keepalive"]
    schedule = plan(cas.interactions[0], 0, speed=0, faults=[parse(f) for f in r.faults])
    assert schedule.body.count(b": keepalive") >= 2


def test_a_cassette_without_streams_skips_every_cell() -> None:
    """JSON responses and WebSocket sessions are no HTTP event stream: every cell is skipped,
    saying so."""
    ws = ws_interaction([ws_text(10, False, {"type": "session.created"})])
    cas = cassette(_models(), ws)
    for c in SETS["all"]:
        assert resolve(c, cas) == Resolved((), "no HTTP event stream in the cassette")


def test_a_stream_too_short_for_the_cell_is_skipped_with_why() -> None:
    """A stream of one event (the terminal one) cannot be cut after its first event nor have
    a content event edited; the reason names the interaction and what is missing."""
    done = interaction([b"data: [DONE]\n\n"])
    cas = cassette(_models(), done)
    r = resolve(cells("reset:events=1")[0], cas)
    assert r.faults == ()
    assert r.skipped == (
        "no event stream can take reset:events=1: interaction 1: "
        "events=1 is not before the terminal event"
    )
    r = resolve(cells("drop:event=content")[0], cas)
    assert r.skipped is not None and "interaction 1: no content event (1 events)" in r.skipped
    # events=0 still applies: the cut before the first event.
    assert resolve(cells("reset:events=0")[0], cas).faults == ("reset:events=0,interaction=1",)


def test_a_stream_without_a_terminal_event_skips_before_terminal_only() -> None:
    """Generic SSE with no terminal event: ``before-terminal`` is skipped, the middle is not."""
    cas = cassette(interaction(sse_frames(6)))
    assert resolve(cells("truncate:events=before-terminal")[0], cas).skipped == (
        "no event stream can take truncate:events=before-terminal: interaction 0: no terminal event"
    )
    assert resolve(cells("truncate:events=middle")[0], cas).faults == (
        "truncate:events=3,interaction=0",
    )


def test_a_fault_that_cannot_plan_is_left_out_for_that_stream() -> None:
    """A cell the planner refuses on one stream (the in-band error of an API without one) is
    left out there and kept on the others."""
    unknown_api = interaction(sse_frames(6), url="https://llm.example.test/v1/stream")
    cas = cassette(unknown_api, stream_interaction("anthropic-text"))
    r = resolve(cells("error:events=1")[0], cas)
    assert r.faults == ("error:events=1,interaction=1",)


def test_the_users_selectors_are_kept() -> None:
    """A spec that names its interaction applies there only; ``path=`` picks the streams."""
    chat, anthropic = stream_interaction("openai-chat-text"), stream_interaction("anthropic-text")
    cas = cassette(chat, anthropic)
    assert resolve(cells("reset:events=middle,interaction=1")[0], cas).faults == (
        "reset:events=6,interaction=1",
    )
    assert resolve(cells("linger:path=*/messages")[0], cas).faults == (
        "linger:path=*/messages,interaction=1",
    )
    r = resolve(cells("linger:interaction=5")[0], cas)
    assert r.skipped is not None and "not selected" in r.skipped


_URLS = sorted(
    {PROVIDER_HOSTS[s.provider] + s.path.replace("{model}", "m") for s in STREAMS.values()}
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=rst.sse_streams(max_events=8),
    url=st.sampled_from(_URLS),
    cell=st.sampled_from(SETS["all"]),
)
def test_any_sse_stream_resolves_or_skips_every_cell(
    events: list[bytes], url: str, cell: Cell
) -> None:
    """Property: on any SSE stream (any framing, any provider path) a cell resolves to specs
    that plan, or is skipped with a reason; resolve never raises."""
    _check(cell, cassette(interaction(events, url=url)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cas=rst.cassettes(), cell=st.sampled_from(SETS["all"]))
def test_any_cassette_resolves_or_skips_every_cell(cas: Cassette, cell: Cell) -> None:
    """Property: any valid cassette (nasty bodies, no responses, bad stored faults): resolve
    never raises, and what it returns plans."""
    _check(cell, cas)
