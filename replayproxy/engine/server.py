"""``ReplayServer``: serve a cassette on a loopback port from Python, without mitmproxy.

A thin shell that runs an :class:`~replayproxy.engine.origin.Origin` with its own
:class:`~replayproxy.engine.session.ReplaySession` on a dedicated thread and event loop, so
synchronous tests and SDK clients can use it as a context manager.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import threading
from collections.abc import Sequence
from typing import Self

from replayproxy.core.faults import FaultSpec
from replayproxy.core.matching import MatchOptions
from replayproxy.core.model import Cassette
from replayproxy.engine.failsafe import ReplayFailure
from replayproxy.engine.origin import Origin
from replayproxy.engine.session import ErrorHandler, MissHandler, ReplaySession, Summary

__all__ = ["ReplayServer"]

log = logging.getLogger(__name__)


def _log_failure(failure: ReplayFailure) -> None:
    log.error("replayproxy: %s", failure.one_line())


class ReplayServer:
    """Serve a cassette on ``http://127.0.0.1:PORT`` directly, without mitmproxy.

    For clients that take a base URL (SDKs, benchmarks, tests)::

        with ReplayServer("cassettes/openai-chat-text.cassette", speed=2) as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
            ...
        print(server.summary().line())

    Arguments:
        cassette: a :class:`~replayproxy.core.model.Cassette` or a path to load.
        speed: 1 = as recorded, 2 = twice as fast, 0 = no waiting.
        faults: fault specs (strings or parsed ``FaultSpec``) applied to every response.
        options: :class:`~replayproxy.core.matching.MatchOptions`.
        equivalence: ``False`` compares request bodies exactly instead of treating requests
            the provider documents as identical as equal (overrides ``options.equivalence``).
        on_miss: called (on the server thread) with each :class:`~replayproxy.core.matching.Miss`.
        on_error: called with each :class:`~replayproxy.engine.failsafe.ReplayFailure` (a
            request replay itself failed to answer; the client got the explained 500 with
            ``x-replayproxy-error: 1``). Default: one ``logging`` error line.
        port: 0 picks a free port.

    The server runs on its own thread and event loop; ``start()`` returns once it listens and
    ``stop()`` closes every connection (a hung response ends then). ``session`` exposes the
    :class:`~replayproxy.engine.session.ReplaySession` (``session.misses``), ``summary()``
    the totals.
    Unmatched requests get a 500 with ``x-replayproxy-unmatched: 1`` and an explanation in the
    provider's JSON error shape (so SDK exceptions show it); ``on_miss`` or ``session.misses``
    give the :class:`~replayproxy.core.matching.Miss` itself (``miss.explain()``).
    """

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        speed: float = 1.0,
        faults: Sequence[str | FaultSpec] = (),
        options: MatchOptions | None = None,
        equivalence: bool | None = None,
        on_miss: MissHandler | None = None,
        on_error: ErrorHandler | None = None,
        port: int = 0,
    ) -> None:
        if equivalence is not None:
            options = dataclasses.replace(options or MatchOptions(), equivalence=equivalence)
        self.session = ReplaySession(
            cassette,
            speed=speed,
            faults=faults,
            options=options,
            on_miss=on_miss,
            on_error=on_error or _log_failure,
        )
        self._port = port
        self._origin = Origin(self.session)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._origin.port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (append the API prefix, e.g. ``/v1``, for SDK base URLs)."""
        return self._origin.url

    def summary(self) -> Summary:
        return self.session.summary()

    def use(self, session: ReplaySession) -> None:
        """Serve ``session`` from now on (thread-safe: one attribute store each); a server kept
        running across tests switches cassettes this way instead of restarting."""
        self.session = session
        self._origin.session = session

    def start(self, timeout: float = 10.0) -> Self:
        self._thread = threading.Thread(target=self._main, name="replayproxy-origin", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("replay server did not start in time")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _main(self) -> None:
        try:
            asyncio.run(self._amain())
        except BaseException as e:  # reported by start()
            self._error = e
            self._ready.set()

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        await self._origin.start("127.0.0.1", self._port)
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            await self._origin.close()
