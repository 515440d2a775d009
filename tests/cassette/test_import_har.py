"""``cassette import-har``: a HAR of an openai stream, as Chrome's devtools export it, imports and
replays to the openai SDK with the same text, one frame per event, head and end from its
``timings``, losses listed; base64 content stays byte-exact; a decoded body's
``content-encoding`` is dropped and listed; an empty stream body is refused by name."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from tests.cassette.import_helpers import MESSAGES, real_events, replayed_text, sse_body, text_of

URL = "https://api.openai.com/v1/chat/completions"


def rp(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def har(body: bytes, *, base64_body: bool = False, encoding: str | None = "br") -> dict:
    """One entry in Chrome's HAR 1.2 shape (decoded body, the wire headers, timings in ms)."""
    headers = [{"name": "content-type", "value": "text/event-stream; charset=utf-8"}]
    if encoding:
        headers.append({"name": "content-encoding", "value": encoding})
    content: dict[str, object] = {"size": len(body), "mimeType": "text/event-stream"}
    if base64_body:
        content.update(text=base64.b64encode(body).decode(), encoding="base64")
    else:
        content["text"] = body.decode()
    request_body = json.dumps({"messages": MESSAGES, "model": "gpt-4.1-nano", "stream": True})
    entry = {
        "startedDateTime": "2026-02-12T22:04:52.123Z",
        "time": 1412.5,
        "request": {
            "method": "POST", "url": URL, "httpVersion": "http/2.0",
            "headers": [
                {"name": ":authority", "value": "api.openai.com"},
                {"name": "authorization", "value": "Bearer sk-live-secret"},
                {"name": "content-type", "value": "application/json"},
            ],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": len(request_body),
            "postData": {"mimeType": "application/json", "text": request_body},
        },
        "response": {
            "status": 200, "statusText": "", "httpVersion": "http/2.0", "headers": headers,
            "cookies": [], "content": content, "redirectURL": "", "headersSize": -1,
            "bodySize": -1, "_transferSize": 21344,
        },
        "cache": {},
        "timings": {"blocked": 1.2, "dns": -1, "ssl": -1, "connect": -1, "send": 0.5,
                    "wait": 411.5, "receive": 1000.0, "_blocked_queueing": 0.9},
    }  # fmt: skip
    return {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                    "pages": [], "entries": [entry]}}  # fmt: skip


def test_a_chrome_har_replays_to_the_openai_sdk(tmp_path: Path) -> None:
    """Same text; one frame per event; head at send+wait, last frame at +receive; the
    decoded body's content-encoding dropped and listed; the API key redacted."""
    events = real_events()
    path = tmp_path / "session.har"
    path.write_text(json.dumps(har(sse_body(events))))
    code, output = rp("cassette", "import-har", str(path))
    assert code == 0, output
    out = tmp_path / "session.cassette"
    assert replayed_text(out) == text_of(events)
    x = store.load(out).interactions[0]
    assert x.response is not None and len(x.frames) == len(events) + 1
    assert x.response.head_offset_ns == 412_000_000
    assert x.frames[-1].offset_ns == 1_412_000_000
    assert x.response.header("content-encoding") is None
    assert b"sk-live-secret" not in out.read_bytes()
    code, shown = rp("cassette", "show", str(out))
    assert "content-encoding br (the file holds the decoded body)" in shown
    assert "per-event timing (spread evenly between first and last byte)" in shown


def test_base64_content_is_byte_exact(tmp_path: Path) -> None:
    """``content.encoding: base64`` bodies (here a real gzip'd stream) keep every byte, and a
    content-encoding that matches the bytes is kept."""
    import gzip

    body = gzip.compress(sse_body(real_events()))
    path = tmp_path / "gz.har"
    path.write_text(json.dumps(har(body, base64_body=True, encoding="gzip")))
    code, output = rp("cassette", "import-har", str(path), "-o", str(tmp_path / "x.cassette"))
    assert code == 0, output
    x = store.load(tmp_path / "x.cassette").interactions[0]
    assert x.response is not None and x.response.body == body
    assert x.response.header("content-encoding") == "gzip"


def test_an_empty_stream_body_is_refused_by_name(tmp_path: Path) -> None:
    """No cassette is written; the one line names the file, the entry, the method and URL."""
    path = tmp_path / "empty.har"
    path.write_text(json.dumps(har(b"", encoding=None)))
    code, output = rp("cassette", "import-har", str(path))
    assert code != 0
    assert (
        f"{path}: interaction 0 (POST {URL}): the text/event-stream response body is empty"
        in output
    )
    assert not (tmp_path / "empty.cassette").exists()
