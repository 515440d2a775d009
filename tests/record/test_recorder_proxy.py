"""The recorder addon inside a real embedded mitmproxy, against the real simulator, with httpx."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import httpx
import pytest

from replayproxy._core.cassette.model import EndKind
from replayproxy._core.redaction.secrets import REDACTED
from replayproxy.testing import Behavior, Simulator

from .helpers import (
    assert_like_served,
    client_and_base,
    head_header_pairs,
    load_quiet,
    recording,
    wait_for_interactions,
)

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "messages": []}
SCHEDULE = Behavior(ttfb_s=0.08, gap_s=(0.01, 0.06))


def _sim(request: pytest.FixtureRequest, tls: bool) -> Simulator:
    return request.getfixturevalue("tls_sim" if tls else "plain_sim")  # type: ignore[no-any-return]


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
@pytest.mark.parametrize("forward", [True, False], ids=["forward", "reverse"])
def test_stream_recorded_frame_by_frame(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    confdir: Path,
    ca_pem: Path,
    tls: bool,
    forward: bool,
) -> None:
    """Each simulator write becomes one frame with the same bytes and the schedule's offsets."""
    sim = _sim(request, tls)
    sim.behavior = SCHEDULE
    path = tmp_path / "c.cassette"
    upstream = None if forward else sim.url
    with recording(path, confdir=confdir, upstream=upstream, upstream_ca=ca_pem) as proxy:
        client, base = client_and_base(proxy, sim.url, forward)
        with client, client.stream("POST", base + "/v1/messages", json=BODY) as r:
            received = b"".join(r.iter_raw())
    (served,) = sim.served
    (interaction,) = load_quiet(path).interactions
    assert received == served.body
    assert_like_served(interaction, served)
    assert interaction.end.kind is EndKind.COMPLETE
    assert interaction.request.url == sim.url + "/v1/messages"
    assert interaction.request.method == "POST"
    assert interaction.request.body == served.request.body
    assert interaction.response is not None
    assert list(interaction.response.headers) == head_header_pairs(served)
    # the simulator waited 80 ms before the head: the recorded TTFB shows it
    assert 40_000_000 <= interaction.response.head_offset_ns < 1_000_000_000
    assert interaction.recorded_at is not None and abs(interaction.recorded_at - time.time()) < 60


