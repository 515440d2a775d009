"""Forward replay answers a TLS client with the HTTP version the interaction was recorded with
(``http_version=recorded``, the default), the client's preference (``client``), or a forced one
(``1.1``, ``2``): in both shells (the engine alone, as every replay runs, and a real mitmproxy
built by ``build_stack``, as a recording session replays), a real HTTP/2 recording from a
local h2 server over TLS, and real clients (curl, httpx, our own h2 frame reader).
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy._mitm.stack import build_stack
from replayproxy.testing import cassette, interaction, request, sse_frames
from tests.record.helpers import recording
from tests.replay.h2_peers import FRAMES, H2Upstream, h2_get_through_proxy

HOST = "api.openai.invalid"  # does not resolve: replay must never look it up
URL = f"https://{HOST}/v1/chat/completions"
H1_FRAMES = sse_frames(5, size=40)

CURL = ("curl", "-sS", "--max-time", "10")
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mitmproxy-conf")


@pytest.fixture(scope="module")
def h2_recording(
    ca: Any, ca_pem: Path, confdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Cassette:
    """A cassette recorded in forward mode by httpx ``http2=True`` from a local h2-only TLS
    server that sends each event in its own DATA frame, with pauses."""
    path = tmp_path_factory.mktemp("h2") / "h2.cassette"
    with H2Upstream(ca) as upstream, recording(path, confdir=confdir, upstream_ca=ca_pem) as proxy:
        verify = ssl.create_default_context(cafile=str(proxy.ca_cert))
        with httpx.Client(proxy=proxy.url, verify=verify, http2=True, timeout=10) as client:
            r = client.get(upstream.url + "/v1/stream")
            assert r.http_version == "HTTP/2" and r.content == b"".join(FRAMES)
        assert upstream.alpn == ["h2"]
    recorded = store.load(path)
    return recorded


Proxy = EmbeddedProxy | ReplayServer


@pytest.fixture(scope="module", params=["engine", "mitmproxy"])
def proxy(request: pytest.FixtureRequest, confdir: Path, h2_recording: Cassette) -> Iterator[Proxy]:
    """The forward replay proxy: the engine alone (as ``replay`` runs), or mitmproxy as the
    CLI builds it when recording (origin in a child process); after the recording (one
    embedded mitmproxy per process at a time)."""
    if request.param == "engine":
        idle = ReplaySession(Cassette(), speed=0)
        with ReplayServer.for_session(idle, tls=LeafCerts(confdir)) as server:
            yield server
        return
    stack = build_stack(None, None, origin_process=True)
    with stack.proxy(confdir=confdir) as running:
        yield running


def use(proxy: Proxy, session: ReplaySession) -> None:
    if isinstance(proxy, ReplayServer):
        proxy.use(session)
        return
    replayer = next(a for a in proxy.addons if isinstance(a, Replayer))
    assert isinstance(replayer, Replayer)
    replayer.use(session)


def serve(proxy: Proxy, recorded: Cassette, http_version: str = "recorded") -> None:
    use(proxy, ReplaySession(recorded, speed=1, http_version=http_version))


def h1_cassette() -> Cassette:
    get = request("GET", URL, body=b"")
    return cassette(interaction(H1_FRAMES, request=get, head_ms=5, gap_ms=20))


def curl(proxy: Proxy, url: str, *flags: str) -> tuple[str, bytes]:
    """curl through the proxy: (``%{http_version}``, body)."""
    marker = b"\n--http-version="
    write_out = marker.decode() + "%{http_version}"
    out = subprocess.run(
        [*CURL, "-x", proxy.url, "--cacert", str(proxy.ca_cert), *flags, "-w", write_out, url],
        capture_output=True,
        check=True,
    ).stdout
    body, _, version = out.rpartition(marker)
    return version.decode(), body


def httpx_get(proxy: Proxy, url: str) -> tuple[str, list[bytes]]:
    """httpx ``http2=True`` through the proxy: (``http_version``, the raw chunks read)."""
    verify = ssl.create_default_context(cafile=str(proxy.ca_cert))
    with (
        httpx.Client(proxy=proxy.url, verify=verify, http2=True, timeout=10) as client,
        client.stream("GET", url) as r,
    ):
        return r.http_version, list(r.iter_raw())


def test_the_recording_keeps_http2_and_one_frame_per_data_frame(h2_recording: Cassette) -> None:
    """Recording from an h2 server stores HTTP/2.0 and each DATA frame as its own frame."""
    (recorded,) = h2_recording.interactions
    assert recorded.response is not None
    assert recorded.response.http_version == "HTTP/2.0"
    assert [f.data for f in recorded.response.frames] == list(FRAMES)


@needs_curl
def test_an_http11_recording_answers_curl_http2_over_http11(proxy: Proxy) -> None:
    """curl --http2 offers h2 first, yet a session recorded over HTTP/1.1 answers over 1.1."""
    serve(proxy, h1_cassette())
    version, body = curl(proxy, URL, "--http2")
    assert (version, body) == ("1.1", b"".join(H1_FRAMES))


@needs_curl
def test_client_restores_the_clients_preference(proxy: Proxy) -> None:
    """http_version=client: curl --http2 gets HTTP/2 for the same HTTP/1.1 recording."""
    serve(proxy, h1_cassette(), "client")
    version, body = curl(proxy, URL, "--http2")
    assert (version, body) == ("2", b"".join(H1_FRAMES))


def test_an_http2_recording_answers_httpx_over_h2_chunk_per_write(
    proxy: Proxy, h2_recording: Cassette
) -> None:
    """httpx http2=True gets HTTP/2 and reads each recorded write as its own chunk."""
    serve(proxy, h2_recording)
    (recorded,) = h2_recording.interactions
    assert recorded.response is not None
    version, chunks = httpx_get(proxy, recorded.request.url)
    assert version == "HTTP/2"
    assert chunks == [f.data for f in recorded.response.frames]


def test_an_http2_recording_sends_one_data_frame_per_recorded_write(
    proxy: Proxy, h2_recording: Cassette
) -> None:
    """An h2 client of our own counts DATA frames: exactly the recorded writes, in order."""
    serve(proxy, h2_recording)
    (recorded,) = h2_recording.interactions
    assert recorded.response is not None
    reply = h2_get_through_proxy(proxy.port, "127.0.0.1", str(proxy.ca_cert))
    assert (reply.alpn, reply.status, reply.reset) == ("h2", 200, None)
    assert reply.frames == [f.data for f in recorded.response.frames]


@needs_curl
def test_an_http2_recording_answers_curl_over_h2(proxy: Proxy, h2_recording: Cassette) -> None:
    """curl --http2 gets HTTP/2 and the recorded body."""
    serve(proxy, h2_recording)
    (recorded,) = h2_recording.interactions
    version, body = curl(proxy, recorded.request.url, "--http2")
    assert (version, body) == ("2", b"".join(FRAMES))


def test_forcing_http11_answers_an_h2_recording_over_http11(
    proxy: Proxy, h2_recording: Cassette
) -> None:
    """http_version=1.1: httpx http2=True gets HTTP/1.1 with the same chunks."""
    serve(proxy, h2_recording, "1.1")
    (recorded,) = h2_recording.interactions
    assert recorded.response is not None
    version, chunks = httpx_get(proxy, recorded.request.url)
    assert version == "HTTP/1.1"
    assert chunks == [f.data for f in recorded.response.frames]


def test_forcing_http2_answers_an_http11_recording_over_h2(proxy: Proxy) -> None:
    """http_version=2: an HTTP/1.1 recording reaches our h2 client as one frame per write."""
    serve(proxy, h1_cassette(), "2")
    reply = h2_get_through_proxy(proxy.port, HOST, str(proxy.ca_cert), "/v1/chat/completions")
    assert (reply.alpn, reply.status) == ("h2", 200)
    assert reply.frames == H1_FRAMES


def test_a_client_without_http11_keeps_h2(proxy: Proxy) -> None:
    """http_version=1.1 cannot refuse a client that offers only h2: it gets h2 and the
    recorded frames, not a failed handshake."""
    serve(proxy, h1_cassette(), "1.1")
    path = "/v1/chat/completions"
    reply = h2_get_through_proxy(proxy.port, HOST, str(proxy.ca_cert), path, offers=["h2"])
    assert (reply.alpn, reply.status, reply.frames) == ("h2", 200, H1_FRAMES)


def test_a_client_without_h2_gets_http11_from_an_h2_recording(
    proxy: Proxy, h2_recording: Cassette
) -> None:
    """A client offering only http/1.1 is answered over it, whatever was recorded."""
    serve(proxy, h2_recording, "2")
    reply = h2_get_through_proxy(proxy.port, "127.0.0.1", str(proxy.ca_cert), offers=["http/1.1"])
    assert reply.alpn == "http/1.1"


@pytest.mark.parametrize(
    ("fault", "frames", "reset"),
    [("reset:events=2", 2, 2), ("close:events=2", 2, 2), ("truncate:events=2", 2, None)],
)
def test_faults_over_h2_as_documented(
    proxy: Proxy, h2_recording: Cassette, fault: str, frames: int, reset: int | None
) -> None:
    """Over HTTP/2 a reset or a close is RST_STREAM INTERNAL_ERROR (2) after the frames
    before it, a truncation a clean END_STREAM; the connection stays open either way
    (docs/guides/replay.md, "HTTP/2")."""
    use(proxy, ReplaySession(h2_recording, speed=0, faults=[fault]))
    reply = h2_get_through_proxy(proxy.port, "127.0.0.1", str(proxy.ca_cert), ping_after=True)
    got = (reply.alpn, len(reply.frames), reply.reset, reply.after)
    assert got == ("h2", frames, reset, "open")


@needs_curl
@pytest.mark.parametrize(("flag", "expected"), [((), "1.1"), (("--http-version", "client"), "2")])
def test_the_cli_takes_http_version(
    tmp_path: Path, confdir: Path, flag: tuple[str, ...], expected: str
) -> None:
    """replayproxy replay -- curl --http2: HTTP/1.1 for an HTTP/1.1 recording by default,
    HTTP/2 with --http-version client (curl's preference, as before)."""
    path = tmp_path / "h1.cassette"
    store.save(path, h1_cassette())
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    curl_cmd = [*CURL, "--http2", "-o", os.devnull, "-w", "%{http_version}", URL]
    replay = ["replay", str(path), "--listen", "127.0.0.1:0", "--confdir", str(confdir)]
    done = subprocess.run(
        [sys.executable, "-m", "replayproxy", *replay, "--speed", "0", *flag, "--", *curl_cmd],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == expected
