"""How schedules planned by the mitmproxy addon reach the origin that executes them: a token
registered in the same process, or the schedule itself packed into the forwarded request's body
for an origin in a child process (:mod:`~replayproxy._engine.origin_process`).

:class:`Handoffs` is the origin's registry of both; :class:`Planned` is what the origin executes,
however it got the schedule (handed off here, or matched by its own session).
"""

from __future__ import annotations

import hmac
import itertools
from dataclasses import dataclass

from replayproxy._core.cassette.model import Request
from replayproxy._core.schedule import codec as schedule_wire
from replayproxy._core.schedule.model import Schedule
from replayproxy._engine.http1_writer import Whole, plain_whole
from replayproxy._engine.websocket import WsServe

__all__ = ["FAILURE_HEADER", "PACKED_HEADER", "TOKEN_HEADER", "Handoffs", "Planned"]

TOKEN_HEADER = "x-replayproxy-token"

PACKED_HEADER = "x-replayproxy-packed"
"""Carries the origin's secret on a request whose body is a packed schedule
(:mod:`~replayproxy._core.schedule.codec`): how the proxy hands schedules to an origin in
another process (:mod:`~replayproxy._engine.origin_process`)."""

FAILURE_HEADER = "x-replayproxy-failure"
"""On an origin with a secret, the explained 500 also carries the failure's summary here, so
the proxy can count it in its session (the proxy removes it before the client sees it)."""


@dataclass(frozen=True, slots=True)
class Planned:
    """A response sent by its schedule: ``method`` is the request's (no body for ``HEAD``),
    ``arrived`` when the request reached the proxy (behind mitmproxy), ``websocket`` the session
    to replay after an upgrade."""

    schedule: Schedule
    method: str
    arrived: float | None
    websocket: WsServe | None


class Handoffs:
    """The schedules handed to an origin: registered under tokens, or packed with ``secret``."""

    def __init__(self, secret: str | None) -> None:
        self.secret = secret
        self._expected: dict[str, Planned] = {}
        self._tokens = itertools.count(1)

    def expect(self, planned: Planned) -> str:
        """Register ``planned`` for the request that will carry the returned token."""
        token = str(next(self._tokens))
        self._expected[token] = planned
        return token

    def forget(self, token: str) -> None:
        self._expected.pop(token, None)

    def take(self, request: Request) -> Planned | Whole | None:
        """The schedule ``request`` brings (packed) or names (a token); ``None`` if neither,
        a plain 500 for a token that names nothing. A packed schedule with the wrong secret
        raises :class:`~replayproxy._core.schedule.codec.ScheduleWireError`."""
        packed = request.header(PACKED_HEADER)
        if packed is not None and self.secret is not None:
            if not hmac.compare_digest(packed.encode(), self.secret.encode()):
                raise schedule_wire.ScheduleWireError("a packed schedule with the wrong secret")
            schedule, method, arrived = schedule_wire.unpack(request.body)
            return Planned(schedule, method, arrived, None)
        token = request.header(TOKEN_HEADER)
        if token is None:
            return None
        found = self._expected.pop(token, None)
        return found or plain_whole(500, b"replayproxy: unknown replay token\n")
