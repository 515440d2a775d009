"""The simulator over real loopback sockets with httpx: chunks, timing, TLS, faults, records."""

from __future__ import annotations

import json
import socket
import ssl
import time
from typing import Any

import httpx
import pytest

from replayproxy.testing import STREAMS, Behavior, Simulator, plan

CHAT = {"model": "gpt-4.1-nano", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def _stream_pieces(client: httpx.Client, url: str, **kw: Any) -> list[tuple[float, bytes]]:
    """POST and return (arrival time, raw body piece) for each piece httpx hands out."""
    pieces = []
    with client.stream("POST", url, **kw) as r:
        assert r.status_code == 200
        for piece in r.iter_raw():
            pieces.append((time.monotonic(), piece))
    return pieces


def test_one_chunk_per_event(simulator: Simulator) -> None:
    """Each event arrives as its own HTTP chunk, byte for byte, in order."""
    with httpx.Client() as client:
        pieces = _stream_pieces(client, simulator.url + "/v1/messages", json={"stream": True},
                                headers={"x-sim-gap-ms": "5"})  # fmt: skip
    assert [p for _, p in pieces] == list(STREAMS["anthropic-text"].events)
    served = simulator.wait_served(1)[0]
    assert served.stream == "anthropic-text" and served.finish == "complete"
    assert [d for _, d in served.writes] == list(STREAMS["anthropic-text"].events)
    assert served.request.method == "POST" and served.request.path == "/v1/messages"
    assert json.loads(served.request.body) == {"stream": True}
    assert served.head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked" in served.head


def test_configured_gaps_and_ttfb(simulator: Simulator) -> None:
    """Writes follow the configured TTFB and gaps (never early; the client sees the spread)."""
    simulator.behavior = Behavior(ttfb_s=0.2, gap_s=0.08)
    t0 = time.monotonic()
    with httpx.Client() as client:
        pieces = _stream_pieces(client, simulator.url + "/v1beta/models/g:streamGenerateContent",
                                params={"alt": "sse"})  # fmt: skip
    assert [p for _, p in pieces] == list(STREAMS["gemini-text"].events)
    # Lower bounds are exact (nothing is sent early); upper bounds allow a loaded machine.
    first, last = pieces[0][0] - t0, pieces[-1][0] - t0
    assert 0.2 <= first < 1.5  # 200 ms TTFB
    assert 0.36 <= last < 2.0  # then two 80 ms gaps
    served = simulator.wait_served(1)[0]
    offsets = [ns / 1e9 for ns in served.offsets_ns]
    for got, want in zip(offsets, (0.2, 0.28, 0.36), strict=True):
        assert want - 0.005 <= got < want + 1.0


def test_per_request_gap_list_via_query(simulator: Simulator) -> None:
    """Query knobs (sim-*) work like headers: a gap list is applied between writes."""
    with httpx.Client() as client:
        pieces = _stream_pieces(client, simulator.url + "/v1/messages?sim-gap-ms=0,100",
                                json={})  # fmt: skip
    assert len(pieces) == len(STREAMS["anthropic-text"].events)
    served = simulator.wait_served(1)[0]
    assert served.behavior.gap_s == (0.0, 0.1)
    # Writes are scheduled at absolute times (0, 0, .1, .1, .2, ...): never early, and late
    # only by scheduling noise (a late write shortens the next gap rather than shifting all).
    planned = [w.at_s for w in plan(STREAMS["anthropic-text"].events, served.behavior).writes]
    assert planned[:5] == pytest.approx([0.0, 0.0, 0.1, 0.1, 0.2])
    for got, want in zip(served.offsets_ns, planned, strict=True):
        assert want - 0.001 <= got / 1e9 < want + 1.0
    assert served.offsets_ns[-1] / 1e9 >= 0.5  # 11 writes: five 100 ms gaps


def test_merge_coalesces_events_into_one_chunk(simulator: Simulator) -> None:
    """x-sim-merge writes listed events in the same chunk as the previous event."""
    with httpx.Client() as client:
        pieces = _stream_pieces(client, simulator.url + "/v1/messages", json={},
                                headers={"x-sim-merge": "1,2"})  # fmt: skip
    events = STREAMS["anthropic-text"].events
    assert pieces[0][1] == events[0] + events[1] + events[2]
    assert len(pieces) == len(events) - 2


def test_bedrock_eventstream_one_message_per_chunk(simulator: Simulator) -> None:
    """Bedrock ConverseStream is chunked, one AWS event-stream message per chunk."""
    with httpx.Client() as client:
        pieces = _stream_pieces(client, simulator.url + "/model/m/converse-stream", json={})
    assert [p for _, p in pieces] == list(STREAMS["bedrock-converse-text"].events)
    r = httpx.post(simulator.url + "/model/m/converse-stream", headers={"x-sim-status": "429"})
    assert r.status_code == 429 and r.headers["x-amzn-errortype"] == "ThrottlingException"


def test_keep_alive_serves_several_requests(simulator: Simulator) -> None:
    """One connection serves several requests in a row (keep-alive)."""
    with httpx.Client() as client:
        for _ in range(3):
            r = client.post(simulator.url + "/v1/chat/completions", json=CHAT)
            assert r.content == STREAMS["openai-chat-text"].body
        assert client.get(simulator.url + "/v1/models").json()["object"] == "list"
    served = simulator.wait_served(4)
    assert [s.stream for s in served] == ["openai-chat-text"] * 3 + ["openai-models"]


def test_https_with_trustme_ca(
    tls_simulator: Simulator, ssl_client_context: ssl.SSLContext
) -> None:
    """The TLS simulator serves HTTPS with a certificate the trustme CA vouches for."""
    assert tls_simulator.url.startswith("https://127.0.0.1:")
    with httpx.Client(verify=ssl_client_context) as client:
        r = client.post(tls_simulator.url + "/v1/responses", json={"stream": True})
    assert r.status_code == 200
    assert r.content == STREAMS["openai-responses"].body
    with pytest.raises(httpx.ConnectError):
        httpx.get(tls_simulator.url + "/v1/models")  # system CAs do not trust it


def test_reset_fault_is_read_error(simulator: Simulator) -> None:
    """reset_after=N sends N events then a TCP RST, which httpx reports as ReadError."""
    got = []
    with (
        pytest.raises(httpx.ReadError),
        httpx.Client() as client,
        client.stream(
            "POST", simulator.url + "/v1/messages", json={}, headers={"x-sim-reset-after": "3"}
        ) as r,
    ):
        for piece in r.iter_raw():
            got.append(piece)
    assert got == list(STREAMS["anthropic-text"].events[:3])
    served = simulator.wait_served(1)[0]
    assert served.finish == "reset" and len(served.writes) == 3


def test_close_fault_is_remote_protocol_error(simulator: Simulator) -> None:
    """close_after=N ends with FIN before the chunked terminator: RemoteProtocolError."""
    simulator.push(Behavior(close_after=2))
    with pytest.raises(httpx.RemoteProtocolError), httpx.Client() as client:
        client.post(simulator.url + "/v1/chat/completions", json=CHAT)
    assert simulator.wait_served(1)[0].finish == "close"
    # The one-shot behavior is used up: the next request completes.
    r = httpx.post(simulator.url + "/v1/chat/completions", json=CHAT)
    assert r.content == STREAMS["openai-chat-text"].body


def test_hang_fault_is_read_timeout(simulator: Simulator) -> None:
    """hang_after=N goes silent after N events: the client's read timeout fires."""
    with pytest.raises(httpx.ReadTimeout), httpx.Client(timeout=0.3) as client:
        client.post(simulator.url + "/v1/messages", json={}, headers={"x-sim-hang-after": "1"})
    served = simulator.wait_served(1)[0]  # recorded once the client hung up
    assert served.finish == "hang" and len(served.writes) == 1


def test_reset_over_tls(tls_simulator: Simulator, ssl_client_context: ssl.SSLContext) -> None:
    """The reset fault works through TLS; Python's ssl reports that RST as a ragged EOF."""
    # OpenSSL 3 + CPython turn ECONNRESET under TLS into SSLEOFError, which the ssl module
    # suppresses to b"": httpx then sees an incomplete body. curl (test_curl) sees the RST.
    with (
        pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)),
        httpx.Client(verify=ssl_client_context) as client,
    ):
        client.post(tls_simulator.url + "/v1/messages", json={},
                    headers={"x-sim-reset-after": "0"})  # fmt: skip
    assert tls_simulator.wait_served(1)[0].finish == "reset"


