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

from replayproxy.core.model import EndKind, Header, Interaction

__all__ = ["Finish", "FinishKind", "Head", "Schedule", "Write", "from_interaction", "scale"]


class FinishKind(str, enum.Enum):
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
