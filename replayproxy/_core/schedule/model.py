"""The replay schedule: what the replay origin does, when, for one interaction.

A :class:`Schedule` is a response head, a sequence of body writes and a finish, each stamped
with an *absolute* offset in nanoseconds from the moment the request arrived. Absolute offsets
(rather than a list of sleeps) are what keep long streams free of drift: the executor sleeps
until ``t0 + at_ns`` each time, so a late wake-up never pushes the following writes later. They
also make faults simple to compose: a fault is a pure function ``Schedule -> Schedule``.

Each :class:`Write` is delivered as its own write on the socket (its own HTTP/1.1 chunk), so the
client sees the recorded byte splits.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Header, Interaction, Response

__all__ = [
    "Finish",
    "FinishKind",
    "Head",
    "Schedule",
    "Write",
    "from_interaction",
    "instant_body",
    "scale",
    "to_interaction",
]


class FinishKind(enum.StrEnum):
    """What the origin does after the last write."""

    COMPLETE = "complete"
    """Send the chunked terminator; the response ends cleanly."""
    CLOSE = "close"
    """Close the connection (FIN) without the terminator: an incomplete body."""
    RESET = "reset"
    """Abort the connection with a TCP RST."""
    HANG = "hang"
    """Send nothing more and keep the connection open until the client gives up."""


@dataclass(frozen=True, slots=True)
class Head:
    at_ns: int
    status: int
    reason: str
    headers: tuple[Header, ...]


@dataclass(frozen=True, slots=True)
class Write:
    at_ns: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Finish:
    at_ns: int
    kind: FinishKind


@dataclass(frozen=True, slots=True)
class Schedule:
    """``head`` is ``None`` when no response is sent at all (the connection just finishes)."""

    head: Head | None
    writes: tuple[Write, ...]
    finish: Finish

    @property
    def body(self) -> bytes:
        return b"".join(w.data for w in self.writes)


# How each recorded ending is reproduced. A client that left while recording tells us nothing
# about how the upstream would have ended, so the body stops there, visibly incomplete.
_FINISH_FOR_END = {
    EndKind.COMPLETE: FinishKind.COMPLETE,
    EndKind.RESET: FinishKind.RESET,
    EndKind.INCOMPLETE: FinishKind.CLOSE,
    EndKind.HANG: FinishKind.HANG,
    EndKind.CLIENT_GONE: FinishKind.CLOSE,
    EndKind.NO_RESPONSE: FinishKind.CLOSE,
    EndKind.ERROR: FinishKind.CLOSE,
}


def from_interaction(interaction: Interaction) -> Schedule:
    """The schedule that reproduces a recorded interaction exactly, at recorded speed."""
    resp = interaction.response
    end_kind = _FINISH_FOR_END[interaction.end.kind]
    if resp is None:
        return Schedule(None, (), Finish(max(0, interaction.end.offset_ns), FinishKind.CLOSE))
    head = Head(max(0, resp.head_offset_ns), resp.status, resp.reason, resp.headers)
    writes = tuple(Write(max(head.at_ns, f.offset_ns), f.data) for f in resp.frames)
    last = writes[-1].at_ns if writes else head.at_ns
    return Schedule(head, writes, Finish(max(last, interaction.end.offset_ns), end_kind))


def scale(schedule: Schedule, speed: float) -> Schedule:
    """Divide every offset by ``speed`` (2 = twice as fast); ``speed == 0`` means no waiting."""
    if speed < 0:
        raise ValueError("speed must be >= 0")

    def at(ns: int) -> int:
        return 0 if speed == 0 else round(ns / speed)

    head = None if schedule.head is None else replace(schedule.head, at_ns=at(schedule.head.at_ns))
    writes = tuple(replace(w, at_ns=at(w.at_ns)) for w in schedule.writes)
    return Schedule(head, writes, replace(schedule.finish, at_ns=at(schedule.finish.at_ns)))


# The recorded ending that each finish stands for, when a schedule is written back to a cassette.
_END_FOR_FINISH = {
    FinishKind.COMPLETE: EndKind.COMPLETE,
    FinishKind.CLOSE: EndKind.INCOMPLETE,
    FinishKind.RESET: EndKind.RESET,
    FinishKind.HANG: EndKind.HANG,
}


def to_interaction(schedule: Schedule, original: Interaction) -> Interaction:
    """The interaction that ``schedule`` reproduces: how an edit made with fault functions is
    written back to a cassette (``from_interaction`` -> fault functions -> this).

    What a schedule does not hold comes from ``original``: the request, the response's HTTP
    version, faults, ``recorded_at``. The head gives ``head_offset_ns``/status/reason/headers,
    each write becomes a frame, the finish becomes the :class:`Ending`. An unchanged finish
    keeps the original ending exactly (kind, offset and message), and a changed offset with the
    same finish kind keeps the recorded kind and message, so ``to_interaction(from_interaction(x),
    x) == x`` whenever no frame precedes the head and the end does not precede the last frame.
    """
    if schedule.finish == from_interaction(original).finish:
        end = original.end
    elif _FINISH_FOR_END[original.end.kind] == schedule.finish.kind:
        end = Ending(original.end.kind, schedule.finish.at_ns, original.end.message)
    else:
        end = Ending(_END_FOR_FINISH[schedule.finish.kind], schedule.finish.at_ns)
    head = schedule.head
    if head is None:
        return replace(original, response=None, end=end)
    version = original.response.http_version if original.response else "HTTP/1.1"
    response = Response(
        status=head.status,
        reason=head.reason,
        http_version=version,
        headers=head.headers,
        head_offset_ns=head.at_ns,
        frames=tuple(Frame(w.at_ns, w.data) for w in schedule.writes),
    )
    return replace(original, response=response, end=end)


def instant_body(schedule: Schedule) -> bytes | None:
    """The whole body if ``schedule`` has nothing to time or split, else ``None``.

    That is: a head, at most one write and a clean end, all due at once (``t = 0``), as with
    ``--speed 0 --fault coalesce``. Such a response can be handed over in one piece, the way
    mitmproxy's own server replay does, with nothing lost.
    """
    if (
        schedule.head is None
        or schedule.head.at_ns != 0
        or len(schedule.writes) > 1
        or any(w.at_ns != 0 for w in schedule.writes)
        or schedule.finish.kind is not FinishKind.COMPLETE
        or schedule.finish.at_ns != 0
    ):
        return None
    return schedule.body
