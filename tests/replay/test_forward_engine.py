"""Forward-mode replay served by the engine alone (engine/proxy/tunnel.py): CONNECT answered,
TLS terminated with a certificate from mitmproxy's CA naming the SNI and the CONNECT host,
plain HTTP inside a tunnel, and every way a tunnel can go wrong answered in one line (the
whole proxy suite also runs against this path: ``forward+engine`` in conftest.py)."""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.replay.options import ConnectionLimits
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import UsageError
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy.testing import cassette, interaction

HOST = "api.openai.invalid"  # never resolved: the engine answers every tunnel itself
PATH = "/v1/chat/completions"
BODY = b'{"model":"m","stream":true}'


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> LeafCerts:
    return LeafCerts(tmp_path_factory.mktemp("conf"))


@pytest.fixture
def server(certs: LeafCerts) -> Iterator[ReplayServer]:
    """A forward replay of one stream recorded from ``https://HOST``; the head timeout short,
    so that a silent tunnel ends within the test."""
    it = interaction([b"data: 1\n\n", b"data: 2\n\n"], url=f"https://{HOST}{PATH}")
    limits = ConnectionLimits(head_timeout=1.0)
    options = MatchOptions(allow_repeats=True)
    session = ReplaySession(cassette(it), speed=0, options=options, connection_limits=limits)
    with ReplayServer.for_session(session, tls=certs) as running:
        yield running


def connect(server: ReplayServer, target: str, extra: bytes = b"") -> tuple[socket.socket, bytes]:
    """Open a raw connection, send ``CONNECT target`` (and ``extra`` in the same write), and
    return it with the proxy's first answer."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode() + extra)
    return sock, sock.recv(65536)


def read_all(sock: socket.socket | ssl.SSLSocket) -> bytes:
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (ConnectionError, ssl.SSLError, TimeoutError):
        pass
    return out


def test_httpx_through_the_engine_gets_the_recorded_stream(
    server: ReplayServer, certs: LeafCerts
) -> None:
    """An https:// request through the proxy, verified against mitmproxy's CA, is answered from
    the cassette; the server says which CA clients must trust."""
    assert server.ca_cert == certs.ca_cert and Path(certs.ca_cert).is_file()
    verify = ssl.create_default_context(cafile=certs.ca_cert)
    with httpx.Client(proxy=server.url, verify=verify, timeout=5, trust_env=False) as client:
        r = client.post(f"https://{HOST}{PATH}", content=BODY)
    assert (r.status_code, r.content) == (200, b"data: 1\n\ndata: 2\n\n")
    assert server.summary().served == 1


def test_the_certificate_names_the_sni_and_the_connect_host(
    server: ReplayServer, certs: LeafCerts
) -> None:
    """The leaf certificate is signed by the CA and names the SNI first and the CONNECT target
    too (a client connecting by IP address with another name still verifies)."""
    sock, answer = connect(server, "127.0.0.9:443")
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"
    context = ssl.create_default_context(cafile=certs.ca_cert)
    with context.wrap_socket(sock, server_hostname=HOST) as tls:
        names = [value for _, value in tls.getpeercert()["subjectAltName"]]
    assert names == [HOST, "127.0.0.9"]


def test_a_client_that_does_not_trust_the_ca_is_named_in_one_log_line(
    server: ReplayServer, certs: LeafCerts, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed handshake (the client verifies against other CAs) fails the client with a
    certificate error and logs one warning naming the host and the CA file to trust."""
    sock, _ = connect(server, f"{HOST}:443")
    with (
        caplog.at_level(logging.WARNING, logger="replayproxy"),
        pytest.raises(ssl.SSLCertVerificationError),
        ssl.create_default_context().wrap_socket(sock, server_hostname=HOST),
    ):
        pass
    server.stop()  # the log line is written once the handshake failed on the server's side
    lines = [r.getMessage() for r in caplog.records if "TLS handshake" in r.getMessage()]
    assert len(lines) == 1, lines
    assert HOST in lines[0] and certs.ca_cert in lines[0]


def test_plain_http_inside_a_tunnel_is_matched_against_the_tunnels_host(
    server: ReplayServer,
) -> None:
    """A tunnel that carries plain HTTP (a ws:// or http:// client behind CONNECT) is served
    as HTTP/1.1, its requests matched as sent to ``http://HOST:PORT``."""
    sock, answer = connect(server, f"{HOST}:8080")
    assert answer.startswith(b"HTTP/1.1 200")
    head = f"POST {PATH} HTTP/1.1\r\nHost: {HOST}:8080\r\nContent-Length: {len(BODY)}\r\n"
    sock.sendall(head.encode() + b"Connection: close\r\n\r\n" + BODY)
    reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 200") and b"data: 2" in reply
    assert server.requests[-1].url == f"http://{HOST}:8080{PATH}"


@pytest.mark.parametrize(
    ("target", "extra", "words"),
    [
        ("api.openai.invalid", b"", b"CONNECT needs a HOST:PORT target"),
        (f"{HOST}:443", b"\x16\x03\x01\x00\x05hello", b"sent bytes before the tunnel"),
    ],
    ids=["no port", "bytes before the 200"],
)
def test_a_tunnel_that_cannot_be_opened_gets_a_400_saying_why(
    server: ReplayServer, target: str, extra: bytes, words: bytes
) -> None:
    """A CONNECT without a port, or a client that sends before the tunnel is up: one 400 line
    naming the problem, and the connection closed."""
    sock, answer = connect(server, target, extra)
    answer += read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert words in answer


def test_a_malformed_client_hello_gets_a_400(server: ReplayServer) -> None:
    """Bytes that start like TLS but are no ClientHello (a ServerHello) are answered, not
    waited on."""
    sock, _ = connect(server, f"{HOST}:443")
    sock.sendall(b"\x16\x03\x03\x00\x04\x02\x00\x00\x00")
    reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 400") and b"TLS handshake is malformed" in reply


def test_a_silent_tunnel_is_closed_after_the_head_timeout(server: ReplayServer) -> None:
    """A client that opens a tunnel and says nothing is answered with a 400 once the head
    timeout (1 s here) has passed, and the connection closed: it holds no slot for ever."""
    sock, _ = connect(server, f"{HOST}:443")
    sock.settimeout(10)
    reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 400") and b"no request in the tunnel within 1 s" in reply


def test_an_empty_cassette_explains_the_miss_through_the_tunnel(certs: LeafCerts) -> None:
    """Fail closed through TLS: a request nothing answers gets the explained 500 (the host
    named: forward mode matches the URL as sent), never the network."""
    with ReplayServer.for_session(ReplaySession(Cassette(), speed=0), tls=certs) as server:
        verify = ssl.create_default_context(cafile=certs.ca_cert)
        with httpx.Client(proxy=server.url, verify=verify, timeout=5, trust_env=False) as c:
            r = c.post(f"https://{HOST}{PATH}", content=BODY)
    assert r.status_code == 500 and r.headers["x-replayproxy-unmatched"] == "1"
    assert f"POST {PATH} (host {HOST})" in r.text


def test_a_damaged_ca_is_one_line_naming_the_directory(tmp_path: Path) -> None:
    """A confdir whose CA file is garbage is refused in one line that names the directory
    and how to get a new CA, not a cryptography traceback or its error list."""
    (tmp_path / "mitmproxy-ca.pem").write_text("garbage")
    with pytest.raises(UsageError) as caught:
        LeafCerts(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path) in message
    # cryptography's own words differ between versions; its list of OpenSSL errors is left out.
    assert "OpenSSLError" not in message and "[<" not in message
    assert "move the mitmproxy-ca* files away" in message