@pytest.mark.parametrize("version", ["v1beta", "v1"])
def test_gemini_is_served_under_v1_and_v1beta(simulator: Simulator, version: str) -> None:
    """google-genai 3.x calls the stable /v1 (older ones /v1beta): both stream gemini-text."""
    url = f"{simulator.url}/{version}/models/gemini-2.5-flash:streamGenerateContent"
    with httpx.Client() as client:
        pieces = _stream_pieces(client, url, params={"alt": "sse"}, json={"contents": []})
    assert [p for _, p in pieces] == list(STREAMS["gemini-text"].events)
    served = simulator.wait_served(1)[0]
    assert served.stream == "gemini-text" and served.request.path.startswith(f"/{version}/")


def test_gemini_v1_errors_are_gemini_shaped_and_the_openai_list_stays(simulator: Simulator) -> None:
    """An unknown Gemini method under /v1/models/M:verb is a 404 in Gemini's shape; the OpenAI
    model list at GET /v1/models is untouched."""
    r = httpx.post(simulator.url + "/v1/models/gemini-2.5-flash:countTokens", json={})
    assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND"
    r = httpx.get(simulator.url + "/v1/models")
    assert r.status_code == 200 and r.json()["object"] == "list"


def test_status_knob_gives_provider_error(simulator: Simulator) -> None:
    """x-sim-status answers the provider's JSON error with that status and retry-after."""
    r = httpx.post(simulator.url + "/v1/messages", json={}, headers={"x-sim-status": "529"})
    assert r.status_code == 529
    assert r.json()["error"]["type"] == "overloaded_error"
    assert r.headers["retry-after"] == "1"
    assert r.headers["anthropic-request-id"].startswith("req_")


