"""A replay session: one cassette, its matcher, the replay settings and the running totals.

The session turns an incoming :class:`~replayproxy._core.cassette.model.Request` into what to
serve: a :class:`Served` (the interaction chosen by :mod:`replayproxy._core.matching.matcher` and
the :class:`~replayproxy._core.schedule.model.Schedule` built for it by
:func:`replayproxy._core.faults.plan`), a :class:`~replayproxy._core.matching.matcher.Miss` (the
shells answer it with :func:`~replayproxy._engine.failsafe.unmatched_response`, re-exported
here), or, in a record mode (:mod:`replayproxy._core.replay.record_mode`), a :class:`Passthrough`:
forward the request upstream and hand the interaction to :meth:`ReplaySession.record`, which
appends it to the cassette (:class:`~replayproxy._store.sink.CassetteSink`) and grows
the matcher. It also keeps the totals reported at exit, and every request it resolved
(:attr:`ReplaySession.requests`, :mod:`replayproxy._core.replay.seen`). Both the mitmproxy
addon and the direct :class:`~replayproxy._engine.server.ReplayServer` use it; apart from that
append it does no I/O.

Thread-safe: hooks run on mitmproxy's loop while a test or the CLI reads the totals.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replayproxy import _store as store
from replayproxy._core import faults as faults_mod
from replayproxy._core.cassette.model import Cassette, Interaction, Request
from replayproxy._core.faults import FaultSpec, stored
from replayproxy._core.matching.differences import MatchOptions, describe_request
from replayproxy._core.matching.explanation import CLI_WORDS, Words
from replayproxy._core.matching.matcher import Matcher, Miss
from replayproxy._core.replay import resume
from replayproxy._core.replay.checks import check_speed  # re-exported: checked there, once
from replayproxy._core.replay.options import (
    ConnectionLimits,
    HttpVersion,
    RecordSettings,
    ReplaySettings,
)
from replayproxy._core.replay.record_mode import (
    RecordMode,
    RecordPolicy,
    parse_record_mode,
    policy_for,
)
from replayproxy._core.replay.seen import SeenLog, SeenRequest, seen_request
from replayproxy._core.replay.summary import Summary
from replayproxy._core.schedule.model import Schedule, scale
from replayproxy._core.websocket.conversation import plan_interaction
from replayproxy._engine.failsafe import (
    UNMATCHED_EXPLANATION_HEADER,
    UNMATCHED_HEADER,
    UNMATCHED_STATUS,
    ReplayFailure,
    failure_of,
    unmatched_response,
)
from replayproxy._engine.websocket import WsServe
from replayproxy._errors import ReplayProxyError, UsageError
from replayproxy._store.sink import CassetteSink

__all__ = [
    "UNMATCHED_EXPLANATION_HEADER",
    "UNMATCHED_HEADER",
    "UNMATCHED_STATUS",
    "ErrorHandler",
    "Passthrough",
    "ReplaySession",
    "SeenRequest",
    "Served",
    "Summary",
    "check_speed",
    "check_stored_faults",
    "parse_faults",
    "unmatched_response",
]


MissHandler = Callable[[Miss], None]
ErrorHandler = Callable[[ReplayFailure], None]

# Failures kept for inspection (session.failures); the count goes on past this.
_FAILURES_KEPT = 100


@dataclass(frozen=True, slots=True)
class Served:
    """Serve ``schedule`` for recorded interaction ``index`` (its ``replay_count``-th repeat).

    For a recorded WebSocket session ``websocket`` is what to replay after the upgrade.
    ``faults``: the specs that act on this serving.
    """

    index: int
    replay_count: int
    schedule: Schedule
    websocket: WsServe | None = None
    faults: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Passthrough:
    """Forward the request to the real upstream and record it (a record mode said so)."""

    request: str
    """The request, described as in a :class:`~replayproxy._core.matching.matcher.Miss`."""


def parse_faults(specs: Sequence[str | FaultSpec]) -> tuple[FaultSpec, ...]:
    """Parse ``--fault`` strings (FaultSpec values pass through); raises FaultSpecError."""
    return tuple(s if isinstance(s, FaultSpec) else faults_mod.parse(s) for s in specs)


def check_stored_faults(cassette: Cassette, source: str | os.PathLike[str] | None = None) -> None:
    """:func:`~replayproxy._core.faults.stored.check_stored_faults`; ``source``: the file it was
    loaded from (``None``: built in code, so every field is checked too)."""
    stored.check_stored_faults(cassette, None if source is None else os.fspath(source))


class ReplaySession:
    """Matches requests against one cassette and plans the schedules to serve.

    ``record_mode`` (default ``none``: replay only) needs ``cassette`` to be a path: whether
    the file exists decides the :class:`~replayproxy._core.replay.record_mode.RecordPolicy`, and new
    interactions are appended to it. ``missing_ok``: in ``none`` mode, a missing file is an
    empty cassette (every request a miss) instead of an error; :attr:`exists` tells which.
    ``record_settings``: how what it forwards is recorded (redaction; read by the recorder);
    ``connection_limits``: timeouts and the connection bound of the shell serving it.
    ``http_version``: the HTTP version a TLS client gets in forward mode (``mitm/addons/_alpn``).
    """

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        speed: float = 1.0,
        faults: Sequence[str | FaultSpec] = (),
        options: MatchOptions | None = None,
        on_miss: MissHandler | None = None,
        on_warning: Callable[[str], None] | None = None,
        record_mode: RecordMode | str = RecordMode.NONE,
        missing_ok: bool = False,
        on_error: ErrorHandler | None = None,
        record_settings: RecordSettings | None = None,
        connection_limits: ConnectionLimits | None = None,
        http_version: HttpVersion | str = HttpVersion.RECORDED,
    ) -> None:
        mode = parse_record_mode(record_mode)
        self.limits = connection_limits or ConnectionLimits()  # read by the shells serving it
        self.record_settings = record_settings or RecordSettings()
        self.path: Path | None = None if isinstance(cassette, Cassette) else Path(cassette)
        if self.path is None and mode is not RecordMode.NONE:
            raise UsageError(f"record mode {mode} needs a cassette path to record to")
        self.exists = self.path is None or self.path.exists()
        self.policy: RecordPolicy = policy_for(mode, self.exists)
        self.sink: CassetteSink | None = None
        if self.path is not None and self.policy.write_mode is not None:
            write, replaces = self.policy.write_mode, self.policy.replaces
            self.sink = CassetteSink(self.path, write, on_warning=on_warning, replaces=replaces)
        source = None
        if isinstance(cassette, Cassette):
            pass
        elif self.policy.replay and (self.exists or not missing_ok):
            source, cassette = cassette, store.load(cassette, on_warning=on_warning)
        else:
            cassette = Cassette(interactions=())  # nothing to replay (all, or a new cassette)
        check_stored_faults(cassette, source)
        self.cassette = cassette
        self.speed = check_speed(speed)
        self.faults = parse_faults(faults)
        self.options = options or MatchOptions()
        self.on_miss = on_miss
        self.on_error = on_error
        self.http_version = HttpVersion(http_version)
        self.words: Words = CLI_WORDS  # how the explained 500 spells fixes; set by the front
        self._matcher = Matcher(cassette.interactions, self.options, self._servings)
        self._seen = SeenLog()
        self._plans = faults_mod.PlanCache()  # schedules of this cassette, built once each
        self._initial = len(cassette.interactions)
        self._lock = threading.Lock()
        self._served = 0
        self._new = 0
        self.misses: list[Miss] = []
        self.errors: list[str] = []
        """Problems recording (e.g. the cassette could not be written), one line each."""
        self.failures: list[ReplayFailure] = []
        self._errors = 0

    @classmethod
    def from_settings(
        cls,
        cassette: Cassette | str | os.PathLike[str],
        settings: ReplaySettings,
        **kwargs: Any,
    ) -> ReplaySession:
        """A session with :class:`~replayproxy._core.replay.options.ReplaySettings` (as any shell
        parsed them); ``kwargs`` are the other keyword arguments of the constructor."""
        return cls(
            cassette,
            speed=settings.speed,
            faults=settings.faults,
            options=settings.match,
            record_mode=settings.record_mode,
            record_settings=settings.record,
            connection_limits=settings.connections,
            http_version=settings.http_version,
            **kwargs,
        )

    @property
    def requests(self) -> tuple[SeenRequest, ...]:
        """Every request resolved so far, in order, redacted as a cassette is (the oldest are
        dropped past :data:`~replayproxy._core.replay.seen.SEEN_MAX`)."""
        with self._lock:
            return self._seen.requests

    def _servings(self, interaction: Interaction, index: int) -> int:
        return faults_mod.servings(interaction, index, self.faults)

    def resolve(self, request: Request) -> Served | Miss | Passthrough:
        """What to answer ``request`` with; counts it in the totals and keeps it in
        :attr:`requests`."""
        try:
            result = self._resolve(request)
            if isinstance(result, Passthrough) and self.sink is not None:
                self.sink.open(self.errors.append)  # before forwarding: fail while nothing left
        except BaseException:
            self._see(request, None)  # answered with the explained 500 by the shell
            raise
        self._see(request, result)
        return result

    def _see(self, request: Request, result: Served | Miss | Passthrough | None) -> None:
        redactor = self.record_settings.redactor
        if isinstance(result, Served):
            seen = seen_request(
                request, redactor, result.index, result.replay_count + 1, result.faults
            )
        else:
            seen = seen_request(request, redactor)
        with self._lock:
            self._seen.add(seen, passthrough=isinstance(result, Passthrough))

    def _chosen(self, interaction: Interaction, index: int, replay_count: int) -> tuple[str, ...]:
        """The spec strings of the faults that act on this serving (as the planners pick)."""
        chosen = faults_mod.select(interaction, index, self.faults, replay_count)
        return tuple(str(spec) for spec in chosen)

    def _resolve(self, request: Request) -> Served | Miss | Passthrough:
        if not self.policy.replay:
            return Passthrough(describe_request(request))
        resumed = self._resume(request)
        if resumed is not None:
            return resumed
        with self._lock:
            result = self._matcher.match(request)
            if isinstance(result, Miss):
                result = result.hiding(self.record_settings.redactor.body_fields)
                if self.policy.forward_misses:
                    return Passthrough(describe_request(request))
                self.misses.append(result)
            else:
                self._served += 1
        if isinstance(result, Miss):
            if self.on_miss is not None:
                self.on_miss(result)
            return result
        interaction = self._matcher.interactions[result.index]
        if interaction.websocket is not None:
            return self._websocket(request, result.index, result.replay_count, interaction)
        try:
            schedule = faults_mod.plan(
                interaction,
                result.index,
                speed=self.speed,
                faults=self.faults,
                replay_count=result.replay_count,
                cache=self._plans,
            )
        except Exception as e:
            if not isinstance(e, ReplayProxyError):
                # A bug: not served after all; the shell counts it with fail() (fail closed).
                with self._lock:
                    self._served -= 1
                raise
            # A fault that cannot act on this interaction (e.g. "event 9" of a 3-event stream)
            # is reported like a miss: the response says why, and the run fails.
            miss = Miss(describe_request(request), result.index, (), reason=str(e))
            with self._lock:
                self._served -= 1
                self.misses.append(miss)
            if self.on_miss is not None:
                self.on_miss(miss)
            return miss
        chosen = self._chosen(interaction, result.index, result.replay_count)
        return Served(result.index, result.replay_count, schedule, faults=chosen)

    def record(self, interaction: Interaction) -> None:
        """Append an interaction forwarded after a :class:`Passthrough` and make it matchable.

        The record hooks run first (``None``: dropped). Raises
        :class:`~replayproxy._errors.CassetteError` if it cannot be written, or a hook fails.
        """
        if self.sink is None:
            raise UsageError("this session does not record (record mode none)")
        if (kept := self.record_settings.hooks.apply(interaction)) is None:
            return
        self.sink.append(kept)
        with self._lock:
            index = self._matcher.add(kept, used=True)
            self._new += 1
            self._seen.recorded(kept, index)

    def close(self) -> None:
        """Close the cassette file, if anything was recorded (fsync). Idempotent."""
        if self.sink is not None:
            self.sink.close()

    def fail(self, request: str, exc: BaseException) -> ReplayFailure:
        """Count a request that replay failed to answer (``request`` as :func:`describe` gives
        it); report it to ``on_error``. The shell then sends the explained 500."""
        failure = failure_of(exc, request)
        with self._lock:
            self._errors += 1
            if len(self.failures) < _FAILURES_KEPT:
                self.failures.append(failure)
        if self.on_error is not None:
            self.on_error(failure)
        return failure

    def _resume(self, request: Request) -> Served | Miss | None:
        """The rest of a recorded stream for a reconnecting client (see core/replay/resume.py)."""
        with self._lock:
            found = resume.find(
                request, self._matcher.interactions, self.options, self._matcher.uses
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
        interaction = self._matcher.interactions[found.index]
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
        chosen = self._chosen(interaction, index, replay_count)
        if plan is None or schedule.head is None:  # a status fault refused the upgrade
            return Served(index, replay_count, schedule, faults=chosen)
        return Served(index, replay_count, schedule, WsServe(schedule.head, plan, miss), chosen)

    def explain_misses(self, words: Words | None = None) -> list[str]:
        """Each unmatched request explained, its fixes in ``words`` (default: :attr:`words`)."""
        return [miss.explain(words or self.words) for miss in self.misses]

    def summary(self) -> Summary:
        with self._lock:
            return Summary(
                served=self._served,
                unmatched=len(self.misses),
                # Recorded interactions join the matcher as used (record()): every unused
                # one is from the cassette the session started with.
                unused=self._matcher.unused(),
                recorded=self._initial,
                new=self._new,
                errors=self._errors,
            )
