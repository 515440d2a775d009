"""Where the addons reach into mitmproxy's connection handlers, all in one place (INTERNAL
API, docs/contributing/mitmproxy-internals.md §6, verified on mitmproxy 11.0.2 and 12.3.1:
``proxyserver.connections[client id]`` is the ConnectionHandler, whose ``transports[conn]``
hold the asyncio reader and writer; each use is guarded and falls back to mitmproxy's own
behaviour if that changes):

- recording: the upstream connection's reader, to tell a reset from a clean end
  (:func:`reader_of`, :func:`upstream_reset`);
- replay: cutting a client's connection, a TCP RST where the recording had a reset and a
  dropped WebSocket (no close frame) where it had one (:func:`reset_client`,
  :func:`drop_client`). mitmproxy itself only ever FIN-closes clients
  (docs/contributing/mitmproxy-internals.md §3), which would make a replayed reset look like an
  incomplete body and a dropped WebSocket like a clean close.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from mitmproxy import ctx, http

from replayproxy._engine.sockets import reset_after_drain

__all__ = ["drop_client", "reader_of", "reset_client", "upstream_reset"]

log = logging.getLogger("replayproxy._mitm.addons.replayer")


async def reset_client(flow: http.HTTPFlow) -> bool:
    """Abort the client's connection with a TCP RST; ``False`` if that was not possible.

    mitmproxy treats an upstream ECONNRESET like EOF and only FIN-closes clients, so a replayed
    reset would reach an HTTP/1 client as an incomplete body. mitmproxy has no API to reset a
    client, so this reaches into INTERNALS (docs/contributing/mitmproxy-internals.md §3 and §6,
    verified on 11.0.2 and 12.3.1): ``proxyserver.connections[client
    id].transports[client].writer``. Anything unexpected (another layout, a mitmproxy_rs stream in
    WireGuard/local mode, a socket that refuses SO_LINGER) falls back to mitmproxy's FIN, logged at
    debug level.

    The reset itself is the origin's (:func:`~replayproxy._engine.sockets.reset_after_drain`): it
    waits until the bytes already forwarded have left. Under TLS the RST cuts the connection without
    close_notify, as a real reset does.
    """
    try:
        addons: Any = ctx.master.addons  # untyped in mitmproxy 11
        proxyserver = addons.get("proxyserver")
        writer = proxyserver.connections[flow.client_conn.id].transports[flow.client_conn].writer
        transport = writer.transport
        sock = writer.get_extra_info("socket")
        if sock is None or not isinstance(transport, asyncio.WriteTransport):
            raise TypeError(f"unexpected client transport {type(transport).__name__}")
    except (KeyError, AttributeError, TypeError) as e:
        log.debug("replayproxy: cannot reset the client connection (%r); it gets a FIN", e)
        return False
    if not await reset_after_drain(transport, sock):
        log.debug("replayproxy: the client left or refused SO_LINGER; it gets a FIN")
        return False
    return True


async def drop_client(flow: http.HTTPFlow, sent: int) -> None:
    """Before a replayed WebSocket drops its connection: once mitmproxy has relayed the
    ``sent`` server messages, cut the client's connection without a close frame.

    mitmproxy answers a dropped upstream with a close frame to the client, and wsproto turns
    the local-only code 1006 into 1000, so the client would see a clean close. Cutting the
    client first makes it see what a real dropped connection looks like (1006).
    """
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        data = flow.websocket
        if data is not None and sum(1 for m in data.messages if not m.from_client) >= sent:
            break
        await asyncio.sleep(0.002)
    await reset_client(flow)


def reader_of(master: Any, client: Any, server: Any) -> Any:
    """The asyncio StreamReader of an upstream connection, or None.

    INTERNAL API (mitmproxy 11.0.2 and 12.3.1): ``proxyserver.connections[client.id]`` is the
    ConnectionHandler, whose ``transports[server].reader`` is the upstream StreamReader.
    Guarded: if mitmproxy changes this, resets are recorded as ``incomplete`` instead.
    """
    try:
        handler = master.addons.get("proxyserver").connections[client.id]
        return handler.transports[server].reader
    except (AttributeError, KeyError, TypeError):
        return None


def upstream_reset(reader: Any) -> bool:
    """True if the upstream socket was reset (asyncio stored a ConnectionResetError)."""
    if reader is None:
        return False
    try:
        exc = reader.exception()
    except Exception:  # not a StreamReader any more: fall back to the message
        return False
    return isinstance(exc, ConnectionResetError)
