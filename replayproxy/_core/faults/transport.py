"""How a response stops: reset, close, truncate, hang at a cut; linger after the end; status.

Each function maps a schedule to a schedule. The finish kinds are executed by the replay origin:
``RESET`` aborts with SO_LINGER 0 (an RST), ``CLOSE`` closes (FIN) without the chunked
terminator, ``COMPLETE`` sends the terminator (a clean end), ``HANG`` sends nothing more and
keeps the connection open until the client leaves.
"""

from __future__ import annotations

from dataclasses import replace

from replayproxy._core.cassette.model import Header
from replayproxy._core.faults.position import Cut, cut_writes
from replayproxy._core.faults.provider import Provider, error_body, error_headers, reason_phrase
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write

__all__ = ["end_at", "linger", "replace_response"]


def end_at(schedule: Schedule, cut: Cut, kind: FinishKind, extra: bytes = b"") -> Schedule:
    """Keep the body before ``cut`` (plus ``extra``, written at the cut), then finish ``kind``."""
    before, _ = cut_writes(schedule.writes, cut.offset)
    at = cut.at_ns  # the time of the cut's last byte (resolve), or later for time=
    writes = (*before, Write(at, extra)) if extra else tuple(before)
    return replace(schedule, writes=writes, finish=Finish(at, kind))


def linger(schedule: Schedule) -> Schedule:
    """Everything is sent, terminal event included, but the response never ends."""
    return replace(schedule, finish=replace(schedule.finish, kind=FinishKind.HANG))


def replace_response(
    schedule: Schedule,
    original_headers: tuple[Header, ...],
    provider: Provider | None,
    status: int,
    retry_after: float | None,
    message: str | None,
) -> Schedule:
    """The provider's HTTP error response instead of the recorded one, sent when the recorded
    head was (or at once when none came)."""
    at = schedule.head.at_ns if schedule.head else 0
    head = Head(at, status, reason_phrase(status), error_headers(original_headers, retry_after))
    body = error_body(provider, status, message)
    return Schedule(head, (Write(at, body),), Finish(at, FinishKind.COMPLETE))
