"""Property tests: fault invariants hold for any recorded byte split, seed and position."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.faults import parse, plan
from replayproxy._core.schedule.model import Schedule
from replayproxy._core.wire.sse import parse_events
from replayproxy.testing._streams import STREAMS

NAMES = [
    "openai-chat-text",
    "openai-responses",
    "anthropic-text",
    "anthropic-tool-use",
    "gemini-text",
]


@st.composite
def recordings(draw: st.DrawFn, names: list[str] = NAMES) -> Interaction:
    """A provider stream recorded with arbitrary frame boundaries and gaps."""
    s = STREAMS[draw(st.sampled_from(names))]
    body = s.body
    cuts = sorted(draw(st.sets(st.integers(1, len(body) - 1), max_size=30)))
    bounds = [0, *cuts, len(body)]
    gaps = draw(st.lists(st.integers(0, 50_000_000), min_size=len(bounds), max_size=len(bounds)))
    t, frames = 0, []
    for (a, b), gap in zip(itertools.pairwise(bounds), gaps, strict=False):
        t += gap
        frames.append(Frame(t, body[a:b]))
    path = {"anthropic": "/v1/messages", "gemini": "/v1beta/models/g:streamGenerateContent"}.get(
        s.provider, s.path
    )
    req = Request("POST", "https://example.test" + path)
    resp = Response(200, "OK", headers=s.headers, head_offset_ns=0, frames=tuple(frames))
    return Interaction(req, resp, Ending(EndKind.COMPLETE, t))


def ordered(s: Schedule) -> bool:
    times = [s.head.at_ns if s.head else 0, *(w.at_ns for w in s.writes)]
    return times == sorted(times) and s.finish.at_ns >= times[-1]


def events(body: bytes) -> list[tuple[str, str]]:
    return [(e.event, e.data) for e in parse_events(body)]


@settings(max_examples=60, deadline=None)
@given(
    it=recordings(),
    mode=st.sampled_from(["bytes=1", "bytes=5", "at=utf8", "at=midline", "at=crlf", "at=random"]),
    seed=st.integers(0, 2**32),
    speed=st.sampled_from([0.0, 1.0, 3.0]),
)
def test_split_never_changes_bytes(it: Interaction, mode: str, seed: int, speed: float) -> None:
    """split keeps the exact body bytes and the timeline order, only adding write boundaries."""
    sched = plan(it, 0, speed=speed, faults=[parse(f"split:{mode},seed={seed}")])
    assert sched.body == (it.response.body if it.response else b"")
    assert ordered(sched)
    assert len(sched.writes) >= len(it.frames)


@settings(max_examples=60, deadline=None)
@given(
    it=recordings(),
    ms=st.floats(0, 200),
    dist=st.sampled_from(["uniform", "lognormal"]),
    seed=st.integers(0, 1000),
    count=st.integers(0, 5),
)
def test_jitter_never_changes_bytes_and_is_reproducible(
    it: Interaction, ms: float, dist: str, seed: int, count: int
) -> None:
    """jitter keeps every write's bytes in order, and the same seed gives the same times."""
    spec = parse(f"jitter:ms={ms},dist={dist},seed={seed}")
    sched = plan(it, 3, faults=[spec], replay_count=count)
    assert [w.data for w in sched.writes] == [f.data for f in it.frames]
    assert ordered(sched)
    assert sched == plan(it, 3, faults=[spec], replay_count=count)


@settings(max_examples=60, deadline=None)
@given(it=recordings(), data=st.data())
def test_event_edits_change_exactly_one_event(it: Interaction, data: st.DataObject) -> None:
    """drop/duplicate/reorder change the event list by exactly that one operation."""
    original = events(it.response.body if it.response else b"")
    n = data.draw(st.integers(0, len(original) - 2))
    dropped = events(plan(it, 0, faults=[parse(f"drop:event={n}")]).body)
    assert dropped == original[:n] + original[n + 1 :]
    duplicated = events(plan(it, 0, faults=[parse(f"duplicate:event={n}")]).body)
    assert duplicated == original[: n + 1] + original[n:]
    swapped = events(plan(it, 0, faults=[parse(f"reorder:event={n}")]).body)
    assert swapped == [*original[:n], original[n + 1], original[n], *original[n + 2 :]]
    for spec in ("drop", "duplicate", "reorder"):
        assert ordered(plan(it, 0, faults=[parse(f"{spec}:event={n}")]))


