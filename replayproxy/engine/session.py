"""A replay session: one cassette, its matcher, the replay settings and the running totals.

The session turns an incoming :class:`~replayproxy.core.model.Request` into what to serve: a
:class:`Served` (the interaction chosen by :mod:`replayproxy.core.matching` and the
:class:`~replayproxy.core.schedule.Schedule` built for it by
:func:`replayproxy.core.faults.plan`) or a :class:`~replayproxy.core.matching.Miss`. It also
keeps the totals reported at exit. Both the mitmproxy addon and the direct
:class:`~replayproxy.engine.server.ReplayServer` use it; it does no I/O itself.

Thread-safe: hooks run on mitmproxy's loop while a test or the CLI reads the totals.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replayproxy import store
from replayproxy.core import faults as faults_mod
from replayproxy.core import resume
from replayproxy.core.faults import FaultSpec
from replayproxy.core.matching import Matcher, MatchOptions, Miss, describe_request
from replayproxy.core.model import Cassette, Interaction, Request
from replayproxy.core.schedule import Schedule, scale
from replayproxy.core.wsreplay import plan_interaction
from replayproxy.engine.websocket import WsServe
from replayproxy.errors import ReplayProxyError, UsageError

__all__ = [
    "UNMATCHED_HEADER",
    "UNMATCHED_STATUS",
    "ReplaySession",
    "Served",
    "Summary",
    "check_speed",
    "parse_faults",
    "unmatched_response",
]

UNMATCHED_STATUS = 500
UNMATCHED_HEADER = "x-replayproxy-unmatched"

MissHandler = Callable[[Miss], None]


@dataclass(frozen=True, slots=True)
class Served:
    """Serve ``schedule`` for recorded interaction ``index`` (its ``replay_count``-th repeat).

    For a recorded WebSocket session ``websocket`` is what to replay after the upgrade.
    """

    index: int
    replay_count: int
    schedule: Schedule
    websocket: WsServe | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals of a session: what was served, what missed, what was never asked for."""

    served: int
    unmatched: int
    unused: tuple[int, ...]
    recorded: int

    def line(self) -> str:
        """The one-line summary printed to stderr on exit."""
        unused = f"{len(self.unused)} of {self.recorded} recorded interactions never used"
        if self.unused:
            shown = ", ".join(f"#{n}" for n in self.unused[:10])
            unused += f" ({shown}{', ...' if len(self.unused) > 10 else ''})"
        return (
            f"replayproxy: {self.served} interactions served, "
            f"{self.unmatched} unmatched requests, {unused}"
        )


def unmatched_response(miss: Miss) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """Status, headers and body of the response sent for an unmatched request."""
    body = (miss.explain() + "\n").encode("utf-8")
    headers = (
        (b"content-type", b"text/plain; charset=utf-8"),
        (UNMATCHED_HEADER.encode(), b"1"),
        (b"content-length", str(len(body)).encode()),
    )
    return UNMATCHED_STATUS, headers, body


def parse_faults(specs: Sequence[str | FaultSpec]) -> tuple[FaultSpec, ...]:
    """Parse ``--fault`` strings (FaultSpec values pass through); raises FaultSpecError."""
    return tuple(s if isinstance(s, FaultSpec) else faults_mod.parse(s) for s in specs)


def check_speed(speed: float | str) -> float:
    """``speed`` as a float >= 0 (0 = no waiting), else a one-line UsageError."""
    try:
        value = float(speed)
    except (TypeError, ValueError):
        raise UsageError(f"speed must be a number >= 0, got {speed!r}") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"speed must be a finite number >= 0, got {speed!r}")
    return value


class ReplaySession:
    """Matches requests against one cassette and plans the schedules to serve."""

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        speed: float = 1.0,
        faults: Sequence[str | FaultSpec] = (),
        options: MatchOptions | None = None,
        on_miss: MissHandler | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        if not isinstance(cassette, Cassette):
            cassette = store.load(cassette, on_warning=on_warning)
        self.cassette = cassette
        self.speed = check_speed(speed)
        self.faults = parse_faults(faults)
        self.options = options or MatchOptions()
        self.on_miss = on_miss
        self._matcher = Matcher(cassette.interactions, self.options)
        self._lock = threading.Lock()
        self._served = 0
        self.misses: list[Miss] = []

    def resolve(self, request: Request) -> Served | Miss:
        """What to answer ``request`` with; counts it in the totals."""
        resumed = self._resume(request)
        if resumed is not None:
            return resumed
        with self._lock:
            result = self._matcher.match(request)
            if isinstance(result, Miss):
                self.misses.append(result)
            else:
                self._served += 1
        if isinstance(result, Miss):
            if self.on_miss is not None:
                self.on_miss(result)
            return result
        interaction = self.cassette.interactions[result.index]
        if interaction.websocket is not None:
            return self._websocket(request, result.index, result.replay_count, interaction)
        try:
            schedule = faults_mod.plan(
                interaction,
                result.index,
                speed=self.speed,
                faults=self.faults,
                replay_count=result.replay_count,
            )
        except ReplayProxyError as e:
            # A fault that cannot act on this interaction (e.g. "event 9" of a 3-event stream)
            # is reported like a miss: the response says why, and the run fails.
            miss = Miss(describe_request(request), result.index, (), reason=str(e))
            with self._lock:
                self._served -= 1
                self.misses.append(miss)
            if self.on_miss is not None:
                self.on_miss(miss)
            return miss
        return Served(result.index, result.replay_count, schedule)

    def _resume(self, request: Request) -> Served | Miss | None:
        """The rest of a recorded stream for a reconnecting client (see core/resume.py)."""
        with self._lock:
            found = resume.find(
                request, self.cassette.interactions, self.options, self._matcher.uses
            )
            if found is None:
                return None
            if isinstance(found, Miss):
                self.misses.append(found)
            else:
                self._served += 1
                replay_count = self._matcher.uses[found.index]
                self._matcher.uses[found.index] += 1
        if isinstance(found, Miss):
            if self.on_miss is not None:
                self.on_miss(found)
            return found
        interaction = self.cassette.interactions[found.index]
        schedule = scale(resume.remainder(interaction, found.after), self.speed)
        return Served(found.index, replay_count, schedule)

    def _websocket(
        self, request: Request, index: int, replay_count: int, interaction: Interaction
    ) -> Served | Miss:
        """A recorded WebSocket session: the 101 head, then the conversation (core/wsreplay)."""
        described = describe_request(request)

        def miss(reason: str) -> Miss:
            found = Miss(described, index, (), reason=reason)
            with self._lock:
                self._served -= 1
                self.misses.append(found)
            if self.on_miss is not None:
                self.on_miss(found)
            return found

        try:
            schedule, plan = plan_interaction(
                interaction, index, speed=self.speed, faults=self.faults,
                replay_count=replay_count, options=self.options,
            )  # fmt: skip
        except ReplayProxyError as e:
            return miss(str(e))
        if plan is None or schedule.head is None:  # a status fault refused the upgrade
            return Served(index, replay_count, schedule)
        return Served(index, replay_count, schedule, WsServe(schedule.head, plan, miss))

    def summary(self) -> Summary:
        with self._lock:
            return Summary(
                served=self._served,
                unmatched=len(self.misses),
                unused=self._matcher.unused(),
                recorded=len(self.cassette.interactions),
            )
