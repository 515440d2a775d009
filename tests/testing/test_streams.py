"""The canned provider streams: framing per provider, payload bytes as captured, routing."""

from __future__ import annotations

import itertools
import json
import re
import struct
import zlib

import pytest

from replayproxy.testing import STREAMS, Behavior, expected_text, route
from replayproxy.testing._streams import error_body, load_payloads

# One regex per provider framing; each event must match exactly, with a single-line payload.
OPENAI_DATA = re.compile(rb"\Adata: ([^\r\n]+)\n\n\Z")
NAMED = re.compile(rb"\Aevent: ([^\r\n]+)\ndata: ([^\r\n]+)\n\n\Z")
GEMINI_DATA = re.compile(rb"\Adata: ([^\r\n]+)\r\n\r\n\Z")

SOURCES = {
    "openai-chat-text": "openai-chat-text.jsonl",
    "openai-chat-tool-call": "openai-compatible-chat-tool-call.jsonl",
    "openai-responses": "openai-responses-web-search.jsonl",
    "anthropic-text": "anthropic-messages-text.jsonl",
    "anthropic-tool-use": "anthropic-messages-tool-use.jsonl",
    "gemini-text": "gemini-text.jsonl",
    "bedrock-converse-text": "bedrock-converse-text.jsonl",
}


@pytest.mark.parametrize("name", ["openai-chat-text", "openai-chat-tool-call"])
def test_openai_chat_framing(name: str) -> None:
    """OpenAI chat streams are `data: {json}\\n\\n` events ending with `data: [DONE]\\n\\n`."""
    stream = STREAMS[name]
    assert stream.events[-1] == b"data: [DONE]\n\n"
    for event in stream.events[:-1]:
        m = OPENAI_DATA.match(event)
        assert m, event[:80]
        assert json.loads(m.group(1))["object"] == "chat.completion.chunk"


@pytest.mark.parametrize("name", ["openai-responses", "anthropic-text", "anthropic-tool-use"])
def test_named_event_framing(name: str) -> None:
    """Responses/Anthropic events are `event: T\\ndata: {json with type T}\\n\\n`, no [DONE]."""
    stream = STREAMS[name]
    names = []
    for event in stream.events:
        m = NAMED.match(event)
        assert m, event[:80]
        assert json.loads(m.group(2))["type"] == m.group(1).decode()
        names.append(m.group(1))
    assert b"[DONE]" not in stream.body
    last = b"response.completed" if name == "openai-responses" else b"message_stop"
    assert names[-1] == last


def test_anthropic_text_has_ping() -> None:
    """The Anthropic text stream keeps its real `ping` event between content events."""
    assert b'event: ping\ndata: {"type":"ping"}\n\n' in STREAMS["anthropic-text"].events


def test_gemini_framing() -> None:
    """Gemini alt=sse events are `data: {json}\\r\\n\\r\\n`; the last one has finishReason."""
    stream = STREAMS["gemini-text"]
    payloads = []
    for event in stream.events:
        m = GEMINI_DATA.match(event)
        assert m, event[:80]
        payloads.append(json.loads(m.group(1)))
    assert payloads[-1]["candidates"][0]["finishReason"] == "STOP"
    assert all("finishReason" not in p["candidates"][0] for p in payloads[:-1])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_payload_bytes_are_the_captured_lines(name: str) -> None:
    """Each SSE event embeds its jsonl line byte for byte, in order (never re-serialized)."""
    stream = STREAMS[name]
    lines = load_payloads(SOURCES[name])
    assert stream.payloads == lines
    if stream.sse:  # Bedrock carries the line's inner value: see test_bedrock_eventstream_framing
        for event, line in zip(stream.events, lines, strict=False):
            assert line in event


def _aws_message(msg: bytes) -> tuple[dict[str, str], bytes]:
    """Check one AWS event-stream message's lengths and CRCs; return string headers, payload."""
    total, hlen, prelude_crc = struct.unpack(">III", msg[:12])
    assert total == len(msg)
    assert prelude_crc == zlib.crc32(msg[:8])
    assert struct.unpack(">I", msg[-4:])[0] == zlib.crc32(msg[:-4])
    headers, pos = {}, 12
    while pos < 12 + hlen:
        nlen = msg[pos]
        name = msg[pos + 1 : pos + 1 + nlen].decode()
        assert msg[pos + 1 + nlen] == 7  # string header
        (vlen,) = struct.unpack(">H", msg[pos + 2 + nlen : pos + 4 + nlen])
        headers[name] = msg[pos + 4 + nlen : pos + 4 + nlen + vlen].decode()
        pos += 4 + nlen + vlen
    return headers, msg[12 + hlen : -4]


