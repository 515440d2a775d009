"""Secrets never reach a cassette, an export or stderr; cassette files are private (0600).

A real recording through ``replayproxy record`` (a subprocess, a local upstream, a real
client) carries every kind of credential the defaults cover, plus JSON body fields redacted by
pointer in the request and in the response; the cassette bytes, its text export and both
commands' stderr are then scanned for every secret.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given

from replayproxy import _store as store
from replayproxy._core.cassette.model import Frame, Request
from replayproxy._core.redaction.body_fields import parse_pointers, redact_frames, redact_json
from replayproxy._core.redaction.secrets import DEFAULT_HEADERS, DEFAULT_QUERY_PARAMS, Redactor
from replayproxy.testing.strategies import cuts

EXE = str(Path(sys.executable).with_name("replayproxy"))

HEADER_SECRETS = {
    "authorization": "Bearer sk-HEADER-authorization-0001",
    "x-api-key": "sk-HEADER-x-api-key-0002",
    "api-key": "HEADER-api-key-0003",
    "x-goog-api-key": "HEADER-goog-0004",
    "x-amz-security-token": "HEADER-amz-token-0005",
    "ocp-apim-subscription-key": "HEADER-apim-0006",
    "x-auth-token": "HEADER-auth-token-0007",
    "cookie": "session=HEADER-cookie-0008",
}
QUERY_SECRETS = {
    "key": "QUERY-key-0009",
    "api_key": "QUERY-api-key-0010",
    "access_token": "QUERY-at-0011",
}
BODY_SECRET = "BODY-user-secret-0012"
RESPONSE_SECRET = "RESPONSE-access-token-0013"
STREAM_SECRET = "RESPONSE-stream-secret-0014"
LOST_SECRET = "QUERY-lost-request-0015"
SECRETS = [*HEADER_SECRETS.values(), *QUERY_SECRETS.values(), BODY_SECRET, RESPONSE_SECRET,
           STREAM_SECRET, LOST_SECRET, "HEADER-cookie-0008"]  # fmt: skip


def test_the_defaults_cover_the_listed_credentials() -> None:
    """The three extra headers and two query parameters of issue 9 are redacted by default."""
    assert {"x-amz-security-token", "ocp-apim-subscription-key", "x-auth-token"} <= DEFAULT_HEADERS
    assert {"key", "api_key", "access_token"} <= DEFAULT_QUERY_PARAMS
    req = Request(
        "GET",
        "https://h/x?api_key=A1&keep=1&access_token=A2",
        headers=tuple((k.encode(), v.encode()) for k, v in HEADER_SECRETS.items()),
    )
    out = Redactor().request(req)
    assert out.url == "https://h/x?api_key=<redacted>&keep=1&access_token=<redacted>"
    assert all(v == b"<redacted>" for _, v in out.headers)


def test_pointers_redact_members_elements_and_wildcards() -> None:
    """A pointer redacts one member; ``*`` every member or element; absent paths change nothing."""
    doc = {"user": "u", "messages": [{"name": "a", "x": 1}, {"name": "b"}], "n": [1, 2]}
    (p_user, p_names, p_n1, p_absent) = parse_pointers(
        ["/user", "/messages/*/name", "/n/1", "/no/x"]
    )
    assert redact_json(doc, p_user)[0]["user"] == "<redacted>"
    names = redact_json(doc, p_names)[0]["messages"]
    assert names == [{"name": "<redacted>", "x": 1}, {"name": "<redacted>"}]
    assert redact_json(doc, p_n1)[0]["n"] == [1, "<redacted>"]
    assert redact_json(doc, p_absent) == (doc, False)
    assert doc["user"] == "u"  # never mutated


_EVENTS = [
    b'data: {"id":"1","token":"TOKEN-SECRET-A","text":"hello"}\n\n',
    b'data: {"id":"2","text":"world"}\n\n',
    b'data: {"id":"3","token":"TOKEN-SECRET-B"}\n\ndata: [DONE]\n\n',
]


@given(cuts(sum(map(len, _EVENTS))))
def test_stream_redaction_does_not_depend_on_the_frame_splits(cuts: list[int]) -> None:
    """However the stream was split into frames, every secret is gone, the frames keep their
    count and offsets, and the body equals the redaction of the unsplit body."""
    body = b"".join(_EVENTS)
    bounds = [0, *cuts, len(body)]
    frames = tuple(
        Frame(i * 1000, body[a:b]) for i, (a, b) in enumerate(itertools.pairwise(bounds))
    )
    pointers = parse_pointers(["/token"])
    out = redact_frames(frames, pointers)
    joined = b"".join(f.data for f in out)
    assert b"TOKEN-SECRET" not in joined
    assert [f.offset_ns for f in out] == [f.offset_ns for f in frames]
    assert joined == b"".join(f.data for f in redact_frames((Frame(0, body),), pointers))
    assert b'"text":"hello"' in joined and b"data: [DONE]" in joined


# -- a real recording -------------------------------------------------------------------------


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path.startswith("/lost"):
            # No response at all: the recorder logs the URL (it used to print ?key=SECRET).
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if self.path.startswith("/token"):
            body = json.dumps({"access_token": RESPONSE_SECRET, "expires_in": 3600}).encode()
            ctype = "application/json"
        else:
            body = (
                b'data: {"id":"1","secret":"' + STREAM_SECRET.encode() + b'","text":"hi"}\n\n'
                b"data: [DONE]\n\n"
            )
            ctype = "text/event-stream"
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("set-cookie", "sid=HEADER-cookie-0008")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def upstream_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


_CLIENT = f"""
import os, httpx
base = os.environ["REPLAYPROXY_URL"]
headers = {HEADER_SECRETS!r}
query = {QUERY_SECRETS!r}
with httpx.Client(timeout=20) as c:
    c.post(base + "/v1/chat", params=query, headers=headers,
           json={{"model": "m", "user": "{BODY_SECRET}", "stream": True}}).raise_for_status()
    c.post(base + "/token", headers=headers, json={{"grant": "x"}}).raise_for_status()
    try:
        c.post(base + "/lost", params={{"key": "{LOST_SECRET}"}}, json={{}})
    except httpx.HTTPError:
        pass
