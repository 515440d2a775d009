"""Cassette diffs: interaction, frame and event differences, aligned across inserts/removals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, EndKind, Frame
from replayproxy._core.tools.diff import Timing, diff, opcodes
from replayproxy._core.tools.edit import Edits, apply
from replayproxy.testing.strategies import cassettes
from tests.cassette.samples import sample_cassette


@given(cassettes())
def test_a_cassette_has_no_difference_with_itself(c: Cassette) -> None:
    """diff(c, c) is empty for any cassette."""
    assert diff(c, c) == []


def test_dropped_event_shows_at_event_and_frame_level() -> None:
    """Dropping event 1 shows as a removed event and a removed frame, nothing else."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), drop_events=(1,)))
    found = {(d.level, d.what, d.a_index) for d in diff(a, b)}
    assert found == {
        ("frame", "frame count", 0),
        ("frame", "frame 1", 0),
        ("event", "event count", 0),
        ("event", "event 1", 0),
    }
    ev = next(d for d in diff(a, b) if d.what == "event 1")
    assert ev.a.startswith('\'data: {"n":1') and ev.b == ""


def test_resplit_shows_only_frames() -> None:
    """A re-split stream has the same events: only frame differences are reported."""
    a = sample_cassette()
    b = apply(a, Edits(select=(1,), rechunk="events"))
    levels = {d.level for d in diff(a, b)}
    assert levels == {"frame"}


def test_head_end_and_faults_differences() -> None:
    """Status, end kind/time and faults each give one interaction-level difference."""
    a = sample_cassette()
    x = a.interactions[0]
    assert x.response is not None
    y = replace(x, response=replace(x.response, status=500), faults=("hang",))
    b = apply(a.with_interactions((y, *a.interactions[1:])), Edits(select=(0,), end=EndKind.RESET))
    got = {d.what: (d.a, d.b) for d in diff(a, b)}
    assert got == {"status": ("200", "500"), "end": ("complete", "reset"),
                   "faults": ("(none)", "hang")}  # fmt: skip


def test_removed_interaction_does_not_shift_the_rest() -> None:
    """Deleting interaction 0 is reported once, as only in A; the others still pair up."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), delete=True))
    (d,) = diff(a, b)
    assert (d.what, d.a_index, d.b_index) == ("only in A", 0, None)


def test_timing_changes_show_per_frame() -> None:
    """A slower stream reports each frame's old and new time."""
    a = sample_cassette()
    b = apply(a, Edits(select=(0,), speed=0.5))
    times = [(d.what, d.a, d.b) for d in diff(a, b) if d.level == "frame"]
    assert times[0] == ("frame 0 time", "+70ms", "+140ms")
    assert len(times) == 4


# -- two recordings of one stream: timing jitter and re-split frames ----------------------------

import random  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[3] / "cassettes" / "openai-chat-text.cassette"


def rerecorded(c: Cassette, jitter_ns: int, seed: int, resplit: bool = False) -> Cassette:
    """The same stream as a second recording would give it: every time moved by up to
    ``jitter_ns``, and (``resplit``) neighbouring frames coalesced now and then."""
    rnd = random.Random(seed)
    (x,) = c.interactions
    assert x.response is not None
    frames: list[Frame] = []
    for f in x.response.frames:
        t = max(0, f.offset_ns + rnd.randint(-jitter_ns, jitter_ns))
        t = max(t, frames[-1].offset_ns if frames else 0)
        if resplit and frames and rnd.random() < 0.2:
            frames[-1] = Frame(frames[-1].offset_ns, frames[-1].data + f.data)
        else:
            frames.append(Frame(t, f.data))
    response = replace(
        x.response,
        frames=tuple(frames),
        head_offset_ns=x.response.head_offset_ns + rnd.randint(0, jitter_ns),
    )
    end = replace(x.end, offset_ns=x.end.offset_ns + jitter_ns)
    return c.with_interactions((replace(x, response=response, end=end),))


def test_ignore_timing_reduces_a_rerecording_to_its_real_differences() -> None:
    """Jittered, re-split: hundreds of lines; --ignore-timing leaves one 'frame splits' line,
    the first re-split places and a count of the rest, all at frame level."""
    a = store.load(SHIPPED)
    b = rerecorded(a, 3_000_000, seed=1, resplit=True)
    assert len(diff(a, b)) > 50
    d, *places, rest = diff(a, b, Timing(ignore=True))
    assert d.what == "frame splits (same bytes)" and d.a != d.b
    assert len(places) == 5 and all(p.what.endswith("ends at body offset") for p in places)
    assert rest.what.startswith("... and ") and rest.what.endswith(" more re-split places")
    assert {x.level for x in (d, *places, rest)} == {"frame"}


