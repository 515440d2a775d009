"""``ReplayServer``: serve a cassette on a loopback port from Python, without mitmproxy.

A thin shell that runs an :class:`~replayproxy._engine.origin.Origin` with its own
:class:`~replayproxy._engine.session.ReplaySession` on a dedicated thread and event loop, so
synchronous tests and SDK clients can use it as a context manager. ``replayproxy replay
--upstream URL`` (base-URL mode) serves through it too (:meth:`ReplayServer.for_session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.faults import FaultSpec
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.explanation import SERVER_WORDS
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.options import (
    OPTIONS,
    ConnectionLimits,
    Front,
    ReplaySettings,
    options_for,
    settings_from,
)
from replayproxy._engine import timers
from replayproxy._engine.failsafe import ReplayFailure
from replayproxy._engine.origin import Origin
from replayproxy._engine.proxy.tunnel import ServerContexts
from replayproxy._engine.session import (
    ErrorHandler,
    MissHandler,
    ReplaySession,
    SeenRequest,
    Summary,
)
from replayproxy._errors import ReplayProxyError, UsageError

if TYPE_CHECKING:  # Unpack for **kwargs is in typing from Python 3.12
    from typing_extensions import Unpack

    from replayproxy._core.replay.option_keywords import ServerOptions

__all__ = ["ReplayServer"]

log = logging.getLogger(__name__)


def _log_failure(failure: ReplayFailure) -> None:
    log.error("replayproxy: %s", failure.one_line())


def _words(name: str) -> str:
    return f"ReplayServer keyword {name!r}"


def _settings(options: MatchOptions | None, matching: dict[str, Any]) -> ReplaySettings:
    """The settings that the option table's keywords (``ignore_query=``, ``head_timeout=``...)
    ask for."""
    taken = {o.name for o in options_for(Front.SERVER)}
    for name in sorted(matching):
        if name not in taken and name in {o.name for o in OPTIONS}:
            raise UsageError(
                f"{_words(name)}: the replay engine alone never forwards or records; record "
                "with use_cassette(record_mode=...) or replayproxy replay --record-mode"
            )
    settings = settings_from(matching, where=_words)
    if options is not None and settings.match != MatchOptions():
        raise UsageError("ReplayServer takes options=MatchOptions(...) or its keywords, not both")
    return settings


class ReplayServer:
    """Serve a cassette on ``http://127.0.0.1:PORT`` directly, without mitmproxy.

    For clients that take a base URL (SDKs, benchmarks, tests)::

        with ReplayServer("cassettes/openai-chat-text.cassette", speed=2) as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
            ...
        print(server.summary().line())

    Arguments:
        cassette: a :class:`~replayproxy._core.cassette.model.Cassette` or a path to load.
        speed: 1 = as recorded, 2 = twice as fast, 0 = no waiting.
        faults: fault specs (strings or parsed ``FaultSpec``) applied to every response.
        options: :class:`~replayproxy._core.matching.matcher.MatchOptions`; or, instead, the
            matching options of the option table as keywords, named as everywhere else
            (``ignore_query=``, ``ignore_body_field=``, ``allow_repeats=``, ``match_host=``,
            ``no_equivalence=``), and the connection limits ``head_timeout=``,
            ``body_timeout=``, ``max_connections=`` (docs/explanations/reliability.md). The record
            options (``record_mode``, ``redact_header``...) are refused: the engine alone never
            forwards, so it never records.
        equivalence: ``False`` compares request bodies exactly instead of treating requests
            the provider documents as identical as equal (overrides ``options.equivalence``).
        on_miss: called (on the server thread) with each
        :class:`~replayproxy._core.matching.matcher.Miss`. on_error: called with each
        :class:`~replayproxy._engine.failsafe.ReplayFailure` (a
            request replay itself failed to answer; the client got the explained 500 with
            ``x-replayproxy-error: 1``). Default: one ``logging`` error line.
        port: 0 picks a free port.
        host: the address to listen on.
        upstream: ``scheme://host[:port]`` stood in for: requests are matched as if sent
            there (as ``replayproxy replay --upstream URL`` does; matters for ``match_host``).

    The server runs on its own thread and event loop; ``start()`` returns once it listens and
    ``stop()`` closes every connection (a hung response ends then); ``async with`` works too.
    The handle has the shape of ``use_cassette()``'s: ``url``, ``ca_cert``, ``requests`` (every
    request received, as :class:`~replayproxy.SeenRequest`), ``misses``, ``explain()`` and
    ``summary()``. Unmatched requests get a 500 with ``x-replayproxy-unmatched: 1`` and an
    explanation in the provider's JSON error shape (so SDK exceptions show it); ``on_miss`` or
    ``misses`` give each miss itself (``miss.explain()``).
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
        host: str = "127.0.0.1",
        upstream: str | None = None,
        **matching: Unpack[ServerOptions],
    ) -> None:
        limits = ConnectionLimits()
        if equivalence is not None and "no_equivalence" in matching:
            raise UsageError(
                "ReplayServer keywords 'equivalence' and 'no_equivalence' set the same thing; "
                "give one"
            )
        if matching:
            settings = _settings(options, dict(matching))
            options, limits = options or settings.match, settings.connections
        if equivalence is not None:
            options = dataclasses.replace(options or MatchOptions(), equivalence=equivalence)
        session = ReplaySession(
            cassette,
            speed=speed,
            faults=faults,
            options=options,
            on_miss=on_miss,
            on_error=on_error or _log_failure,
            connection_limits=limits,
        )
        session.words = SERVER_WORDS  # the explained 500s name this class's keywords
        self._setup(session, host, port, upstream)

    @classmethod
    def for_session(
        cls,
        session: ReplaySession,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        upstream: str | None = None,
        tls: ServerContexts | None = None,
    ) -> ReplayServer:
        """A server for a session made elsewhere (the CLI builds one for either shell).

        ``tls``: serve as a forward proxy (``upstream`` is then ``None``): CONNECT tunnels are
        answered with TLS certificates from ``tls`` (``mitm/leaf_certs.LeafCerts``: signed by
        mitmproxy's CA) and absolute-form requests matched as their URLs say."""
        self = cls.__new__(cls)
        self._setup(session, host, port, upstream, tls)
        return self

    def _setup(
        self,
        session: ReplaySession,
        host: str,
        port: int,
        upstream: str | None,
        tls: ServerContexts | None = None,
    ) -> None:
        self.session = session
        self._host = host
        self._port = port
        self._origin = Origin(self.session, upstream=upstream, tls=tls)
        self._bound_host = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._origin.port

    @property
    def host(self) -> str:
        """The address listened on (the first one, for a name that resolves to several)."""
        return self._bound_host or self._host

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (append the API prefix, e.g. ``/v1``, for SDK base URLs)."""
        host = self.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    @property
    def ca_cert(self) -> str | None:
        """In forward mode, the CA certificate (PEM) clients must trust; else ``None``."""
        tls = self._origin.tls
        return None if tls is None else tls.ca_cert

    @property
    def is_running(self) -> bool:
        """Listening and serving (False before start, after stop, or if it failed)."""
        return (
            self._ready.is_set()
            and self._error is None
            and self._thread is not None
            and self._thread.is_alive()
        )

    def summary(self) -> Summary:
        """Served, unmatched and unused interactions (``.line()`` for one line)."""
        return self.session.summary()

    @property
    def misses(self) -> list[Miss]:
        """The unmatched requests so far, each with ``.explain()``."""
        return list(self.session.misses)

    def explain(self) -> str:
        """Every unmatched request so far, explained with its fixes; ``""`` if none (the same
        text the client got in the explained 500)."""
        return "\n".join(self.session.explain_misses())

    @property
    def requests(self) -> tuple[SeenRequest, ...]:
        """The requests received so far, in order, as :class:`~replayproxy.SeenRequest`:
        method, URL, redacted headers and body, the interaction that answered (``None`` for a
        miss), which ``attempt`` of it, and the ``faults`` that acted on it."""
        return self.session.requests

    def use(self, session: ReplaySession) -> None:
        """Serve ``session`` from now on (thread-safe: one attribute store each); a server kept
        running across tests switches cassettes this way instead of restarting."""
        self.session = session
        self._origin.session = session

    def start(self, timeout: float = 10.0) -> Self:
        self._thread = threading.Thread(target=self._main, name="replayproxy-origin", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise ReplayProxyError(f"the replay server did not start within {timeout:g} s")
        if self._error is not None:
            error = self._error
            if isinstance(error, OSError):  # one line, as mitmproxy's bind errors are reported
                reason = os.strerror(error.errno).lower() if error.errno else str(error)
                if isinstance(error, socket.gaierror):  # EAI_* codes os.strerror does not know
                    reason = f"the host does not resolve ({(error.strerror or '').lower()})"
                raise ReplayProxyError(
                    f"cannot listen on {self._host}:{self._port}: {reason}"
                ) from None
            raise error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended (closed)
                loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server has stopped (by :meth:`stop` or on its own), or ``timeout``
        seconds; True if it has stopped (or never started)."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not (self._thread is not None and self._thread.is_alive())

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        """``async with ReplayServer(...)``: started off the event loop (a thread waits for it),
        so an async test's loop keeps running while the server binds."""
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def _main(self) -> None:
        try:
            timers.run(self._amain())
        except BaseException as e:  # reported by start()
            self._error = e
            self._ready.set()

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        await self._origin.start(self._host, self._port)
        self._bound_host = self._origin.host
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            await self._origin.close()
