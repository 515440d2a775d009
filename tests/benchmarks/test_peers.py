"""The peer comparison's figures (benchmarks/_peers.py): SSE events, not frames, are timed."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from hypothesis import given

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _peers import Seen, event_offsets, measure
from _streams import BenchStream

from replayproxy.testing import MS
from replayproxy.testing.strategies import cuts

# Three frames: one event, two events coalesced in one frame, one event cut across two frames.
STREAM = BenchStream(
    "s",
    b"{}",
    10 * MS,
    (
        (100 * MS, b"data: a\n\n"),
        (130 * MS, b"data: b\n\ndata: c\n\n"),
        (150 * MS, b"data: d"),
        (170 * MS, b"\n\n"),
    ),
)
BODY = b"".join(d for _, d in STREAM.frames)


def test_events_take_the_offset_of_the_frame_that_ends_them() -> None:
    """Coalesced events share their frame's offset; a cut event ends with its last piece."""
    assert event_offsets(STREAM) == [100 * MS, 130 * MS, 130 * MS, 170 * MS]


def test_a_faithful_replay_has_no_error_and_reads_equal_writes() -> None:
    """Reads at the recorded offsets, one per frame: identical, exact, zero errors."""
    t0 = 5_000 * MS
    reads = tuple((t0 + off, len(d)) for off, d in STREAM.frames)
    stats = measure(STREAM, [Seen(t0, reads, BODY)])
    assert (stats.runs, stats.identical, stats.exact) == (1, 1, 1)
    assert stats.first_errors_ns == [0]
    assert stats.gap_errors_ns == [0, 0, 0]


def test_a_whole_body_read_at_once_shows_the_lost_timing() -> None:
    """One read of the whole body 1 ms after sending: bytes identical, reads != writes, the
    first event 99 ms early and every recorded gap lost."""
    stats = measure(STREAM, [Seen(0, ((1 * MS, len(BODY)),), BODY)])
    assert (stats.identical, stats.exact) == (1, 0)
    assert stats.first_errors_ns == [99 * MS]
    assert stats.gap_errors_ns == [30 * MS, 0, 40 * MS]
    assert stats.row(len(STREAM.frames))[:2] == ["yes", "no (1 reads for 4 frames)"]


def test_re_serialized_events_are_timed_but_not_identical() -> None:
    """Events rewritten (as Reel does) are still timed; the bytes are not identical."""
    body = b"data:a\n\ndata:b\n\ndata:c\n\ndata:d\n\n"
    reads = ((100 * MS, 8), (130 * MS, 16), (170 * MS, 8))
    stats = measure(STREAM, [Seen(0, reads, body)])
    assert (stats.runs, stats.identical, stats.exact) == (1, 0, 0)
    assert stats.gap_errors_ns == [0, 0, 0]
    # Other bytes in the very same reads (same lengths) are still not "reads = writes".
    same_cuts = tuple((off, len(d)) for off, d in STREAM.frames)
    stats = measure(STREAM, [Seen(0, same_cuts, BODY.upper().replace(b"DATA", b"data"))])
    assert (stats.runs, stats.identical, stats.exact) == (1, 0, 0)


def test_a_missing_event_is_an_error_not_a_figure() -> None:
    """A body with fewer events than recorded is reported, not measured."""
    stats = measure(STREAM, [Seen(0, ((1, 9),), b"data: a\n\n")])
    assert stats.runs == 0 and stats.errors == ["1 events read, 4 recorded"]


@given(cuts(len(BODY)))
def test_any_split_of_the_reads_times_every_event(cuts: list[int]) -> None:
    """However the body is split into reads, every event gets an arrival, the body is
    identical, and reads equal writes exactly when the cuts are the frame boundaries."""
    bounds = [0, *cuts, len(BODY)]
    reads = tuple((i * MS, b - a) for i, (a, b) in enumerate(itertools.pairwise(bounds)))
    stats = measure(STREAM, [Seen(0, reads, BODY)])
    assert (stats.runs, stats.identical) == (1, 1)
    assert len(stats.gap_errors_ns) == 3
    frame_cuts, pos = [], 0
    for _, d in STREAM.frames[:-1]:
        pos += len(d)
        frame_cuts.append(pos)
    assert stats.exact == (cuts == frame_cuts)
