"""The simulator reads any request however its bytes are split across TCP writes (hypothesis)."""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy.testing import STREAMS, Simulator


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    """One simulator for the whole module (hypothesis runs many examples)."""
    with Simulator() as s:
        yield s


def _encode(body: bytes, chunk_sizes: list[int] | None) -> bytes:
    head = b"POST /v1/models?x=1 HTTP/1.1\r\nHost: sim\r\nx-sim-stream: openai-models\r\n"
    if chunk_sizes is None:
        return head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    out, pos = [head + b"Transfer-Encoding: chunked\r\n\r\n"], 0
    for size in [*chunk_sizes, len(body)]:
        piece = body[pos : pos + size]
        if piece:
            out.append(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
        pos += len(piece)
    out.append(b"0\r\ntrailer: x\r\n\r\n")
    return b"".join(out)


def _read_responses(sock: socket.socket, n: int) -> list[bytes]:
    """Read ``n`` pipelined content-length responses; return their bodies."""
    data, bodies = b"", []
    while len(bodies) < n:
        data += sock.recv(65536)
        while b"\r\n\r\n" in data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            bodies.append(rest[:length])
            data = rest[length:]
    return bodies


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bodies=st.lists(st.binary(max_size=300), min_size=1, max_size=3),
    chunked=st.booleans(),
    chunk_sizes=st.lists(st.integers(1, 50), max_size=6),
    cuts=st.sets(st.integers(1, 2000), max_size=8),
)
def test_split_requests_on_keep_alive(
    sim: Simulator, bodies: list[bytes], chunked: bool, chunk_sizes: list[int], cuts: set[int]
) -> None:
    """Pipelined requests split at arbitrary byte positions are each read whole, in order."""
    sim.clear()
    wire = b"".join(_encode(b, chunk_sizes if chunked else None) for b in bodies)
    bounds = [0, *sorted(c for c in cuts if c < len(wire)), len(wire)]
    with socket.create_connection((sim.host, sim.port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for a, b in itertools.pairwise(bounds):
            sock.sendall(wire[a:b])
        assert _read_responses(sock, len(bodies)) == [STREAMS["openai-models"].body] * len(bodies)
    served = sim.wait_served(len(bodies))
    assert [s.request.body for s in served] == bodies
    assert all(s.request.path == "/v1/models" and s.request.query == "x=1" for s in served)
