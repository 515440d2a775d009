"""What a replay received (``ReplayServer.requests``, ``ReplaySession.requests``,
``CassetteUse.requests``): every request in order, redacted as a cassette is, with the
interaction, attempt and faults of its serving; and the ``attempt=`` allowance that lets a
retry match. Real loopback sockets, httpx, the `websockets` client, a real mitmproxy."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

import replayproxy
from replayproxy import SeenRequest, use_cassette
from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Request
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession, Served
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import Simulator, cassette, interaction, realtime_turns, ws_interaction

CHAT = interaction([b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n", b"data: [DONE]\n\n"])
OTHER = interaction(
    [b'{"ok":true}'],
    url="https://api.openai.invalid/v1/models",
    body=b"",
    headers=((b"content-type", b"application/json"),),
)
HEADERS = {
    "Authorization": "Bearer sk-live-secret",
    "X-Api-Key": "sk-ant-secret",
    "Idempotency-Key": "idem-1",
}


def _read(client: httpx.Client, url: str, body: bytes, headers: dict[str, str]) -> bytes:
    """The body as far as it came; a cut stream returns what arrived before the cut."""
    got = b""
    try:
        with client.stream("POST", url, content=body, headers=headers) as r:
            for chunk in r.iter_raw():
                got += chunk
    except httpx.HTTPError:
        pass
    return got


def test_replay_server_keeps_every_request_in_order() -> None:
    """Two served requests and a miss: method, full URL, redacted case-insensitive headers,
    body, interaction, attempt and the faults that acted on each serving."""
    faults = ["ttfb:delay=0,interaction=0", "hang:events=1,path=/nowhere"]
    with ReplayServer(cassette(CHAT, OTHER), speed=0, faults=faults) as server:
        with httpx.Client(timeout=10) as client:
            chat = client.post(
                server.url + "/v1/chat/completions?key=sk-q", content=CHAT.request.body,
                headers=HEADERS,
            )  # fmt: skip
            models = client.request("POST", server.url + "/v1/models", headers={"x-n": "2"})
            miss = client.post(server.url + "/v1/nothing", content=b'{"a":1}')
        seen = server.requests
    assert (chat.status_code, models.status_code, miss.status_code) == (200, 200, 500)
    assert [type(s) for s in seen] == [SeenRequest] * 3
    first, second, third = seen
    assert first.method == "POST"
    assert first.url == f"{server.url}/v1/chat/completions?key=<redacted>"
    assert first.body == CHAT.request.body
    assert first.headers["authorization"] == first.headers["AUTHORIZATION"] == "<redacted>"
    assert first.headers["x-api-key"] == "<redacted>"
    assert first.headers["idempotency-key"] == "idem-1"
    assert "sk-live-secret" not in repr(seen) and "sk-ant-secret" not in repr(seen)
    assert (first.interaction, first.attempt, first.faults) == (
        0,
        1,
        ("ttfb:delay=0,interaction=0",),
    )
    assert (second.interaction, second.attempt, second.faults) == (1, 1, ())
    assert second.headers["X-N"] == "2"
    assert (third.interaction, third.attempt, third.faults) == (None, None, ())
    assert third.url == f"{server.url}/v1/nothing" and third.body == b'{"a":1}'
    assert server.requests == server.session.requests == seen


def test_attempt_one_fails_and_the_retry_gets_the_recording() -> None:
    """close:events=2,attempt=1: the first serving is cut after two events, the identical
    retry is served (the allowance) with the whole stream; a third is the usual miss."""
    full = b"".join(f.data for f in CHAT.response.frames)  # type: ignore[union-attr]
    with ReplayServer(cassette(CHAT), speed=0, faults=["close:events=2,attempt=1"]) as server:
        url = server.url + "/v1/chat/completions"
        with httpx.Client(timeout=10) as client:
            first = _read(client, url, CHAT.request.body, HEADERS)
            second = _read(client, url, CHAT.request.body, HEADERS)
            third = client.post(url, content=CHAT.request.body)
    assert first == b"data: 1\n\ndata: 2\n\n"
    assert second == full
    assert third.status_code == 500
    seen = server.requests
    assert [(s.interaction, s.attempt) for s in seen] == [(0, 1), (0, 2), (None, None)]
    assert [s.faults for s in seen] == [("close:events=2,attempt=1",), (), ()]
    assert seen[0].headers["idempotency-key"] == seen[1].headers["idempotency-key"] == "idem-1"
    assert server.summary().unmatched == 1


def test_without_attempt_the_retry_is_a_miss() -> None:
    """The same cut without attempt=: no allowance, the retry is a used-up miss."""
    with ReplayServer(cassette(CHAT), speed=0, faults=["close:events=2"]) as server:
        url = server.url + "/v1/chat/completions"
        with httpx.Client(timeout=10) as client:
            _read(client, url, CHAT.request.body, {})
            retry = client.post(url, content=CHAT.request.body)
    assert retry.status_code == 500
    assert [(s.interaction, s.attempt) for s in server.requests] == [(0, 1), (None, None)]
    assert server.session.misses[0].used_up


def test_a_stored_attempt_fault_allows_its_retries(tmp_path: Path) -> None:
    """A fault stored in the cassette with attempt=2 allows three servings: the second is
    faulted (it names its spec), the first and third are not."""
    path = tmp_path / "c.cassette"
    store.save(path, Cassette((interaction(faults=("status:code=503,attempt=2",)),)))
    session = ReplaySession(path, speed=0)
    results = [session.resolve(CHAT.request) for _ in range(4)]
    assert [type(r).__name__ for r in results] == ["Served", "Served", "Served", "Miss"]
    assert [s.faults for s in session.requests] == [(), ("status:code=503,attempt=2",), (), ()]
    second = results[1]
    assert isinstance(second, Served) and second.schedule.head is not None
    assert second.schedule.head.status == 503


def test_a_websocket_upgrade_and_a_resumed_stream_are_requests() -> None:
    """The upgrade request of a recorded WebSocket session is seen (with its headers); so is
    an SSE reconnect with Last-Event-ID (the resumed rest of interaction 1, attempt 2)."""
    sse = interaction([b"id: 1\ndata: a\n\n", b"id: 2\ndata: b\n\n"], body=b'{"s":1}')
    c = cassette(ws_interaction(realtime_turns()), sse)
    with ReplayServer(c, speed=0, faults=["close:events=1,path=/v1/chat/*"]) as server:
        with connect(server.url.replace("http", "ws", 1) + "/v1/realtime?model=gpt-realtime",
                     open_timeout=10) as ws:  # fmt: skip
            assert b"session.created" in ws.recv(timeout=10).encode()
        url = server.url + "/v1/chat/completions"
        with httpx.Client(timeout=10) as client:
            cut = _read(client, url, b'{"s":1}', {})
            rest = _read(client, url, b'{"s":1}', {"Last-Event-ID": "1"})
    assert (cut, rest) == (b"id: 1\ndata: a\n\n", b"id: 2\ndata: b\n\n")
    upgrade, first, resumed = server.requests
    assert (upgrade.method, upgrade.interaction, upgrade.attempt) == ("GET", 0, 1)
    assert upgrade.headers["upgrade"].lower() == "websocket"
    assert upgrade.url.endswith("/v1/realtime?model=gpt-realtime")
    assert (first.interaction, first.attempt, first.faults) == (
        1,
        1,
        ("close:events=1,path=/v1/chat/*",),
    )
    assert (resumed.interaction, resumed.attempt, resumed.faults) == (1, 2, ())
    assert resumed.headers["last-event-id"] == "1"


def test_concurrent_requests_are_all_kept() -> None:
    """Threads resolving at once: every request is kept once (thread-safe)."""
    its = [interaction(body=b'{"n":%d}' % n) for n in range(40)]
    session = ReplaySession(cassette(*its), speed=0)
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        barrier.wait()
        for n in range(k, 40, 8):
            session.resolve(Request("POST", its[0].request.url, body=b'{"n":%d}' % n))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen = session.requests
    assert sorted(s.body for s in seen) == sorted(i.request.body for i in its)
    assert all(s.body == its[s.interaction].request.body for s in seen if s.interaction is not None)
    assert session.summary().served == 40


@pytest.fixture
def pool() -> Iterator[HostPool]:
    p = HostPool()
    yield p
    p.close()


BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def test_proxy_mode_keeps_them_too(pool: HostPool, tmp_path: Path, simulator: Simulator) -> None:
    """use_cassette() without upstream (mitmproxy): recording shows the passthrough with the
    index it was recorded at; replaying with attempt=1 shows the retry; secrets redacted."""
    path, confdir = tmp_path / "c.cassette", str(tmp_path / "mitmproxy")
    url = simulator.url + "/v1/chat/completions"
    with (
        use_cassette(path, record_mode="once", pool=pool, confdir=confdir, set_env=False) as rp,
        httpx.Client(proxy=rp.url, timeout=30) as client,
    ):
        assert client.post(url, json=BODY, headers=HEADERS).status_code == 200
    recorded = rp.requests
    assert [(s.interaction, s.attempt, s.url) for s in recorded] == [(0, 1, url)]
    assert recorded[0].headers["authorization"] == "<redacted>"
    faults = ["close:events=2,attempt=1"]
    with (
        use_cassette(path, pool=pool, confdir=confdir, set_env=False, speed=0, faults=faults) as rp,
        httpx.Client(proxy=rp.url, timeout=30) as client,
    ):
        cut = _read(client, url, recorded[0].body, HEADERS)
        whole = _read(client, url, recorded[0].body, HEADERS)
    assert len(cut) < len(whole) and whole.endswith(b"data: [DONE]\n\n")
    seen = rp.requests
    assert [(s.method, s.url, s.interaction, s.attempt) for s in seen] == [
        ("POST", url, 0, 1), ("POST", url, 0, 2),
    ]  # fmt: skip
    assert [s.faults for s in seen] == [tuple(faults), ()]
    assert {s.headers["x-api-key"] for s in seen} == {"<redacted>"}
    assert {s.headers["Idempotency-Key"] for s in seen} == {"idem-1"}
    assert replayproxy.SeenRequest is SeenRequest
