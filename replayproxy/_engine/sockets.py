"""Socket-level helpers shared by the replay shells: how to end a connection with a TCP RST.

Both the replay origin (resetting mitmproxy or a direct client) and the replay addon
(resetting the client behind mitmproxy) need the same careful reset: SO_LINGER(1, 0) makes the
kernel discard whatever is still queued, and an RST can make the peer drop data it received but
has not read yet (mitmproxy #8364). So wait (bounded) until the bytes already written have left
the send queue, give the peer a moment to read them, and only then abort.
"""

from __future__ import annotations

import asyncio
import socket
import struct

__all__ = ["reset_after_drain", "unsent_bytes", "until_sent"]

_POLL_S = 0.005
_POLLS = 100  # at most ~0.5 s of waiting for the send queue


def unsent_bytes(sock: socket.socket) -> int:
    """Bytes the peer has not acknowledged yet (Linux SIOCOUTQ); 0 where unknown."""
    try:
        import fcntl
        import termios

        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return int(struct.unpack("i", raw)[0])
    except (ImportError, OSError, AttributeError, ValueError):  # Windows; a closed socket
        return 0


async def until_sent(transport: asyncio.WriteTransport, sock: socket.socket) -> bool:
    """Wait (bounded) until what was written has left the send queue, and a moment more for
    the peer to read it; False if the peer left meanwhile."""
    for _ in range(_POLLS):
        if transport.is_closing():
            return False
        if transport.get_write_buffer_size() == 0 and unsent_bytes(sock) == 0:
            break
        await asyncio.sleep(_POLL_S)
    await asyncio.sleep(_POLL_S)  # let the peer read what arrived (an RST may flush it)
    return not transport.is_closing()


async def reset_after_drain(transport: asyncio.WriteTransport, sock: socket.socket) -> bool:
    """Abort ``transport`` with a TCP RST once what was written has left; True if it did.

    False, with the transport untouched, if the peer left first or the socket refused
    SO_LINGER: the caller then ends the connection its own way.
    """
    if not await until_sent(transport, sock):
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        return False
    transport.abort()  # never raises: it only drops the buffer and schedules the close
    return True
