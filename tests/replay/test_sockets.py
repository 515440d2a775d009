"""The careful TCP reset (engine/sockets.py) over loopback TCP on the virtual clock: it waits
until what was written has left (bounded), resets only then, and leaves the transport alone
when the peer left first or SO_LINGER is refused."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import pytest

from replayproxy._engine.sockets import reset_after_drain, unsent_bytes
from tests.replay.virtual_time import VirtualClock, run_virtual

SIZE = 256 * 1024


@contextlib.contextmanager
def tcp_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(ours, peer) over loopback: ours with a send buffer that takes SIZE bytes at once, the
    peer with a small receive window, so written bytes wait in our kernel until it reads."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    ours = socket.socket()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * SIZE)
    ours.connect(listener.getsockname())
    peer, _ = listener.accept()
    listener.close()
    peer.setblocking(False)
    try:
        yield ours, peer
    finally:
        ours.close()
        peer.close()


async def _transport(sock: socket.socket) -> asyncio.Transport:
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, sock)
    return transport


async def _read_to_end(peer: socket.socket) -> tuple[bytes, str]:
    """What the peer reads, and how its connection ended ("eof" or "reset")."""
    loop = asyncio.get_running_loop()
    got = bytearray()
    while True:
        try:
            data = await loop.sock_recv(peer, 65536)
        except ConnectionResetError:
            return bytes(got), "reset"
        if not data:
            return bytes(got), "eof"
        got += data


def test_unsent_bytes_counts_what_the_peer_has_not_taken() -> None:
    """unsent_bytes(): 0 on an idle connection, the bytes stuck behind a full receive window
    while the peer does not read, 0 for a closed socket."""
    with tcp_pair() as (ours, _peer):
        assert unsent_bytes(ours) == 0
        ours.sendall(b"x" * SIZE)
        assert 0 < unsent_bytes(ours) <= SIZE
        ours.close()
        assert unsent_bytes(ours) == 0


def test_reset_waits_until_the_peer_has_everything() -> None:
    """Written bytes still in our kernel: the reset waits for the peer to read them (it starts
    at 0.1 s), then aborts; the peer gets every byte, then ECONNRESET (not a FIN)."""

    async def main() -> tuple[bool, float, bytes, str]:
        loop = asyncio.get_running_loop()
        with tcp_pair() as (ours, peer):
            transport = await _transport(ours)
            transport.write(b"y" * SIZE)
            # The premise: the transport handed everything to the kernel, which holds it.
            assert transport.get_write_buffer_size() == 0
            assert unsent_bytes(ours) > 0

            async def reader() -> tuple[bytes, str]:
                await asyncio.sleep(0.1025)
                return await _read_to_end(peer)

            reading = asyncio.ensure_future(reader())
            start = loop.time()
            done = await reset_after_drain(transport, ours)
            elapsed = loop.time() - start
            got, how = await reading
            return done, elapsed, got, how

    done, elapsed, got, how = run_virtual(main, VirtualClock())
    assert done is True
    assert 0.1025 < elapsed < 0.4  # after the peer read, well before the 0.5 s bound
    assert (len(got), how) == (SIZE, "reset")


def test_reset_of_an_idle_connection_waits_one_poll() -> None:
    """Nothing pending: the abort comes after a single 5 ms pause and the peer sees a reset."""

    async def main() -> tuple[bool, float, str]:
        loop = asyncio.get_running_loop()
        with tcp_pair() as (ours, peer):
            transport = await _transport(ours)
            start = loop.time()
            done = await reset_after_drain(transport, ours)
            elapsed = loop.time() - start
            _, how = await _read_to_end(peer)
            return done, elapsed, how

    done, elapsed, how = run_virtual(main, VirtualClock())
    assert (done, how) == (True, "reset")
    assert elapsed == pytest.approx(0.005, abs=1e-6)


def test_reset_gives_up_waiting_after_half_a_second() -> None:
    """A peer that never reads: after 100 polls of 5 ms and the last pause (0.505 s) the
    connection is reset anyway."""

    async def main() -> tuple[bool, float, bool]:
        loop = asyncio.get_running_loop()
        with tcp_pair() as (ours, _peer):
            transport = await _transport(ours)
            transport.write(b"z" * (8 * SIZE))
            start = loop.time()
            done = await reset_after_drain(transport, ours)
            return done, loop.time() - start, transport.is_closing()

    done, elapsed, closing = run_virtual(main, VirtualClock())
    assert (done, closing) == (True, True)
    assert elapsed == pytest.approx(0.505, abs=1e-6)


@pytest.mark.parametrize("close_at", [None, 0.002])
def test_a_transport_already_closing_is_left_alone(close_at: float | None) -> None:
    """The transport closed before the reset (or while it pauses before the abort): False, and
    the peer sees the ordinary end (EOF), not a reset."""

    async def main() -> tuple[bool, str]:
        loop = asyncio.get_running_loop()
        with tcp_pair() as (ours, peer):
            transport = await _transport(ours)
            if close_at is None:
                transport.close()
            else:
                loop.call_later(close_at, transport.close)
            done = await reset_after_drain(transport, ours)
            _, how = await _read_to_end(peer)
            return done, how

    assert run_virtual(main, VirtualClock()) == (False, "eof")


def test_a_socket_that_refuses_so_linger_is_not_aborted() -> None:
    """setsockopt(SO_LINGER) failing (here: a closed socket): False, transport untouched."""

    async def main() -> tuple[bool, bool]:
        with tcp_pair() as (ours, _peer):
            transport = await _transport(ours)
            refusing = socket.socket()
            refusing.close()
            done = await reset_after_drain(transport, refusing)
            closing = transport.is_closing()
            transport.close()
            return done, closing

    assert run_virtual(main, VirtualClock()) == (False, False)