def test_a_real_content_difference_survives_ignore_timing() -> None:
    """A changed byte is still reported with timing ignored."""
    a = store.load(SHIPPED)
    b = rerecorded(a, 3_000_000, seed=2)
    (x,) = b.interactions
    assert x.response is not None
    frames = list(x.response.frames)
    frames[5] = Frame(frames[5].offset_ns, frames[5].data.replace(b"data:", b"data: "))
    b = b.with_interactions((replace(x, response=replace(x.response, frames=tuple(frames))),))
    whats = {d.what for d in diff(a, b, Timing(ignore=True))}
    assert "frame 5" in whats and any(w.startswith("event ") for w in whats)
    assert not any("time" in w for w in whats)


@given(st.integers(0, 5_000_000), st.integers(0, 2**16))
def test_times_within_the_tolerance_are_equal(jitter_ns: int, seed: int) -> None:
    """Jitter within the tolerance gives no difference; the tolerance is inclusive."""
    a = store.load(SHIPPED)
    b = rerecorded(a, jitter_ns, seed)
    assert diff(a, b, Timing(tolerance_ns=jitter_ns)) == []
    if jitter_ns and diff(a, b):
        assert all("time" in d.what for d in diff(a, b))


# Runs of repeated keys: what streams (keep-alive frames) and test cassettes (one request
# recorded many times) are made of, and where a plain longest-block alignment goes wrong.
_KEYS = st.lists(
    st.tuples(st.sampled_from("abc"), st.integers(min_value=1, max_value=15)), max_size=8
).map(lambda runs: [k for k, n in runs for _ in range(n)])


def _tiles(ops: list[tuple[str, int, int, int, int]], a: list[str], b: list[str]) -> bool:
    """The opcodes cover both sequences in order, without gaps, and 'equal' means equal."""
    i = j = 0
    for op, a1, a2, b1, b2 in ops:
        if (a1, b1) != (i, j) or (op == "equal" and a[a1:a2] != b[b1:b2]):
            return False
        i, j = a2, b2
    return (i, j) == (len(a), len(b))


@given(_KEYS, _KEYS)
def test_alignment_is_a_valid_edit_script(a: list[str], b: list[str]) -> None:
    assert _tiles(opcodes(a, b), a, b)


@given(_KEYS, st.integers(min_value=0), st.sampled_from("abcz"))
def test_one_insertion_or_deletion_anywhere_is_one_item(a: list[str], at: int, x: str) -> None:
    """However repetitive the sequence, one item inserted (or deleted) is one opcode of one
    item; everything else is equal."""
    at = at % (len(a) + 1)
    b = [*a[:at], x, *a[at:]]
    for old, new, kind in ((a, b, "insert"), (b, a, "delete")):
        ops = opcodes(old, new)
        assert _tiles(ops, old, new)
        changed = [(op, a2 - a1, b2 - b1) for op, a1, a2, b1, b2 in ops if op != "equal"]
        assert changed == [(kind, 0, 1) if kind == "insert" else (kind, 1, 0)]


@given(_KEYS, _KEYS)
def test_alignment_has_no_empty_opcodes(a: list[str], b: list[str]) -> None:
    """Like difflib's own, every opcode covers at least one item (an empty 'equal' would
    print as a zero-length stretch in the diff)."""
    assert all(a2 - a1 or b2 - b1 for _, a1, a2, b1, b2 in opcodes(a, b))


def test_long_runs_of_one_key_are_not_treated_as_junk() -> None:
    """difflib's autojunk drops items that make up over 1 % of a 200+ item sequence: a
    stream of 300 identical keep-alive frames between two changed ends would come out as
    everything replaced. They stay equal."""
    a = ["start-a", *["ping"] * 300, "end-a"]
    b = ["start-b", *["ping"] * 300, "end-b"]
    ops = opcodes(a, b)
    assert _tiles(ops, a, b)
    assert [(op, a2 - a1) for op, a1, a2, _, _ in ops] == [
        ("replace", 1),
        ("equal", 300),
        ("replace", 1),
    ]
