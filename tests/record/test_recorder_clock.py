"""The recorder's timestamps, checked exactly with a fake clock: every offset is measured from
the request hook, and how a flow ended depends on whether its head had arrived."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mitmproxy.test import taddons, tflow

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind, Interaction
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy.testing import MS


class FakeClock:
    """Monotonic nanoseconds that move only when a test says so."""

    def __init__(self, start: int = 987_654_321_000) -> None:
        self.now = start  # far from 0: an offset not taken from the request would show

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += round(ms * MS)


@contextmanager
def recorder(path: Path) -> Iterator[tuple[Recorder, FakeClock]]:
    clock = FakeClock()
    rec = Recorder(clock=clock)
    with taddons.context(rec) as tctx:
        tctx.configure(rec, replayproxy_record=str(path))
        rec.running()
        yield rec, clock
        rec.done()


def only(path: Path) -> Interaction:
    (interaction,) = store.load(path).interactions
    return interaction


def test_head_frames_and_end_are_offsets_from_the_request(tmp_path: Path) -> None:
    """Head, each frame and the end carry the exact nanoseconds since the request hook."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        flow = tflow.tflow(resp=True)
        clock.advance(3)  # time before the request hook does not count
        rec.request(flow)
        clock.advance(120.5)
        rec.responseheaders(flow)
        tap: Any = flow.response.stream
        for gap, chunk in [(0.25, b"a"), (40, b"b"), (0, b"c"), (1000, b"")]:
            clock.advance(gap)
            assert tap(chunk) == chunk
        clock.advance(7)
        rec.response(flow)
    x = only(path)
    assert x.response is not None
    assert x.response.head_offset_ns == 120_500_000
    assert [(f.offset_ns, f.data) for f in x.response.frames] == [
        (120_750_000, b"a"),
        (160_750_000, b"b"),
        (160_750_000, b"c"),
    ]
    assert (x.end.kind, x.end.offset_ns) == (EndKind.COMPLETE, 1_167_750_000)


def test_each_flow_has_its_own_zero(tmp_path: Path) -> None:
    """Two interleaved flows: each one's offsets start at its own request."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        first, second = tflow.tflow(resp=True), tflow.tflow(resp=True)
        rec.request(first)
        clock.advance(50)
        rec.request(second)
        clock.advance(10)
        rec.responseheaders(second)
        rec.responseheaders(first)
        clock.advance(5)
        rec.response(first)
        rec.response(second)
    a, b = store.load(path).interactions
    assert a.response is not None and b.response is not None
    assert (a.response.head_offset_ns, a.end.offset_ns) == (60 * MS, 65 * MS)
    assert (b.response.head_offset_ns, b.end.offset_ns) == (10 * MS, 15 * MS)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("peer closed connection without sending complete message body", EndKind.INCOMPLETE),
        ("Connection reset by peer", EndKind.RESET),
        ("Client disconnected.", EndKind.CLIENT_GONE),
        ("something odd", EndKind.ERROR),
    ],
)
def test_an_error_after_the_head_but_before_any_body_keeps_the_response(
    tmp_path: Path, message: str, kind: EndKind
) -> None:
    """The head arrived, then the flow failed before a single body byte: the interaction has
    its response (no frames) and ends as the error says, never as no_response."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        clock.advance(30)
        rec.responseheaders(flow)
        clock.advance(2)
        flow.error = tflow.terr(message)
        rec.error(flow)
    x = only(path)
    assert x.response is not None and x.response.frames == ()
    assert x.response.status == flow.response.status_code
    assert (x.end.kind, x.end.offset_ns, x.end.message) == (kind, 32 * MS, message)


def test_an_error_before_the_head_is_no_response_at_its_offset(tmp_path: Path) -> None:
    """Without a head, any error is no_response, at the offset it happened."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        flow = tflow.tflow()
        rec.request(flow)
        clock.advance(15)
        flow.error = tflow.terr("Connection reset by peer")
        rec.error(flow)
    x = only(path)
    assert x.response is None
    assert (x.end.kind, x.end.offset_ns) == (EndKind.NO_RESPONSE, 15 * MS)


def test_shutdown_stamps_flows_in_flight_at_that_moment(tmp_path: Path) -> None:
    """A flow still streaming at shutdown ends as error at the shutdown's offset."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        clock.advance(4)
        rec.responseheaders(flow)
        flow.response.stream(b"x")
        clock.advance(96)
    x = only(path)
    assert (x.end.kind, x.end.offset_ns) == (EndKind.ERROR, 100 * MS)
    assert x.response is not None and [f.offset_ns for f in x.response.frames] == [4 * MS]


def test_a_buffered_body_is_stamped_when_the_response_completes(tmp_path: Path) -> None:
    """A response that was not streamed gets one frame at the response hook's offset."""
    path = tmp_path / "c.cassette"
    with recorder(path) as (rec, clock):
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        clock.advance(42)
        rec.response(flow)
    x = only(path)
    assert x.response is not None
    assert [(f.offset_ns, f.data) for f in x.response.frames] == [
        (42 * MS, flow.response.raw_content)
    ]
    assert x.response.head_offset_ns == 42 * MS and x.end.offset_ns == 42 * MS
