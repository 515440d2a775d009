"""A replay schedule as bytes: how the proxy hands a schedule to its origin in another process.

The CLI's mitmproxy shell matches requests in the proxy process and runs the replay origin in a
child process (:mod:`replayproxy._engine.origin_process`), so the schedule travels to it in the
forwarded request's body. One msgpack array, a format number first::

    [1, method, arrived | nil, head | nil, [[at_ns, data], ...], [finish_at_ns, finish_kind]]
    head = [at_ns, status, reason, [[name, value], ...]]

``arrived`` is when the request reached replayproxy, in ``time.monotonic()`` seconds (one clock
for every process on the machine). :func:`unpack` checks every field and raises
:class:`ScheduleWireError` with one line on anything else: the bytes come from a socket.
"""

from __future__ import annotations

from typing import Any

import msgpack

from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._errors import ReplayProxyError

__all__ = ["FORMAT", "Packed", "ScheduleWireError", "pack", "unpack"]

FORMAT = 1

Packed = tuple[Schedule, str, float | None]
"""What :func:`unpack` returns: the schedule, the request's method and when it arrived."""


class ScheduleWireError(ReplayProxyError):
    """Bytes that are not a packed schedule of this version."""


def pack(schedule: Schedule, method: str, arrived: float | None) -> bytes:
    head = schedule.head
    obj = [
        FORMAT,
        method,
        arrived,
        None
        if head is None
        else [head.at_ns, head.status, head.reason, [list(h) for h in head.headers]],
        [[w.at_ns, w.data] for w in schedule.writes],
        [schedule.finish.at_ns, schedule.finish.kind.value],
    ]
    packed: bytes = msgpack.packb(obj)  # msgpack >= 1.0: bytes as bin, str as str
    return packed


def unpack(data: bytes) -> Packed:
    try:
        obj = msgpack.unpackb(data)  # msgpack >= 1.0: bin as bytes, str as str, arrays as lists
    except Exception as e:  # msgpack raises several unrelated types for bad input
        raise ScheduleWireError(f"packed schedule is not msgpack ({type(e).__name__})") from None
    if not isinstance(obj, list) or len(obj) != 6:
        raise ScheduleWireError("packed schedule is not a 6-element array")
    if obj[0] != FORMAT:
        raise ScheduleWireError(f"packed schedule format {obj[0]!r}, this origin reads {FORMAT}")
    _, method, arrived, head, writes, finish = obj
    if not isinstance(method, str):
        raise ScheduleWireError("packed schedule: method is not a string")
    if arrived is not None and (isinstance(arrived, bool) or not isinstance(arrived, float)):
        raise ScheduleWireError("packed schedule: arrival time is not a float")
    return Schedule(_head(head), _writes(writes), _finish(finish)), method, arrived


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScheduleWireError(f"packed schedule: {what} is not a non-negative integer")
    return value


def _head(head: Any) -> Head | None:
    if head is None:
        return None
    if not isinstance(head, list) or len(head) != 4:
        raise ScheduleWireError("packed schedule: head is not a 4-element array")
    at_ns, status, reason, headers = head
    if not isinstance(reason, str) or not isinstance(headers, list):
        raise ScheduleWireError("packed schedule: head reason or headers malformed")
    pairs = []
    for h in headers:
        if not (isinstance(h, list) and len(h) == 2 and all(isinstance(x, bytes) for x in h)):
            raise ScheduleWireError("packed schedule: a header is not a pair of byte strings")
        pairs.append((h[0], h[1]))
    return Head(_int(at_ns, "head offset"), _int(status, "status"), reason, tuple(pairs))


def _writes(writes: Any) -> tuple[Write, ...]:
    if not isinstance(writes, list):
        raise ScheduleWireError("packed schedule: writes are not an array")
    out = []
    for w in writes:
        if not (isinstance(w, list) and len(w) == 2 and isinstance(w[1], bytes)):
            raise ScheduleWireError("packed schedule: a write is not [offset, bytes]")
        out.append(Write(_int(w[0], "write offset"), w[1]))
    return tuple(out)


def _finish(finish: Any) -> Finish:
    if not (isinstance(finish, list) and len(finish) == 2):
        raise ScheduleWireError("packed schedule: finish is not [offset, kind]")
    try:
        kind = FinishKind(finish[1])
    except ValueError:
        raise ScheduleWireError(f"packed schedule: unknown finish {finish[1]!r}") from None
    return Finish(_int(finish[0], "finish offset"), kind)