def test_unknown_path_and_bad_knob(simulator: Simulator) -> None:
    """Unknown paths get a provider-shaped 404; a malformed knob gets a 400 naming it."""
    r = httpx.get(simulator.url + "/v1beta/models")
    assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND"
    r = httpx.post(simulator.url + "/v1/messages", json={}, headers={"x-sim-gap-ms": "soon"})
    assert r.status_code == 400 and "x-sim-gap-ms" in r.json()["error"]["message"]


def test_chunked_request_body_and_expect(simulator: Simulator) -> None:
    """Chunked request bodies and Expect: 100-continue are read completely."""

    def body() -> Any:
        yield b'{"stream": true,'
        yield b' "tools": [{"name": "x"}]}'

    r = httpx.post(simulator.url + "/v1/messages", content=body(),
                   headers={"expect": "100-continue"})  # fmt: skip
    assert r.content == STREAMS["anthropic-tool-use"].body
    req = simulator.wait_served(1)[0].request
    assert req.body == b'{"stream": true, "tools": [{"name": "x"}]}'
    assert req.header("Transfer-Encoding") == "chunked"


def test_garbage_request_gets_400() -> None:
    """A malformed request line gets a 400 and a closed connection, not a crash."""
    with Simulator() as sim:
        with socket.create_connection((sim.host, sim.port), timeout=5) as s:
            s.sendall(b"NONSENSE\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        assert data.startswith(b"HTTP/1.1 400 ")
        r = httpx.get(sim.url + "/v1/models")  # still serving
        assert r.status_code == 200


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n-5\r\n",
        b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        b"POST / HTTP/1.1\r\ncontent-length: -1\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
    ],
)
def test_malformed_framing_gets_400(simulator: Simulator, request_bytes: bytes) -> None:
    """Malformed headers or body framing get a 400 answer, never a crash."""
    with socket.create_connection((simulator.host, simulator.port), timeout=5) as s:
        s.sendall(request_bytes)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 400 ")


def test_stop_mid_stream_is_recorded_as_stopped() -> None:
    """Stopping the simulator during a slow stream records the response as 'stopped'."""
    sim = Simulator(behavior=Behavior(gap_s=5.0)).start()
    try:
        with socket.create_connection((sim.host, sim.port), timeout=5) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            sim.stop()
    finally:
        sim.stop()
    (served,) = sim.served
    assert served.finish == "stopped" and len(served.writes) == 1


def test_wait_served_times_out() -> None:
    """wait_served raises TimeoutError when too few responses finished."""
    with Simulator() as sim, pytest.raises(TimeoutError):
        sim.wait_served(1, timeout=0.05)


def test_stop_ends_hung_connection() -> None:
    """Stopping the simulator ends a hung response and records it."""
    sim = Simulator(behavior=Behavior(hang_after=0)).start()
    try:
        with socket.create_connection((sim.host, sim.port), timeout=5) as s:
            s.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            sim.stop()
            assert s.recv(65536) == b""
    finally:
        sim.stop()
    assert [s.finish for s in sim.served] == ["hang"]
