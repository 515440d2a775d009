"""The packed schedule the proxy hands to its origin process: round trip, and one clear error
for bytes that are not one."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.schedule.codec import FORMAT, ScheduleWireError, pack, unpack
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._errors import ReplayProxyError

_offsets = st.integers(min_value=0, max_value=2**63 - 1)
_heads = st.none() | st.builds(
    Head,
    _offsets,
    st.integers(min_value=100, max_value=599),
    st.text(max_size=20),
    st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=40)), max_size=5).map(tuple),
)
_schedules = st.builds(
    Schedule,
    _heads,
    st.lists(st.builds(Write, _offsets, st.binary(max_size=64)), max_size=20).map(tuple),
    st.builds(Finish, _offsets, st.sampled_from(list(FinishKind))),
)
_arrivals = st.none() | st.floats(allow_nan=False, allow_infinity=False)


@given(_schedules, st.sampled_from(["GET", "POST", "x"]), _arrivals)
def test_unpack_returns_exactly_what_was_packed(
    schedule: Schedule, method: str, arrived: float | None
) -> None:
    assert unpack(pack(schedule, method, arrived)) == (schedule, method, arrived)


def test_a_stream_keeps_every_write_and_the_header_bytes() -> None:
    schedule = Schedule(
        Head(150_000_000, 200, "OK", ((b"content-type", b"text/event-stream"),)),
        (Write(190_000_000, b"data: {\xc3"), Write(191_000_000, b"\xa9}\n\n")),
        Finish(2_000_000_000, FinishKind.RESET),
    )
    got, method, arrived = unpack(pack(schedule, "POST", 12.5))
    assert got.writes == schedule.writes
    assert got.head == schedule.head
    assert got.finish.kind is FinishKind.RESET
    assert (method, arrived) == ("POST", 12.5)


def _packed(*fields: object) -> bytes:
    data: bytes = msgpack.packb(list(fields), use_bin_type=True)
    return data


_GOOD = [FORMAT, "GET", None, None, [], [0, "complete"]]


_END = [0, "complete"]
_NN = "is not a non-negative integer"


def _bad(head: object = None, writes: object = (), finish: object = _END) -> bytes:
    """A packed schedule, version and method right, with these fields."""
    return _packed(FORMAT, "GET", None, head, list(writes) if writes == () else writes, finish)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\xc1", "is not msgpack (FormatError)"),
        (_packed(*_GOOD[:5]), "is not a 6-element array"),
        (_packed(2, *_GOOD[1:]), "format 2, this origin reads 1"),
        (_packed(FORMAT, 7, *_GOOD[2:]), ": method is not a string"),
        (_packed(FORMAT, "GET", 3, *_GOOD[3:]), ": arrival time is not a float"),
        (_packed(FORMAT, "GET", True, *_GOOD[3:]), ": arrival time is not a float"),
        (_bad(head=[0, 200, "OK"]), ": head is not a 4-element array"),
        (_bad(head=[0, 200, 5, []]), ": head reason or headers malformed"),
        (_bad(head=[0, 200, "OK", {}]), ": head reason or headers malformed"),
        (_bad(head=[0, 200, "OK", [["a", "b"]]]), ": a header is not a pair of byte strings"),
        (_bad(head=[-1, 200, "OK", []]), f": head offset {_NN}"),
        (_bad(head=[0, "200", "OK", []]), f": status {_NN}"),
        (_bad(writes=[[0, "text"]]), ": a write is not [offset, bytes]"),
        (_bad(writes=[[True, b"x"]]), f": write offset {_NN}"),
        (_bad(writes={}), ": writes are not an array"),
        (_bad(finish=[0, "explode"]), ": unknown finish 'explode'"),
        (_bad(finish=[0]), ": finish is not [offset, kind]"),
        (_bad(finish=[-5, "complete"]), f": finish offset {_NN}"),
    ],
)
def test_malformed_bytes_are_one_clear_error(data: bytes, says: str) -> None:
    """Each malformed field gets its own exact one-line message."""
    with pytest.raises(ScheduleWireError) as caught:
        unpack(data)
    assert str(caught.value) == "packed schedule" + (says if says[0] == ":" else " " + says)
    assert isinstance(caught.value, ReplayProxyError)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_unpack_or_fail_with_the_wire_error(data: bytes) -> None:
    try:
        schedule, method, _ = unpack(data)
    except ScheduleWireError:
        return
    assert isinstance(schedule, Schedule) and isinstance(method, str)
