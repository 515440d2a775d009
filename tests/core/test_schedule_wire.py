"""The packed schedule the proxy hands to its origin process: round trip, and one clear error
for bytes that are not one."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy.core.schedule import Finish, FinishKind, Head, Schedule, Write
from replayproxy.core.schedule_wire import FORMAT, ScheduleWireError, pack, unpack
from replayproxy.errors import ReplayProxyError

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


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\xc1", "not msgpack"),
        (_packed(*_GOOD[:5]), "6-element"),
        (_packed(2, *_GOOD[1:]), "format 2"),
        (_packed(FORMAT, 7, *_GOOD[2:]), "method"),
        (_packed(FORMAT, "GET", 3, *_GOOD[3:]), "arrival"),
        (_packed(FORMAT, "GET", None, [0, 200, "OK"], [], [0, "complete"]), "head"),
        (_packed(FORMAT, "GET", None, [0, 200, "OK", [["a", "b"]]], [], [0, "complete"]), "header"),
        (_packed(FORMAT, "GET", None, [-1, 200, "OK", []], [], [0, "complete"]), "head offset"),
        (_packed(FORMAT, "GET", None, None, [[0, "text"]], [0, "complete"]), "write"),
        (_packed(FORMAT, "GET", None, None, [[True, b"x"]], [0, "complete"]), "write offset"),
        (_packed(FORMAT, "GET", None, None, {}, [0, "complete"]), "writes"),
        (_packed(FORMAT, "GET", None, None, [], [0, "explode"]), "unknown finish"),
        (_packed(FORMAT, "GET", None, None, [], [0]), "finish"),
    ],
)
def test_malformed_bytes_are_one_clear_error(data: bytes, says: str) -> None:
    with pytest.raises(ScheduleWireError, match=says) as caught:
        unpack(data)
    assert isinstance(caught.value, ReplayProxyError)
    assert "\n" not in str(caught.value)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_unpack_or_fail_with_the_wire_error(data: bytes) -> None:
    try:
        schedule, method, _ = unpack(data)
    except ScheduleWireError:
        return
    assert isinstance(schedule, Schedule) and isinstance(method, str)
