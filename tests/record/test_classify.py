"""How a failed response ended, from mitmproxy's messages, and interaction assembly (pure core)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Request
from replayproxy._core.redaction.secrets import REDACTED, Redactor
from replayproxy._core.replay.assembly import (
    ResponseHead,
    build_interaction,
    classify_end,
    ending_from_error,
)

H1_INCOMPLETE = (
    "HTTP/1 protocol error: peer closed connection without sending complete message body: "
    "incomplete chunked read"
)
H1_SHORT = (
    "HTTP/1 protocol error: peer closed connection without sending complete message body: "
    "received 87 bytes, expected 145"
)


@pytest.mark.parametrize(
    ("message", "reset", "expected"),
    [
        (H1_INCOMPLETE, False, EndKind.INCOMPLETE),
        (H1_SHORT, False, EndKind.INCOMPLETE),
        (H1_INCOMPLETE, True, EndKind.RESET),  # the upstream socket saw ECONNRESET
        ("peer closed connection", False, EndKind.INCOMPLETE),
        ("stream reset by client (INTERNAL_ERROR)", False, EndKind.RESET),
        ("[Errno 104] Connection reset by peer", False, EndKind.RESET),
        ("Client disconnected.", False, EndKind.CLIENT_GONE),
        ("Client disconnected.", True, EndKind.CLIENT_GONE),
        ("stream reset by client (CANCEL)", False, EndKind.CLIENT_GONE),
        ("Connection killed.", False, EndKind.ERROR),
        ("Response body exceeds mitmproxy's body_size_limit.", False, EndKind.ERROR),
    ],
)
def test_classify_after_a_response_head(message: str, reset: bool, expected: EndKind) -> None:
    """mitmproxy's error messages map to end kinds once a response head had arrived."""
    assert classify_end(message, got_response=True, connection_reset=reset) is expected


@given(st.text(), st.booleans())
def test_without_a_head_it_is_always_no_response(message: str, reset: bool) -> None:
    """Whatever the message, no response head means `no_response`."""
    assert classify_end(message, got_response=False, connection_reset=reset) is EndKind.NO_RESPONSE


def test_ending_keeps_message_and_clamps_offset() -> None:
    """The ending carries mitmproxy's message; a negative offset is clamped to 0."""
    assert ending_from_error("Connection killed.", -5, got_response=True) == Ending(
        EndKind.ERROR, 0, "Connection killed."
    )


@given(st.lists(st.tuples(st.integers(0, 10**12), st.binary(max_size=16)), max_size=20))
def test_build_interaction_drops_empty_chunks_and_redacts(chunks: list[tuple[int, bytes]]) -> None:
    """Frames are the non-empty chunks in order, bytes exact; heads are redacted."""
    request = Request("POST", "https://h/v1?key=abc", headers=((b"x-api-key", b"secret"),))
    head = ResponseHead(200, "OK", "HTTP/1.1", ((b"set-cookie", b"s"),), 7)
    interaction = build_interaction(
        request, head, chunks, Ending(EndKind.COMPLETE, 9), recorded_at=1.5, redactor=Redactor()
    )
    assert interaction.response is not None
    assert [(f.offset_ns, f.data) for f in interaction.response.frames] == [
        (t, d) for t, d in chunks if d
    ]
    assert interaction.response.body == b"".join(d for _, d in chunks)
    assert interaction.request.headers == ((b"x-api-key", REDACTED),)
    assert interaction.request.url == "https://h/v1?key=<redacted>"
    assert interaction.response.headers == ((b"set-cookie", REDACTED),)
    assert interaction.response.head_offset_ns == 7
    assert interaction.recorded_at == 1.5


def test_build_interaction_without_head() -> None:
    """No head: the interaction has no response, whatever chunks were passed."""
    interaction = build_interaction(
        Request("GET", "http://h/"),
        None,
        [(1, b"ignored")],
        Ending(EndKind.NO_RESPONSE, 3, "refused"),
        recorded_at=None,
        redactor=Redactor(),
    )
    assert interaction.response is None
    assert interaction.end.kind is EndKind.NO_RESPONSE


def test_tls_verification_failures_are_recognised() -> None:
    """mitmproxy's and OpenSSL's certificate-verify messages are TLS setup failures; others not."""
    from replayproxy._core.replay.assembly import is_tls_verification_failure

    assert is_tls_verification_failure(
        "Server TLS handshake failed. Certificate verify failed: unable to get local issuer "
        "certificate"
    )
    assert is_tls_verification_failure("[SSL: CERTIFICATE_VERIFY_FAILED] self-signed certificate")
    assert not is_tls_verification_failure("Connection refused")
    assert not is_tls_verification_failure("Server TLS handshake failed. handshake timeout")
