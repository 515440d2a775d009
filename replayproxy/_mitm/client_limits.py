"""Connection hygiene for the mitmproxy shell (forward and reverse mode): the addon
:class:`ClientLimits`, added to every stack by :func:`~replayproxy._mitm.stack.build_stack`.

What mitmproxy offers itself (11.0.2 and 12.3.1 alike): one inactivity watchdog per client
connection, ``mitmproxy.proxy.server.TCP_TIMEOUT`` (600 s, a module constant, no option), reset
by any event on the connection, and no bound on the number of clients; asyncio's accept loop
floods the log on ``EMFILE`` (see :mod:`replayproxy._engine.listener`). 1100 half-sent heads
starved it as they did the engine (issue 28). So, from the hooks, with the
:class:`~replayproxy._core.replay.options.ConnectionLimits` of the session being served:

- a client that has no request in flight (before its first, between requests, or inside a head
  mitmproxy has not finished reading) for ``head_timeout`` seconds is closed, as mitmproxy's
  own watchdog closes it (its handler task is cancelled); a request whose body has not arrived
  ``body_timeout`` seconds after its head is closed too (mitmproxy has no per-read hook for
  request bodies, so this bound is on the whole body, not on a pause in it);
- at most ``max_connections`` clients at once (lowered to half the open-files limit, less a
  reserve: a replayed request holds the client's socket, mitmproxy's socket to the origin and
  the origin's), the one idle longest closed to make room for a new one, else the new one
  refused with a one-line 503;
- asyncio's ``socket.accept() out of system resource`` reports are cut to one line per
  :data:`~replayproxy._engine.listener.LOG_EVERY_S` seconds.

It reaches mitmproxy's connection handlers as :mod:`~replayproxy._mitm.addons._connections`
does (``proxyserver.connections[client id]``, INTERNAL API, guarded: if the layout changes,
nothing is closed and mitmproxy's own watchdog remains).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mitmproxy import connection, ctx, http

from replayproxy._core.replay.options import ConnectionLimits
from replayproxy._engine.listener import FD_RESERVE, LOG_EVERY_S, descriptor_limit

__all__ = ["ClientLimits"]

log = logging.getLogger(__name__)

_ACCEPT_FAILED = "socket.accept() out of system resource"
_CHECK_EVERY_S = 0.25


class ClientLimits:
    """The mitmproxy addon that times clients out and bounds how many are served at once."""

    def __init__(self, limits: Callable[[], ConnectionLimits] = ConnectionLimits) -> None:
        self._limits = limits
        self._clients: dict[str, connection.Client] = {}
        # Clients with no request in flight, oldest first: since when (loop time).
        self._idle: OrderedDict[str, float] = OrderedDict()
        self._in_flight: dict[str, int] = {}
        self._bodies: dict[str, float] = {}  # client id -> when its request head arrived
        self._watch: asyncio.Task[None] | None = None
        self._logged_at = -LOG_EVERY_S
        self.closed = 0
        """Clients closed for a timeout or to make room."""
        self.refused = 0
        """Clients refused with the 503 (every one busy)."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def running(self) -> None:
        loop = asyncio.get_running_loop()
        _quiet_accept_errors(loop, self._say)
        if self._watch is None:
            self._watch = asyncio.create_task(self._watchdog())

    async def done(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None

    @property
    def limit(self) -> int:
        """``max_connections``, lowered to fit the open-files limit."""
        fds = descriptor_limit()
        wanted = self._limits().max_connections
        return wanted if fds is None else min(wanted, max(1, (fds - FD_RESERVE) // 2))

    # -- hooks -----------------------------------------------------------------------------

    def client_connected(self, client: connection.Client) -> None:
        if len(self._clients) >= self.limit and not self._make_room():
            self.refused += 1
            line = f"too many connections ({len(self._clients)}, max_connections {self.limit})"
            _write(client, "503 Service Unavailable", f"{line}; retry")
            client.error = f"replayproxy: {line}"
            self._say(f"refusing new clients: {line}, every one busy")
            return
        self._clients[client.id] = client
        self._idle[client.id] = _now()

    def client_disconnected(self, client: connection.Client) -> None:
        self._forget(client.id)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        cid = flow.client_conn.id
        self._in_flight[cid] = self._in_flight.get(cid, 0) + 1
        self._idle.pop(cid, None)
        self._bodies[cid] = _now()

    def request(self, flow: http.HTTPFlow) -> None:
        self._bodies.pop(flow.client_conn.id, None)

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.websocket is None:  # an upgraded connection stays busy until websocket_end
            self._finished(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._finished(flow)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._finished(flow)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        if flow.client_conn.id in self._idle:  # a tunnel opens: its first request comes now
            self._idle[flow.client_conn.id] = _now()

    # -- bookkeeping -------------------------------------------------------------------------

    def _finished(self, flow: http.HTTPFlow) -> None:
        cid = flow.client_conn.id
        self._bodies.pop(cid, None)
        left = self._in_flight.get(cid, 0) - 1
        if left > 0:
            self._in_flight[cid] = left
            return
        self._in_flight.pop(cid, None)
        if cid in self._clients:
            self._idle[cid] = _now()
            self._idle.move_to_end(cid)

    def _forget(self, cid: str) -> None:
        self._clients.pop(cid, None)
        self._idle.pop(cid, None)
        self._in_flight.pop(cid, None)
        self._bodies.pop(cid, None)

    def _make_room(self) -> bool:
        """Close the client idle longest; False if every client has a request in flight."""
        if not self._idle:
            return False
        cid, _ = self._idle.popitem(last=False)
        self._close(cid)
        self._say(
            f"{len(self._clients) + 1} client connections at the bound of {self.limit} "
            "(max_connections, open-files limit): closing the ones idle longest"
        )
        return True

    def _close(self, cid: str) -> None:
        client = self._clients.get(cid)
        self._forget(cid)
        if client is None:
            return
        self.closed += 1
        try:
            proxyserver = _proxyserver()
            # Closing the socket: mitmproxy's reader sees the end and cleans up as for any
            # client that left. (Cancelling the handler, as its own watchdog does, left
            # clients closed to make room open: measured on 11.0.2.)
            proxyserver.connections[cid].transports[client].writer.close()
        except (KeyError, AttributeError, TypeError) as e:
            log.debug("replayproxy: cannot close client %s (%r)", client.peername, e)

    async def _watchdog(self) -> None:
        """Close clients past their timeouts (one task for all, a few checks a second)."""
        while True:
            await asyncio.sleep(_CHECK_EVERY_S)
            limits, now = self._limits(), _now()
            late = [c for c, since in self._idle.items() if now - since > limits.head_timeout]
            late += [c for c, since in self._bodies.items() if now - since > limits.body_timeout]
            for cid in late:
                self._close(cid)

    def _say(self, line: str) -> None:
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            log.warning("replayproxy: %s", line)


def _proxyserver() -> Any:
    addons: Any = ctx.master.addons  # untyped in mitmproxy 11
    return addons.get("proxyserver")


def _now() -> float:
    return asyncio.get_running_loop().time()


def _write(client: connection.Client, status: str, line: str) -> None:
    """Tell a refused client why, before mitmproxy closes it (nothing if that is not possible)."""
    body = f"replayproxy: {line}\n".encode()
    head = f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    with contextlib.suppress(Exception):
        _proxyserver().connections[client.id].transports[client].writer.write(head.encode() + body)


def _quiet_accept_errors(loop: asyncio.AbstractEventLoop, say: Callable[[str], None]) -> None:
    """Let asyncio's accept-failure reports through as one rate-limited line; the rest as
    before (mitmproxy's handler)."""
    previous = loop.get_exception_handler()
    if getattr(previous, "_replayproxy", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if str(context.get("message", "")).startswith(_ACCEPT_FAILED):
            say(f"{_ACCEPT_FAILED}: {context.get('exception')}")
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler._replayproxy = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
