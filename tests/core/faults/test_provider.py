"""What each provider sends when things go wrong (core/faults/provider.py, transport.py): the
exact error bodies, headers, reason phrases, in-band error events and keepalives."""

from __future__ import annotations

import pytest

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.faults.provider import (
    detect,
    error_body,
    error_event,
    error_headers,
    keepalive_bytes,
    reason_phrase,
    terminal_index,
)
from replayproxy._core.faults.transport import replace_response
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._core.wire.events import EventSpan, event_spans

_OPENAI_500 = (
    b'{"error":{"message":"Internal Server Error","type":"server_error","param":null,"code":null}}'
)


@pytest.mark.parametrize(
    ("provider", "status", "message", "body"),
    [
        (
            "anthropic",
            400,
            None,
            b'{"type":"error","error":{"type":"invalid_request_error","message":"Bad Request"}}',
        ),
        (
            "anthropic",
            401,
            None,
            b'{"type":"error","error":{"type":"authentication_error","message":"Unauthorized"}}',
        ),
        (
            "anthropic",
            403,
            "no",
            b'{"type":"error","error":{"type":"permission_error","message":"no"}}',
        ),
        (
            "anthropic",
            404,
            None,
            b'{"type":"error","error":{"type":"not_found_error","message":"Not Found"}}',
        ),
        (
            "anthropic",
            413,
            None,
            b'{"type":"error","error":{"type":"request_too_large",'
            b'"message":"Request Entity Too Large"}}',
        ),
        (
            "anthropic",
            429,
            None,
            b'{"type":"error","error":{"type":"rate_limit_error","message":"Too Many Requests"}}',
        ),
        (
            "anthropic",
            529,
            None,
            b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        ),
        (
            "anthropic",
            529,
            "busy",
            b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}',
        ),
        (
            "anthropic",
            500,
            None,
            b'{"type":"error","error":{"type":"api_error","message":"Internal Server Error"}}',
        ),
        (
            "anthropic",
            599,
            None,
            b'{"type":"error","error":{"type":"api_error","message":"error"}}',
        ),
        (
            "gemini",
            400,
            None,
            b'{"error":{"code":400,"message":"Bad Request","status":"INVALID_ARGUMENT"}}',
        ),
        (
            "gemini",
            401,
            None,
            b'{"error":{"code":401,"message":"Unauthorized","status":"UNAUTHENTICATED"}}',
        ),
        (
            "gemini",
            403,
            None,
            b'{"error":{"code":403,"message":"Forbidden","status":"PERMISSION_DENIED"}}',
        ),
        (
            "gemini",
            404,
            None,
            b'{"error":{"code":404,"message":"Not Found","status":"NOT_FOUND"}}',
        ),
        (
            "gemini",
            429,
            "slow — down",
            b'{"error":{"code":429,"message":"slow \xe2\x80\x94 down",'
            b'"status":"RESOURCE_EXHAUSTED"}}',
        ),
        (
            "gemini",
            503,
            None,
            b'{"error":{"code":503,"message":"Service Unavailable","status":"UNAVAILABLE"}}',
        ),
        (
            "gemini",
            504,
            None,
            b'{"error":{"code":504,"message":"Gateway Timeout","status":"DEADLINE_EXCEEDED"}}',
        ),
        (
            "gemini",
            500,
            None,
            b'{"error":{"code":500,"message":"Internal Server Error","status":"INTERNAL"}}',
        ),
        ("openai-chat", 500, None, _OPENAI_500),
        (None, 500, None, _OPENAI_500),
        ("bedrock-converse", 500, None, _OPENAI_500),
        (
            "openai-responses",
            499,
            None,
            b'{"error":{"message":"error","type":"invalid_request_error","param":null,"code":null}}',
        ),
        (
            None,
            400,
            "bad",
            b'{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}',
        ),
        (
            None,
            429,
            None,
            b'{"error":{"message":"Too Many Requests","type":"requests","param":null,'
            b'"code":"rate_limit_exceeded"}}',
        ),
        (
            None,
            529,
            None,
            b'{"error":{"message":"Site Overloaded","type":"server_error","param":null,'
            b'"code":null}}',
        ),
    ],
)
def test_error_body_is_the_providers_shape(
    provider: str | None, status: int, message: str | None, body: bytes
) -> None:
    """Each provider's error JSON, byte for byte: type by status, default message, compact."""
    assert error_body(provider, status, message) == body  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "phrase"),
    [(200, "OK"), (429, "Too Many Requests"), (529, "Site Overloaded"), (599, ""), (530, "")],
)
def test_reason_phrase(status: int, phrase: str) -> None:
    """The standard reason phrase; Anthropic's 529 is "Site Overloaded"; unknown is empty."""
    assert reason_phrase(status) == phrase


