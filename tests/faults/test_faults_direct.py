"""Socket-level faults straight from the replay origin (Python API, no mitmproxy hop).

Here the client's socket is the origin's socket, so a ``reset`` is a real TCP RST
(``ECONNRESET``). Through mitmproxy the replayer re-creates it toward HTTP/1 clients
(tests/replay/test_proxy.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.faults import parse
from replayproxy._engine.server import ReplayServer
from tests.faults.builders import interaction


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[ReplayServer] = []

    def start(*faults: str, stored: tuple[str, ...] = ()) -> ReplayServer:
        it = interaction("anthropic-text", gap_ms=5, ttfb_ms=5, faults=stored)
        server = ReplayServer(Cassette((it,)), speed=0, faults=[parse(f) for f in faults])
        servers.append(server.start())
        return server

    yield start
    for s in servers:
        s.stop()


def _read(server: ReplayServer, timeout: float = 2.0) -> tuple[list[bytes], BaseException | None]:
    chunks: list[bytes] = []
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", server.url + "/v1/messages", content=b"") as r,
        ):
            chunks.extend(r.iter_raw())
    except httpx.HTTPError as e:
        return chunks, e
    return chunks, None


def test_reset_is_a_real_rst(serve) -> None:  # type: ignore[no-untyped-def]
    """reset (given from Python as a FaultSpec) reaches httpx as ECONNRESET after the events."""
    chunks, error = _read(serve("reset:events=4"))
    assert isinstance(error, httpx.ReadError) and "104" in str(error)
    assert b"".join(chunks).count(b"\n\n") == 4


def test_close_is_an_incomplete_chunked_body(serve) -> None:  # type: ignore[no-untyped-def]
    """close ends with FIN but no terminator: httpx raises RemoteProtocolError (incomplete)."""
    chunks, error = _read(serve("close:events=2"))
    assert isinstance(error, httpx.RemoteProtocolError)
    assert "incomplete chunked read" in str(error)
    assert b"".join(chunks).count(b"\n\n") == 2


def test_truncate_is_a_clean_end(serve) -> None:  # type: ignore[no-untyped-def]
    """truncate ends the chunked body properly: no error, no message_stop."""
    chunks, error = _read(serve(stored=("truncate",)))
    assert error is None
    assert b"message_delta" in b"".join(chunks) and b"message_stop" not in b"".join(chunks)


def test_hang_keeps_the_connection_open(serve) -> None:  # type: ignore[no-untyped-def]
    """hang sends nothing more and never closes: the client's read timeout fires."""
    t0 = time.monotonic()
    chunks, error = _read(serve("hang:events=3"), timeout=0.5)
    assert isinstance(error, httpx.ReadTimeout)
    assert 0.4 <= time.monotonic() - t0 < 5
    assert b"".join(chunks).count(b"\n\n") == 3


def test_replay_time_and_stored_faults_combine(serve) -> None:  # type: ignore[no-untyped-def]
    """A stored fault and a replay-time fault both apply (stored first)."""
    chunks, error = _read(serve("reset:events=2", stored=("drop:event=0",)))
    body = b"".join(chunks)
    assert isinstance(error, httpx.ReadError)
    assert b"message_start" not in body and body.count(b"\n\n") == 2


@pytest.mark.parametrize("fault", ["error:events=20", "truncate"])
def test_openai_responses_error_and_truncate(fault: str) -> None:
    """Responses: iterating never raises; only get_final_response() raises RuntimeError."""
    import json
    from dataclasses import replace

    import openai

    from replayproxy._core.matching.differences import MatchOptions

    it = interaction("openai-responses", gap_ms=1, ttfb_ms=1)
    body = json.dumps({"input": "hi", "model": "gpt-4o-mini", "stream": True}).encode()
    it = replace(it, request=replace(it.request, body=body))
    options = MatchOptions(allow_repeats=True)
    with ReplayServer(Cassette((it,)), speed=0, faults=[fault], options=options) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=5)
        events = [
            e.type for e in client.responses.create(model="gpt-4o-mini", input="hi", stream=True)
        ]
        assert "response.completed" not in events
        if fault.startswith("error"):
            assert events[-1] == "response.failed" and len(events) == 21
        with (
            pytest.raises(RuntimeError, match=r"response\.completed"),
            client.responses.stream(model="gpt-4o-mini", input="hi") as stream,
        ):
            for _ in stream:
                pass
            stream.get_final_response()