def test_bedrock_eventstream_framing() -> None:
    """Bedrock messages have valid CRCs, the payload key as :event-type, the value's bytes."""
    stream = STREAMS["bedrock-converse-text"]
    assert dict(stream.headers)[b"content-type"] == b"application/vnd.amazon.eventstream"
    kinds = []
    for msg, line in zip(stream.events, stream.payloads, strict=True):
        headers, payload = _aws_message(msg)
        (key,) = json.loads(line)
        assert headers == {
            ":event-type": key,
            ":content-type": "application/json",
            ":message-type": "event",
        }
        assert line == b'{"' + key.encode() + b'":' + payload + b"}"
        kinds.append(key)
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert stream.chunked and not stream.sse
    assert "strawberry" in expected_text(stream)


@pytest.mark.parametrize("name", sorted(set(SOURCES) - {"bedrock-converse-text"}))
def test_sse_headers(name: str) -> None:
    """Every SSE stream declares text/event-stream and carries the provider's request id."""
    stream = STREAMS[name]
    headers = dict(stream.headers)
    assert headers[b"content-type"].startswith(b"text/event-stream")
    if stream.provider == "openai":
        assert headers[b"x-request-id"].startswith(b"req_")
    elif stream.provider == "anthropic":
        assert headers[b"anthropic-request-id"].startswith(b"req_")
    assert stream.sse and stream.status == 200


def test_expected_text() -> None:
    """expected_text reassembles the streamed text / tool arguments from the payloads."""
    assert expected_text(STREAMS["anthropic-text"]).startswith("Hello! I'm doing well")
    assert json.loads(expected_text(STREAMS["openai-chat-tool-call"])) == {
        "location": "San Francisco"
    }
    assert json.loads(expected_text(STREAMS["anthropic-tool-use"]))["elements"]
    assert "strawberry" in expected_text(STREAMS["gemini-text"])
    assert expected_text(STREAMS["openai-chat-json"]) == expected_text(STREAMS["openai-chat-text"])
    assert "\u2019" in expected_text(STREAMS["openai-responses"])  # non-ASCII survives


@pytest.mark.parametrize(
    ("method", "path", "body", "name"),
    [
        ("POST", "/v1/chat/completions", b'{"stream":true}', "openai-chat-text"),
        ("POST", "/v1/chat/completions", b'{"stream":true,"tools":[{}]}', "openai-chat-tool-call"),
        ("POST", "/v1/chat/completions", b'{"model":"x"}', "openai-chat-json"),
        ("POST", "/v1/responses", b'{"stream":true}', "openai-responses"),
        ("POST", "/v1/messages", b'{"stream":true}', "anthropic-text"),
        ("POST", "/v1/messages", b'{"tools":[{"name":"x"}]}', "anthropic-tool-use"),
        ("POST", "/v1beta/models/gemini-3-pro:streamGenerateContent", b"", "gemini-text"),
        ("GET", "/v1/models", b"", "openai-models"),
        ("POST", "/model/anthropic.claude-v2/converse-stream", b"{}", "bedrock-converse-text"),
        ("GET", "/v1/chat/completions", b"", "error-404"),
        ("POST", "/v2/anything", b"not json", "error-404"),
    ],
)
def test_route_by_path(method: str, path: str, body: bytes, name: str) -> None:
    """Requests route to the stream their path and body call for; unknown ones get 404."""
    assert route(method, path, body, Behavior()).name == name


def test_route_overrides() -> None:
    """x-sim-stream picks any stream; an unknown name is a 400; status gives a provider error."""
    assert route("GET", "/x", b"", Behavior(stream="gemini-text")).name == "gemini-text"
    bad = route("GET", "/x", b"", Behavior(stream="nope"))
    assert bad.status == 400 and b"nope" in bad.body
    err = route("POST", "/v1/messages", b"", Behavior(status=529))
    assert err.status == 529 and json.loads(err.body)["error"]["type"] == "overloaded_error"
    assert (b"retry-after", b"1") in err.headers


@pytest.mark.parametrize(
    ("provider", "key"), [("openai", "message"), ("anthropic", "message"), ("gemini", "status")]
)
def test_error_body_shapes(provider: str, key: str) -> None:
    """Error bodies follow each provider's JSON error shape."""
    body = json.loads(error_body(provider, 404, "gone"))
    assert key in body["error"]
    assert json.loads(error_body("bedrock", 429, "slow down")) == {"message": "slow down"}
    if provider == "anthropic":
        assert body["type"] == "error"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_project_parsers_agree(name: str) -> None:
    """The project SSE parser / event-stream decoder see one event per write, payloads intact."""
    from replayproxy._core.wire.eventstream import EventStreamMessage, decode_all
    from replayproxy._core.wire.sse import parse_events

    stream = STREAMS[name]
    if stream.sse:
        events = parse_events(stream.body)
        data = [e.data.encode() for e in events if e.data != "[DONE]"]
        assert data == list(stream.payloads)
        ends = [e.end for e in events]
    else:
        messages = decode_all(stream.body)
        assert all(isinstance(m, EventStreamMessage) for m in messages)
        ends = [m.end for m in messages if isinstance(m, EventStreamMessage)]
    assert ends == list(itertools.accumulate(len(e) for e in stream.events))