"""


def _scan(text: str | bytes, where: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    leaked = [s for s in SECRETS if s.encode() in data]
    assert not leaked, f"{where} holds {leaked}"


def test_no_secret_reaches_the_cassette_the_export_or_stderr(
    tmp_path: Path, upstream_url: str
) -> None:
    """Record with every kind of secret, then scan the cassette, its export, and stderr of
    record, export and a replay that misses; cassette and export files are 0600."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    cassette = tmp_path / "secrets.cassette"
    rec = subprocess.run(
        [EXE, "record", str(cassette), "--upstream", upstream_url, "--listen", "127.0.0.1:0",
         "--confdir", str(tmp_path / "conf"), "--redact-body-field", "/user",
         "--redact-body-field", "/access_token", "--redact-body-field", "/secret",
         "--", sys.executable, "-c", _CLIENT],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert rec.returncode == 0, rec.stderr
    assert "no response from" in rec.stderr  # the log line that used to print ?key=SECRET
    _scan(rec.stderr + rec.stdout, "record's output")
    raw = cassette.read_bytes()
    _scan(raw, "the cassette")
    assert stat.S_IMODE(cassette.stat().st_mode) == 0o600
    loaded = store.load(cassette)
    assert len(loaded.interactions) >= 2
    assert b'"user":"<redacted>"' in loaded.interactions[0].request.body
    exported = tmp_path / "secrets.txt"
    exp = subprocess.run(
        [EXE, "cassette", "export", str(cassette), "-o", str(exported)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert exp.returncode == 0, exp.stderr
    _scan(exported.read_text() + exp.stderr, "the export")
    assert stat.S_IMODE(exported.stat().st_mode) == 0o600
    miss = f"""
import os, httpx
httpx.post(os.environ["REPLAYPROXY_URL"] + "/v1/chat", params={QUERY_SECRETS!r},
           headers={HEADER_SECRETS!r}, json={{"model": "other", "user": "{BODY_SECRET}"}})
"""
    rep = subprocess.run(
        [EXE, "replay", str(cassette), "--upstream", upstream_url, "--listen", "127.0.0.1:0",
         "--confdir", str(tmp_path / "conf"), "--", sys.executable, "-c", miss],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert rep.returncode == 1 and "unmatched" in rep.stderr, rep.stderr
    _scan(rep.stderr + rep.stdout, "replay's output")