@settings(max_examples=40, deadline=None)
@given(it=recordings(), data=st.data())
def test_corrupt_changes_only_that_event(it: Interaction, data: st.DataObject) -> None:
    """corrupt:event=N leaves every other event identical and event N a prefix of itself."""
    original = events(it.response.body if it.response else b"")
    n = data.draw(st.integers(0, len(original) - 1))
    if len(original[n][1]) < 2:
        return
    got = events(plan(it, 0, faults=[parse(f"corrupt:event={n}")]).body)
    assert got[:n] == original[:n] and got[n + 1 :] == original[n + 1 :]
    assert original[n][1].startswith(got[n][1]) and got[n][1] != original[n][1]


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(
        alphabet=st.characters(
            min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=("Cs",)
        ),
        min_size=1,
        max_size=40,
    ),
)
def test_split_utf8_cuts_inside_every_character(text: str) -> None:
    """split:at=utf8 puts a write boundary inside every multi-byte character."""
    body = b"data: " + text.encode() + b"\n\n"
    req = Request("POST", "https://api.openai.com/v1/chat/completions")
    resp = Response(
        200, headers=((b"content-type", b"text/event-stream"),), frames=(Frame(0, body),)
    )
    sched = plan(
        Interaction(req, resp, Ending(EndKind.COMPLETE, 0)),
        0,
        faults=[parse("split:at=utf8,gap=0")],
    )
    assert sched.body == body
    ends, pos = set(), 0
    for w in sched.writes:
        pos += len(w.data)
        ends.add(pos)
    pos = 6
    for ch in text:
        size = len(ch.encode())
        assert pos + 1 in ends
        pos += size
    assert "".join(parse_events(sched.body)[0].data) == text


@settings(max_examples=40, deadline=None)
@given(it=recordings(), every=st.floats(0.01, 0.05))
def test_keepalive_only_adds_whole_keepalives(it: Interaction, every: float) -> None:
    """keepalive never splits an event: removing its writes gives back the recorded body."""
    sched = plan(it, 0, faults=[parse(f"keepalive:every={every}")])
    ka = {b": keepalive\n\n", b": keepalive\r\n\r\n", b'event: ping\ndata: {"type": "ping"}\n\n'}
    assert b"".join(w.data for w in sched.writes if w.data not in ka) == it.response.body  # type: ignore[union-attr]
    assert [e for e in events(sched.body) if e[0] != "ping"] == [
        e
        for e in events(it.response.body)
        if e[0] != "ping"  # type: ignore[union-attr]
    ]
    assert ordered(sched)


@settings(max_examples=40, deadline=None)
@given(it=recordings(), seed=st.integers(0, 100), count=st.integers(0, 3))
def test_seeded_faults_are_reproducible(it: Interaction, seed: int, count: int) -> None:
    """The same specs, seed, interaction and replay_count give the same schedule."""
    specs = [
        parse(f"split:at=random,seed={seed}"),
        parse(f"reset:p=0.5,seed={seed}"),
        parse(f"jitter:seed={seed}"),
    ]
    assert plan(it, 1, faults=specs, replay_count=count) == plan(
        it, 1, faults=specs, replay_count=count
    )


@settings(max_examples=40, deadline=None)
@given(
    it=recordings(),
    spec=st.sampled_from(
        [
            "stall:for=0.5",
            "stall:for=0.1,time=0.05",
            "ttfb:delay=0.2",
            "throttle:bps=5000",
            "coalesce",
            "coalesce:window=0.03",
            "jitter:dist=lognormal,ms=5",
        ]
    ),
    speed=st.sampled_from([0.0, 1.0, 2.5]),
)
def test_timing_faults_keep_bytes_and_order(it: Interaction, spec: str, speed: float) -> None:
    """Timing faults and coalesce deliver exactly the recorded bytes, in order, at any speed."""
    sched = plan(it, 0, speed=speed, faults=[parse(spec)])
    assert sched.body == it.response.body  # type: ignore[union-attr]
    assert ordered(sched)


@settings(max_examples=40, deadline=None)
@given(it=recordings(), data=st.data())
def test_cut_faults_send_a_prefix(it: Interaction, data: st.DataObject) -> None:
    """reset/close/hang/truncate at any byte position send exactly that prefix of the body."""
    body = it.response.body  # type: ignore[union-attr]
    n = data.draw(st.integers(0, len(body)))
    name = data.draw(st.sampled_from(["reset", "close", "hang", "truncate"]))
    sched = plan(it, 0, faults=[parse(f"{name}:bytes={n}")])
    assert sched.body == body[:n]
    assert sched.finish.kind.value == {"truncate": "complete"}.get(name, name)
    assert ordered(sched)
