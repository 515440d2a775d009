"""Secrets in content-encoded bodies never reach a cassette (issue 28, item 5).

httpx sends ``Accept-Encoding: gzip`` by default, so a real upstream answers gzip'd JSON: a
recording made through ``replayproxy record`` (real mitmproxy, real httpx) from a local upstream
that gzips its token response and its event stream, and a client that gzips its request body,
is scanned for every secret; the cassette then replays to httpx, which reads the redacted JSON.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from replayproxy import _store as store

EXE = str(Path(sys.executable).with_name("replayproxy"))

TOKEN_SECRET = "GZ-access-token-0101"
STREAM_SECRET = "GZ-stream-token-0102"
REQUEST_SECRET = "GZ-request-api-key-0103"
SECRETS = [TOKEN_SECRET, STREAM_SECRET, REQUEST_SECRET]


class _GzipUpstream(BaseHTTPRequestHandler):
    """Answers gzip when asked (as real APIs behind nginx or a CDN do)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.headers.get("content-encoding") == "gzip":
            raw = gzip.decompress(raw)
        json.loads(raw)  # the upstream got the client's JSON intact
        gz = "gzip" in self.headers.get("accept-encoding", "")
        if self.path.startswith("/token"):
            body = json.dumps({"access_token": TOKEN_SECRET, "expires_in": 3600}).encode()
            body = gzip.compress(body) if gz else body
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if gz:
                self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        # A streamed gzip'd event stream, one sync-flushed gzip block per event (as
        # compressing middleware that does not buffer sends it).
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-encoding", "gzip")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        encoder = zlib.compressobj(wbits=31)
        events = [{"i": i, "token": f"{STREAM_SECRET}-{i}", "text": "hi"} for i in range(3)]
        for e in events:
            data = encoder.compress(b"data: " + json.dumps(e).encode() + b"\n\n")
            data += encoder.flush(zlib.Z_SYNC_FLUSH)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            time.sleep(0.03)
        tail = encoder.flush()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))


@pytest.fixture
def gzip_upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GzipUpstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


_CLIENT = """
import gzip, json, os, sys, httpx
base = os.environ["REPLAYPROXY_URL"]
with httpx.Client(timeout=20) as c:
    token = c.post(base + "/token", json={"grant": "x"})
    token.raise_for_status()
    body = json.dumps({"api_key": os.environ["API_KEY"], "model": "m"}).encode()
    headers = {"content-type": "application/json"}
    if os.environ.get("GZIP_REQUEST"):
        body = gzip.compress(body)
        headers["content-encoding"] = "gzip"
    with c.stream("POST", base + "/v1/stream", content=body, headers=headers) as r:
        r.raise_for_status()
        events = [line for line in r.iter_lines() if line]
    json.dump({"token": token.json(), "events": events}, sys.stdout)
"""


def _scan(data: bytes, where: str) -> None:
    leaked = [s for s in SECRETS if s.encode() in data]
    assert not leaked, f"{where} holds {leaked}"


def test_gzipped_bodies_are_redacted_through_the_real_proxy(
    tmp_path: Path, gzip_upstream: str
) -> None:
    """Recorded through mitmproxy with httpx: no secret in the cassette or its export; the
    redacted bodies are stored decoded and replay to httpx as the same JSON, redacted."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    cassette = tmp_path / "gzip.cassette"
    rec = subprocess.run(
        [EXE, "record", str(cassette), "--upstream", gzip_upstream, "--listen", "127.0.0.1:0",
         "--confdir", str(tmp_path / "conf"), "--redact-body-field", "/access_token",
         "--redact-body-field", "/token", "--redact-body-field", "/api_key",
         "--", sys.executable, "-c", _CLIENT],
        capture_output=True, timeout=90,
        env={**env, "API_KEY": REQUEST_SECRET, "GZIP_REQUEST": "1"},
    )  # fmt: skip
    assert rec.returncode == 0, rec.stderr.decode()
    live = json.loads(rec.stdout.splitlines()[-1])
    assert live["token"]["access_token"] == TOKEN_SECRET  # the client itself got the secret
    _scan(cassette.read_bytes(), "the cassette")
    _scan(rec.stderr, "record's stderr")
    token, stream = store.load(cassette).interactions
    assert token.request.header("accept-encoding") is not None  # httpx did ask for gzip
    for response in (token.response, stream.response):
        assert response is not None and response.header("content-encoding") is None
    assert json.loads(token.response.body)["access_token"] == "<redacted>"
    assert stream.request.header("content-encoding") is None
    assert json.loads(stream.request.body) == {"api_key": "<redacted>", "model": "m"}
    assert len(stream.response.frames) >= 3  # still one frame per event read, with its time
    text = tmp_path / "gzip.txt"
    exported = subprocess.run(
        [EXE, "cassette", "export", str(cassette), "-o", str(text)], capture_output=True, timeout=60
    )
    assert exported.returncode == 0, exported.stderr.decode()
    _scan(text.read_bytes() + exported.stderr, "the export")
    assert b"<redacted>" in text.read_bytes()

    # Matching compares request bodies as sent, so the replayed client sends its JSON plain
    # (the recorded one, stored decoded, has the redacted api_key as a wildcard).
    replayed = subprocess.run(
        [EXE, "replay", str(cassette), "--listen", "127.0.0.1:0", "--confdir",
         str(tmp_path / "conf"), "--upstream", gzip_upstream, "--", sys.executable, "-c",
         _CLIENT],
        capture_output=True, timeout=90, env={**env, "API_KEY": "another-key"},
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr.decode()
    back = json.loads(replayed.stdout.splitlines()[-1])
    assert back["token"] == {"access_token": "<redacted>", "expires_in": 3600}
    assert [json.loads(e[6:])["token"] for e in back["events"]] == ["<redacted>"] * 3