def test_client_gets_first_event_before_last_write(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """While recording, the client receives the first event before the simulator's last write."""
    plain_sim.behavior = Behavior(gap_s=0.05)
    with recording(tmp_path / "c.cassette", confdir=confdir) as proxy:
        client, base = client_and_base(proxy, plain_sim.url, forward=True)
        arrivals: list[int] = []
        with client, client.stream("POST", base + "/v1/messages", json=BODY) as r:
            for chunk in r.iter_raw():
                if chunk:
                    arrivals.append(time.monotonic_ns())
    (served,) = plain_sim.served
    assert len(served.writes) > 5
    # the simulator and this test read the same monotonic clock
    assert arrivals[0] < served.writes[-1][0]
    assert arrivals[0] < served.writes[len(served.writes) // 2][0]


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_reset_mid_stream_is_recorded_as_reset(
    request: pytest.FixtureRequest, tmp_path: Path, confdir: Path, ca_pem: Path, tls: bool
) -> None:
    """An upstream TCP RST after 3 writes is recorded as `reset` with the frames before it."""
    sim = _sim(request, tls)
    sim.behavior = Behavior(gap_s=0.02, reset_after=3)
    path = tmp_path / "c.cassette"
    with recording(path, confdir=confdir, upstream_ca=ca_pem) as proxy:
        client, base = client_and_base(proxy, sim.url, forward=True)
        with client, pytest.raises(httpx.RemoteProtocolError):  # noqa: SIM117
            with client.stream("POST", base + "/v1/messages", json=BODY) as r:
                for _ in r.iter_raw():
                    pass
    (served,) = sim.served
    assert served.finish == "reset"
    (interaction,) = wait_for_interactions(path, 1).interactions
    assert interaction.end.kind is EndKind.RESET
    assert interaction.response is not None
    body = interaction.response.body
    assert body and served.body.startswith(body)
    assert interaction.end.offset_ns >= interaction.frames[-1].offset_ns


def test_close_mid_stream_is_recorded_as_incomplete(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """A FIN without the chunked terminator is `incomplete` (not a reset) with every frame."""
    plain_sim.behavior = Behavior(gap_s=0.02, close_after=3)
    path = tmp_path / "c.cassette"
    with recording(path, confdir=confdir, upstream=plain_sim.url) as proxy:
        client, base = client_and_base(proxy, plain_sim.url, forward=False)
        with client, pytest.raises(httpx.RemoteProtocolError):  # noqa: SIM117
            with client.stream("POST", base + "/v1/messages", json=BODY) as r:
                for _ in r.iter_raw():
                    pass
    (served,) = plain_sim.served
    (interaction,) = wait_for_interactions(path, 1).interactions
    assert interaction.end.kind is EndKind.INCOMPLETE
    assert "incomplete chunked read" in interaction.end.message
    assert_like_served(interaction, served)


def test_client_leaving_mid_stream_is_client_gone(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """A client that disconnects mid-stream leaves a `client_gone` interaction with its frames."""
    plain_sim.behavior = Behavior(hang_after=2)
    path = tmp_path / "c.cassette"
    with recording(path, confdir=confdir) as proxy:
        client, base = client_and_base(proxy, plain_sim.url, forward=True)
        with client, client.stream("POST", base + "/v1/messages", json=BODY) as r:
            got = b""
            for chunk in r.iter_raw():
                got += chunk
                if got.count(b"\n\n") >= 2:
                    break
        (interaction,) = wait_for_interactions(path, 1).interactions
    assert interaction.end.kind is EndKind.CLIENT_GONE
    assert interaction.response is not None and interaction.response.body == got


def test_unreachable_upstream_is_no_response(
    tmp_path: Path, confdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An unreachable upstream: the client gets a 502 and a `no_response` interaction is kept."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    path = tmp_path / "c.cassette"
    with caplog.at_level(logging.WARNING, logger="replayproxy.record"):
        with recording(path, confdir=confdir, upstream=dead) as proxy:
            r = httpx.get(proxy.url + "/v1/models?key=abc", timeout=10)
        assert r.status_code == 502
    (interaction,) = load_quiet(path).interactions
    assert interaction.response is None
    assert interaction.end.kind is EndKind.NO_RESPONSE
    assert interaction.request.url == dead + "/v1/models?key=<redacted>"
    assert any("no response from" in m for m in caplog.messages)


def test_every_flow_is_recorded_not_only_sse(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """JSON responses, errors and empty bodies are recorded too, in order, each complete."""
    path = tmp_path / "c.cassette"
    with recording(path, confdir=confdir) as proxy:
        client, base = client_and_base(proxy, plain_sim.url, forward=True)
        with client:
            models = client.get(base + "/v1/models")
            chat = client.post(base + "/v1/chat/completions", json={"stream": False})
            missing = client.get(base + "/nowhere")
    interactions = load_quiet(path).interactions
    assert [i.request.url.rsplit("/", 1)[1] for i in interactions] == [
        "models",
        "completions",
        "nowhere",
    ]
    bodies = [models.content, chat.content, missing.content]
    for interaction, body, status in zip(interactions, bodies, [200, 200, 404], strict=True):
        assert interaction.end.kind is EndKind.COMPLETE
        assert interaction.response is not None
        assert interaction.response.status == status
        assert interaction.response.body == body


def test_secrets_are_redacted_in_the_file(
    tmp_path: Path, confdir: Path, plain_sim: Simulator
) -> None:
    """Credentials in headers and the `key` parameter never reach the cassette file's bytes."""
    path = tmp_path / "c.cassette"
    secrets = {
        "authorization": "Bearer sk-proj-SECRET0001",
        "x-api-key": "sk-ant-SECRET0002",
        "x-custom-token": "SECRET0003",
        "cookie": "session=SECRET0004",
    }
    with recording(path, confdir=confdir, replayproxy_redact_headers=["X-Custom-Token"]) as proxy:
        client, base = client_and_base(proxy, plain_sim.url, forward=True)
        with client:
            client.get(base + "/v1/models?alt=sse&key=SECRET0005", headers=secrets)
    data = path.read_bytes()
    assert b"SECRET000" not in data
    (interaction,) = load_quiet(path).interactions
    for name in secrets:
        assert interaction.request.header(name) == REDACTED.decode()
    assert interaction.request.url.endswith("/v1/models?alt=sse&key=<redacted>")


def test_failed_https_tunnel_warns_and_records_nothing(
    tmp_path: Path, confdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Forward mode, unreachable HTTPS host: the CONNECT gets a 502, a warning, no interaction."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"https://127.0.0.1:{s.getsockname()[1]}"
    path = tmp_path / "c.cassette"
    with (
        caplog.at_level(logging.WARNING, logger="replayproxy.record"),
        recording(path, confdir=confdir) as proxy,
    ):
        client, base = client_and_base(proxy, dead, forward=True)
        with client, pytest.raises(httpx.ProxyError, match="502"):
            client.get(base + "/v1/models")
    assert load_quiet(path).interactions == ()
    assert any(m.startswith(f"cannot connect to {dead[8:]}") for m in caplog.messages)
