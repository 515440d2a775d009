"""The replay origin's listening sockets: its own accept loop, a bound on the connections it
serves at once, and what it does when the process runs out of file descriptors.

asyncio's own accept loop (``loop.create_server``) is not used because of what it does on
``EMFILE``: it logs ``socket.accept() out of system resource`` and schedules a retry, then
goes on trying the same full accept queue up to ``backlog`` times in the same tick, each
failure logged and each scheduling a retry of its own. Under ``ulimit -n 1024`` with 1100
half-sent connections that was 139,975 lines (56.7 MB) of stderr in 30 s and no new client
answered (issue 28). Here:

- at most :attr:`Listener.limit` connections are served at once: ``max_connections``
  (:class:`~replayproxy._core.replay.options.ConnectionLimits`), lowered to the open-files
  limit less :data:`FD_RESERVE`, so the process normally never meets ``EMFILE``;
- a connection past the bound makes room by closing the connection that has waited longest
  for a request head (a kept-alive connection between requests is closed silently, a half-sent
  head gets a one-line 408); when every connection is busy with a response, the new client
  gets a one-line 503 and is closed;
- should ``accept()`` still fail for want of descriptors (other files of the process), room
  is made the same way and, with none to make, one spare descriptor kept for the purpose is
  given up to accept the client and refuse it with the 503; the event is logged on one line
  at most every :data:`LOG_EVERY_S` seconds, never in a loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Callable

from replayproxy._engine.http1_writer import plain_response

__all__ = [
    "FD_RESERVE",
    "LISTEN_BACKLOG",
    "LOG_EVERY_S",
    "Listener",
    "Slot",
    "bind",
    "descriptor_limit",
]

log = logging.getLogger("replayproxy._engine.origin")

LISTEN_BACKLOG = 1024
"""Connections the kernel completes before the origin accepts them. asyncio's default (100)
is below a burst of 200 clients connecting at once: the ones past it had their SYN dropped
and connected only on the retransmit, a second later."""

FD_RESERVE = 64
"""File descriptors left for everything but client connections (cassette files, the event
loop, mitmproxy's upstream sockets in the same process, a test's own clients)."""

LOG_EVERY_S = 10.0
"""At most one line per this many seconds about refused or evicted connections."""

_OUT_OF_FDS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def descriptor_limit() -> int | None:
    """The process's soft open-files limit (``ulimit -n``); ``None`` when unlimited or
    unknown (Windows has no ``resource`` module)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def _plain(status: int, line: str) -> bytes:
    return plain_response(status, f"replayproxy: {line}\n".encode(), close=True)


class Slot:
    """One client connection the listener counts, and whether it waits for a request head
    (then it may be closed to make room)."""

    __slots__ = ("_owner", "has_partial_head", "transport")

    def __init__(self, owner: Listener) -> None:
        self._owner = owner
        self.transport: asyncio.BaseTransport | None = None
        self.has_partial_head: Callable[[], bool] = lambda: False

    def waiting(self) -> None:
        """The connection waits for a request head (between requests, or before the first)."""
        self._owner._idle[self] = None
        self._owner._idle.move_to_end(self)

    def busy(self) -> None:
        """The connection is reading a body or being answered: never closed to make room."""
        self._owner._idle.pop(self, None)

    def closed(self) -> None:
        self._owner._release(self)


class Listener:
    """Accepts connections on ``sockets`` and hands each to ``connect`` (a coroutine that
    serves it), at most :attr:`limit` at once. Run on one event loop; ``start()``, ``close()``."""

    def __init__(
        self,
        sockets: list[socket.socket],
        connect: Callable[[socket.socket, Slot], object],
        max_connections: Callable[[], int],
    ) -> None:
        self.sockets = sockets
        self._connect = connect
        self._max = max_connections
        self._slots: set[Slot] = set()
        self._idle: OrderedDict[Slot, None] = OrderedDict()
        self._tasks: list[asyncio.Task[None]] = []
        self._spare: int | None = None
        self._logged_at = -LOG_EVERY_S
        self.refused = 0
        """Clients refused with the 503 (every connection busy)."""
        self.evicted = 0
        """Connections closed to make room for a new one."""

    @property
    def limit(self) -> int:
        """``max_connections``, lowered to fit the open-files limit."""
        fds = descriptor_limit()
        room = self._max() if fds is None else min(self._max(), max(1, fds - FD_RESERVE))
        return room

    def __len__(self) -> int:
        return len(self._slots)

    def start(self) -> None:
        self._spare = _open_spare()
        self._tasks = [asyncio.create_task(self._accept_loop(s)) for s in self.sockets]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        for sock in self.sockets:
            sock.close()
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None

    def _release(self, slot: Slot) -> None:
        self._slots.discard(slot)
        self._idle.pop(slot, None)

    async def _accept_loop(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue
            except OSError as e:
                if e.errno not in _OUT_OF_FDS:
                    self._say(f"accept() failed on {sock.getsockname()}: {e}")
                    await asyncio.sleep(0.1)  # never a busy loop
                    continue
                await self._out_of_descriptors(sock, e)
                continue
            self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        conn.setblocking(False)
        if len(self._slots) >= self.limit and not self._make_room():
            self._refuse(conn, f"{len(self._slots)} connections, max_connections {self.limit}")
            return
        slot = Slot(self)
        self._slots.add(slot)
        self._connect(conn, slot)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request head; False if none."""
        if not self._idle:
            return False
        slot, _ = self._idle.popitem(last=False)
        self._slots.discard(slot)
        self.evicted += 1
        transport = slot.transport
        if transport is not None and not transport.is_closing():
            if slot.has_partial_head() and isinstance(transport, asyncio.WriteTransport):
                line = "request head not completed; closed to make room for another client"
                with contextlib.suppress(Exception):
                    transport.write(_plain(408, line))
            transport.close()
        self._say(
            f"{len(self._slots) + 1} client connections at the bound of {self.limit} "
            "(max_connections, open-files limit): closing the ones idle longest"
        )
        return True

    def _refuse(self, conn: socket.socket, why: str) -> None:
        self.refused += 1
        with contextlib.suppress(OSError):
            conn.send(_plain(503, f"too many connections ({why}); retry"))
        conn.close()
        self._say(f"refusing new clients: {why}, every one busy")

    async def _out_of_descriptors(self, sock: socket.socket, e: OSError) -> None:
        limit = descriptor_limit()
        self._say(
            f"out of file descriptors ({os.strerror(e.errno or 0)}; open-files limit {limit}) "
            f"with {len(self._slots)} client connections"
        )
        if self._make_room():
            await asyncio.sleep(0)  # let the closed transport give its descriptor back
            return
        if self._spare is not None:
            # The last descriptor we keep for this: accept the client to tell it, not to serve.
            os.close(self._spare)
            self._spare = None
            with contextlib.suppress(OSError):
                conn, _ = sock.accept()
                self._refuse(conn, f"out of file descriptors, open-files limit {limit}")
            self._spare = _open_spare()
            return
        await asyncio.sleep(0.1)  # nothing to give back: wait for a connection to end

    def _say(self, line: str) -> None:
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            log.warning("replayproxy: %s", line)


def _open_spare() -> int | None:
    with contextlib.suppress(OSError):
        return os.open(os.devnull, os.O_RDONLY)
    return None


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` (every address the name resolves to, as asyncio's
    ``create_server`` binds them), non-blocking, with :data:`LISTEN_BACKLOG`."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    out: list[socket.socket] = []
    seen: set[tuple[int, object]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            out.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
    except OSError:
        for sock in out:
            sock.close()
        raise
    return out