@pytest.mark.parametrize(
    ("original", "retry_after", "headers"),
    [
        (
            (
                (b"Content-Type", b"text/event-stream"),
                (b"x-request-id", b"r1"),
                (b"content-length", b"10"),
                (b"Transfer-Encoding", b"chunked"),
                (b"content-encoding", b"gzip"),
                (b"cache-control", b"no-cache"),
            ),
            None,
            (
                (b"content-type", b"application/json"),
                (b"x-request-id", b"r1"),
                (b"cache-control", b"no-cache"),
            ),
        ),
        ((), 2.0, ((b"content-type", b"application/json"), (b"retry-after", b"2"))),
        ((), 0.0, ((b"content-type", b"application/json"), (b"retry-after", b"0"))),
        ((), 1.5, ((b"content-type", b"application/json"), (b"retry-after", b"1.5"))),
        ((), 30.25, ((b"content-type", b"application/json"), (b"retry-after", b"30.25"))),
        ((), 3600.0, ((b"content-type", b"application/json"), (b"retry-after", b"3600"))),
        (
            ((b"x-a", b"1"),),
            1234567.0,
            ((b"content-type", b"application/json"), (b"x-a", b"1"), (b"retry-after", b"1234567")),
        ),
    ],
)
def test_error_headers(
    original: tuple[tuple[bytes, bytes], ...],
    retry_after: float | None,
    headers: tuple[tuple[bytes, bytes], ...],
) -> None:
    """Body headers go, JSON content type comes first, retry-after last in whole seconds."""
    assert error_headers(original, retry_after) == headers


def test_replace_response_serves_the_error_when_the_head_was_sent() -> None:
    """status: the error head and body at the recorded head's time, then a clean end."""
    recorded = Schedule(
        Head(7_000, 200, "OK", ((b"content-type", b"text/event-stream"), (b"x-id", b"1"))),
        (Write(9_000, b"data: 1\n\n"),),
        Finish(10_000, FinishKind.RESET),
    )
    got = replace_response(recorded, recorded.head.headers, "gemini", 429, 3.0, None)  # type: ignore[union-attr]
    assert got == Schedule(
        Head(
            7_000,
            429,
            "Too Many Requests",
            (
                (b"content-type", b"application/json"),
                (b"x-id", b"1"),
                (b"retry-after", b"3"),
            ),
        ),
        (
            Write(
                7_000,
                b'{"error":{"code":429,"message":"Too Many Requests",'
                b'"status":"RESOURCE_EXHAUSTED"}}',
            ),
        ),
        Finish(7_000, FinishKind.COMPLETE),
    )


def test_replace_response_without_a_head_is_at_once() -> None:
    """With no recorded head the error response is sent at 0."""
    got = replace_response(
        Schedule(None, (), Finish(5, FinishKind.RESET)), (), "anthropic", 529, None, "x"
    )
    assert got == Schedule(
        Head(0, 529, "Site Overloaded", ((b"content-type", b"application/json"),)),
        (Write(0, b'{"type":"error","error":{"type":"overloaded_error","message":"x"}}'),),
        Finish(0, FinishKind.COMPLETE),
    )


_RESPONSES = (
    b'event: response.created\ndata: {"type":"response.created","response":'
    b'{"id":"resp_1","object":"response","status":"in_progress","model":"m","output":[1]}}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta"}\n\n'
)


def _spans(body: bytes) -> list[EventSpan]:
    return event_spans(body, "text/event-stream")


