"""A real recording of an endpoint behind gzip: a loopback server streams the example events
through a gzip compressor (buffered: flushed only at the end; or flushed after every event),
the real recorder (embedded mitmproxy, reverse mode) records it while httpx reads it, and the
checker reports the recording as compressed and, under ``incremental = true``, buffered."""

from __future__ import annotations

import socket
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy.checking import check_cassette
from tests.check.contract_cases import sse_events
from tests.check.recording_cases import app_contract
from tests.record.helpers import load_quiet, recording


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class GzipEndpoint:
    """A one-connection-at-a-time HTTP/1.1 server on 127.0.0.1 answering every request with the
    example SSE stream, gzip-encoded and chunked: ``buffered`` writes the compressor's output as
    it comes (gzip's header at once, everything else after 300 ms at the end), otherwise it
    flushes after each event, 30 ms apart."""

    def __init__(self, *, buffered: bool) -> None:
        self.buffered = buffered
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gzip-endpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(65536)
            if not data:
                return
            head += data
        # The request body is a small JSON read with the head (httpx sends both at once or
        # the head first; the stream does not depend on it).
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"content-encoding: gzip\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        gz = zlib.compressobj(wbits=31)
        for event in sse_events():
            out = gz.compress(event)
            if not self.buffered:
                out += gz.flush(zlib.Z_SYNC_FLUSH)
                time.sleep(0.03)
            if out:
                conn.sendall(_chunk(out))
        if self.buffered:
            time.sleep(0.3)  # the middleware holds the rest until the response ends
        conn.sendall(_chunk(gz.flush()) + b"0\r\n\r\n")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mitmproxy-conf")


def _record(endpoint: GzipEndpoint, path: Path, confdir: Path) -> bytes:
    with (
        recording(path, confdir=confdir, upstream=endpoint.url) as proxy,
        httpx.Client(timeout=10) as client,
        client.stream("POST", proxy.url + "/api/chat", json={"message": "hi"}) as r,
    ):
        return b"".join(r.iter_bytes())  # decoded by httpx


@pytest.fixture
def endpoint(request: pytest.FixtureRequest) -> Iterator[GzipEndpoint]:
    server = GzipEndpoint(buffered=request.param)
    yield server
    server.close()


@pytest.mark.parametrize("endpoint", [True, False], ids=["buffered", "flushed"], indirect=True)
def test_a_recorded_gzip_endpoint_is_reported_compressed_and_buffered_when_it_buffers(
    endpoint: GzipEndpoint, tmp_path: Path, confdir: Path
) -> None:
    """Recorded through the real recorder, the gzip bytes are stored as received; the check
    decodes them and reports http.compressed-stream, plus stream.buffered for the buffering
    endpoint only; never sse.utf8, sse.unterminated or a missing terminal event."""
    path = tmp_path / "app.cassette"
    decoded = _record(endpoint, path, confdir)
    assert decoded == b"".join(sse_events())  # httpx itself decodes the stream fine
    (interaction,) = load_quiet(path).interactions
    assert interaction.response is not None
    assert interaction.response.frames[0].data.startswith(b"\x1f\x8b")  # stored as received
    (report,) = check_cassette(load_quiet(path), contract=app_contract(incremental=True))
    rules = {v.rule: v.severity for v in report.violations}
    if endpoint.buffered:
        assert rules == {"http.compressed-stream": "warning", "stream.buffered": "error"}
    else:
        assert rules == {"http.compressed-stream": "warning"}