@pytest.mark.parametrize(
    ("provider", "body", "upto", "etype", "message", "event"),
    [
        (
            "anthropic",
            b"event: ping\ndata: {}\n\n",
            1,
            None,
            None,
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
            b'"message":"Overloaded"}}\n\n',
        ),
        (
            "anthropic",
            b"event: ping\r\ndata: {}\r\n\r\n",
            1,
            "api_error",
            "über",
            b'event: error\r\ndata: {"type":"error","error":{"type":"api_error",'
            b'"message":"\xc3\xbcber"}}\r\n\r\n',
        ),
        (
            "openai-chat",
            b"data: {}\n\n",
            1,
            None,
            None,
            b'data: {"error":{"message":"The server had an error while processing your request.",'
            b'"type":"server_error","param":null,"code":null}}\n\n',
        ),
        (
            "openai-chat",
            b"data: {}\n\n",
            1,
            "t",
            "m",
            b'data: {"error":{"message":"m","type":"t","param":null,"code":null}}\n\n',
        ),
        (
            "openai-responses",
            _RESPONSES,
            2,
            None,
            None,
            b'event: response.failed\ndata: {"type":"response.failed","sequence_number":2,'
            b'"response":{"id":"resp_1","object":"response","status":"failed","model":"m",'
            b'"output":[1],"error":{"code":"server_error","message":"Internal error."}}}\n\n',
        ),
        (
            "openai-responses",
            b'event: response.output_text.delta\ndata: {"type":"x"}\n\n',
            0,
            "rate_limit_exceeded",
            "slow",
            b'event: response.failed\ndata: {"type":"response.failed","sequence_number":0,'
            b'"response":{"status":"failed","error":{"code":"rate_limit_exceeded",'
            b'"message":"slow"},"object":"response","output":[]}}\n\n',
        ),
        (
            "openai-responses",
            b'event: response.created\ndata: {"type":"response.created","response":null}\n\n',
            1,
            None,
            None,
            b'event: response.failed\ndata: {"type":"response.failed","sequence_number":1,'
            b'"response":{"status":"failed","error":{"code":"server_error",'
            b'"message":"Internal error."},"object":"response","output":[]}}\n\n',
        ),
        (
            "gemini",
            b'data: {"candidates":[]}\r\n\r\n',
            1,
            None,
            None,
            b'data: {"error":{"code":503,"message":"The model is overloaded. Please try again '
            b'later.","status":"UNAVAILABLE"}}\r\n\r\n',
        ),
        (
            "gemini",
            b'data: {"candidates":[]}\n\n',
            1,
            "RESOURCE_EXHAUSTED",
            "quota",
            b'data: {"error":{"code":503,"message":"quota","status":"RESOURCE_EXHAUSTED"}}\n\n',
        ),
    ],
)
def test_error_event_is_the_providers_in_band_error(
    provider: str, body: bytes, upto: int, etype: str | None, message: str | None, event: bytes
) -> None:
    """The in-band error event, byte for byte, framed with the body's line ends."""
    assert error_event(provider, body, _spans(body), upto, etype, message) == event  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "created",
    [
        b"data: not json",
        b"data: [1]",
        b"data:",
    ],
)
def test_responses_error_without_a_usable_created_event(created: bytes) -> None:
    """A response.created whose data is not a JSON object gives a minimal failed response."""
    body = b"event: response.created\n" + created + b"\n\n"
    got = error_event("openai-responses", body, _spans(body), 1, None, None)
    assert got == (
        b'event: response.failed\ndata: {"type":"response.failed","sequence_number":1,'
        b'"response":{"status":"failed","error":{"code":"server_error",'
        b'"message":"Internal error."},"object":"response","output":[]}}\n\n'
    )


def test_responses_error_uses_the_first_data_line_of_response_created() -> None:
    """The response object comes from the data: line, not from id: or other fields."""
    body = (
        b'event: response.created\nid: 7\ndata: {"response":{"id":"r9"}}\n\n'
        b'event: response.created\ndata: {"response":{"id":"r10"}}\n\n'
    )
    got = error_event("openai-responses", body, _spans(body), 2, None, None)
    assert b'"response":{"id":"r9","status":"failed"' in got


def test_line_ends_are_sniffed_from_the_first_4096_bytes() -> None:
    """CRLF framing counts only if a blank CRLF line is in the first 4096 bytes."""
    late = b"data: " + b"x" * 4087 + b"\r\n\r\n"  # the blank line ends at byte 4097
    assert error_event("gemini", late, [], 0, "S", "m").endswith(b"}}\n\n")
    early = b"data: " + b"x" * 4086 + b"\r\n\r\n"  # ... at byte 4096
    assert error_event("gemini", early, [], 0, "S", "m").endswith(b"}}\r\n\r\n")


def test_bedrock_has_no_in_band_error() -> None:
    """Bedrock errors are not SSE events: asking for one is a programming error."""
    with pytest.raises(ValueError, match=r"^no in-band error format for bedrock-converse$"):
        error_event("bedrock-converse", b"", [], 0, None, None)


@pytest.mark.parametrize(
    ("provider", "kind", "body", "expected"),
    [
        ("anthropic", "auto", b"data: 1\n\n", b'event: ping\ndata: {"type": "ping"}\n\n'),
        (
            "openai-chat",
            "ping",
            b"data: 1\r\n\r\n",
            b'event: ping\r\ndata: {"type": "ping"}\r\n\r\n',
        ),
        ("openai-chat", "auto", b"data: 1\n\n", b": keep it\n\n"),
        (None, "auto", b"data: 1\r\n\r\n", b": keep it\r\n\r\n"),
        ("anthropic", "comment", b"data: 1\n\n", b": keep it\n\n"),
    ],
)
def test_keepalive_bytes(provider: str | None, kind: str, body: bytes, expected: bytes) -> None:
    """Anthropic pings (or kind=ping); others get an SSE comment; line ends follow the body."""
    assert keepalive_bytes(provider, kind, "keep it", body) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("body", "index"),
    [
        (b"data: 1\n\ndata: [DONE]\n\n", 1),
        (b"data: 1\n\ndata:[DONE]\n\ndata: 2\n\n", 1),
        (b"data: 1\n\ndata: 2\n\n", None),
        (b'data: {"finishReason":"STOP"}\n\ndata: 1\n\n', 0),
        (b"event: message_stop\ndata: {}\n\nevent: ping\ndata: {}\n\n", 0),
        (b"event: response.completed\ndata: {}\n\n", 0),
        (b"event: response.incomplete\ndata: {}\n\n", 0),
        (b"event: response.failed\ndata: {}\n\n", 0),
        (b"event: messageStop\ndata: {}\n\n", 0),
        (b"event: x\ndata: [DONE]\n\n", None),
        (b'event: x\ndata: {"finishReason":1}\n\n', None),
        (b"event: message_stop\ndata: {}\n\nevent: message_stop\ndata: {}\n\n", 1),
        (b"event: response.done\ndata: {}\n\n", None),  # Realtime's, a WebSocket API's
    ],
)
def test_terminal_index(body: bytes, index: int | None) -> None:
    """The last terminal event: [DONE], a finishReason chunk, or a terminal event name."""
    assert terminal_index(body, _spans(body)) == index


def _interaction(url: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Interaction:
    return Interaction(Request("POST", url, headers=headers), None, Ending(EndKind.RESET, 0))


@pytest.mark.parametrize(
    ("url", "headers", "provider"),
    [
        ("https://api.openai.com/v1/chat/completions", (), "openai-chat"),
        ("https://api.openai.com/v1/responses", (), "openai-responses"),
        ("https://api.anthropic.com/v1/messages", (), "anthropic"),
        (
            "https://proxy.example/v1/messages",
            ((b"anthropic-version", b"2023-06-01"),),
            "anthropic",
        ),
        ("https://my.anthropic.example/v2/other", (), "anthropic"),
        ("https://api.anthropic.com/v1/chat/completions", (), "openai-chat"),
        (
            "https://proxy.example/v2/complete",
            ((b"Anthropic-Version", b"2023-06-01"),),
            "anthropic",
        ),
        # /complete is Anthropic's (legacy) path: the error bodies said so already
        ("https://proxy.example/v2/complete", (), "anthropic"),
        ("https://g.example/v1beta/models/g:streamGenerateContent", (), "gemini"),
        # Bedrock has no in-band error event: the faults get None (their defaults)
        ("https://bedrock-runtime.x.amazonaws.com/model/m/converse-stream", (), None),
        (
            "https://bedrock-runtime.x.amazonaws.com/model/m/invoke-with-response-stream",
            (),
            None,
        ),
        ("https://example.com/v2/other", (), None),
        ("/v2/other", (), None),
    ],
)
def test_detect(url: str, headers: tuple[tuple[bytes, bytes], ...], provider: str | None) -> None:
    """The provider comes from the request (an anthropic host is Anthropic whatever the path);
    None for an API without an in-band error event."""
    assert detect(_interaction(url, headers)) == provider


def test_responses_error_finds_response_created_after_other_events() -> None:
    """response.created need not be the first event; data: without a space is read too."""
    body = (
        b"event: response.queued\ndata: {}\n\n"
        b'event: response.created\ndata:{"response":{"id":"r7"}}\n\n'
    )
    got = error_event("openai-responses", body, _spans(body), 2, None, None)
    assert b'"response":{"id":"r7","status":"failed"' in got
