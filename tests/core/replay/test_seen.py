"""SeenRequest, its headers mapping and the bounded log of one session (core/replay/seen.py):
redacted as the recorder redacts, case-insensitive, passthroughs resolved once recorded."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.redaction.secrets import NO_REDACTION, Redactor
from replayproxy._core.replay.seen import (
    SEEN_MAX_BODY,
    Headers,
    SeenLog,
    SeenRequest,
    seen_request,
)
from replayproxy.testing import interaction, request

SECRET_HEADERS = (
    (b"Authorization", b"Bearer sk-live-1"),
    (b"X-Api-Key", b"sk-ant-2"),
    (b"Idempotency-Key", b"retry-1"),
    (b"Accept", b"text/event-stream"),
    (b"accept", b"application/json"),
)


def test_headers_are_a_read_only_case_insensitive_mapping() -> None:
    """Any spelling finds a header; repeats join with ", "; names iterate as sent."""
    h = Headers(SECRET_HEADERS)
    assert h["idempotency-key"] == h["IDEMPOTENCY-KEY"] == "retry-1"
    assert h["Accept"] == "text/event-stream, application/json"
    assert list(h) == ["Authorization", "X-Api-Key", "Idempotency-Key", "Accept"]
    assert len(h) == 4
    assert "x-api-key" in h and "missing" not in h and 3 not in h
    assert h.get("missing") is None
    assert h.fields[-1] == ("accept", "application/json")
    assert h == {"authorization": "Bearer sk-live-1", "x-api-key": "sk-ant-2",
                 "idempotency-key": "retry-1",
                 "ACCEPT": "text/event-stream, application/json"}  # fmt: skip
    with pytest.raises(TypeError):
        h["new"] = "x"  # type: ignore[index]
    with pytest.raises(KeyError):
        h["missing"]


def test_seen_request_is_redacted_as_a_cassette_is() -> None:
    """The default redactor hides credentials in headers and the query; the rest is kept."""
    req = request(
        url="https://api.openai.invalid/v1/chat/completions?key=sk-q&alt=sse",
        headers=SECRET_HEADERS,
        body=b'{"user":"u1"}',
    )
    seen = seen_request(req, Redactor(), 2, 1, ("close:events=3,attempt=1",))
    assert seen.method == "POST"
    assert seen.url == "https://api.openai.invalid/v1/chat/completions?key=<redacted>&alt=sse"
    assert seen.headers["authorization"] == "<redacted>"
    assert seen.headers["x-api-key"] == "<redacted>"
    assert seen.headers["idempotency-key"] == "retry-1"
    assert seen.body == b'{"user":"u1"}'
    assert (seen.interaction, seen.attempt, seen.faults) == (2, 1, ("close:events=3,attempt=1",))
    extra = seen_request(req, Redactor.with_extra(["idempotency-key"], (), ["/user"]))
    assert extra.headers["Idempotency-Key"] == "<redacted>"
    assert extra.body == b'{"user":"<redacted>"}'
    assert seen_request(req, NO_REDACTION).headers["authorization"] == "Bearer sk-live-1"


def test_a_miss_has_no_interaction_and_no_attempt() -> None:
    """interaction None forces attempt None; the value is frozen and hashable."""
    seen = seen_request(request(), Redactor(), None, 3)
    assert (seen.interaction, seen.attempt, seen.faults) == (None, None, ())
    assert [f.name for f in dataclasses.fields(SeenRequest)] == [
        "method", "url", "headers", "body", "interaction", "attempt", "faults",
    ]  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen.attempt = 1  # type: ignore[misc]
    assert hash(seen) == hash(seen_request(request(), Redactor()))


def test_a_recorded_passthrough_shows_its_new_index() -> None:
    """The oldest waiting passthrough of the same method and path takes the recorded index
    with attempt 1; one of another path stays None."""
    log = SeenLog()
    other = seen_request(request(url="https://api.openai.invalid/v1/other"), Redactor())
    first = seen_request(request(), Redactor())
    log.add(other, passthrough=True)
    log.add(first, passthrough=True)
    log.add(seen_request(request(), Redactor()), passthrough=True)
    log.recorded(interaction(), 5)
    got = log.requests
    assert [(s.interaction, s.attempt) for s in got] == [(None, None), (5, 1), (None, None)]
    log.recorded(interaction(), 6)
    assert [s.interaction for s in log.requests] == [None, 5, 6]


@given(st.lists(st.binary(max_size=50), max_size=40), st.integers(1, 10), st.integers(1, 2000))
def test_the_log_keeps_the_newest_within_its_bounds(
    bodies: list[bytes], max_requests: int, max_bytes: int
) -> None:
    """Oldest out first; the newest request is always kept; dropped + kept = added."""
    log = SeenLog(max_requests=max_requests, max_bytes=max_bytes)
    for n, body in enumerate(bodies):
        log.add(seen_request(request(body=body), Redactor(), n, 1))
    kept = log.requests
    assert len(kept) + log.dropped == len(bodies)
    assert [s.interaction for s in kept] == list(range(log.dropped, len(bodies)))
    if bodies:
        assert len(kept) >= 1
        assert len(kept) <= max_requests
        kept_bytes = sum(len(s.url) + len(s.body) for s in kept)  # no headers here
        assert len(kept) == 1 or kept_bytes <= max_bytes


def test_headers_count_against_the_byte_budget() -> None:
    """URL, header names and values count, not only bodies: big heads push old ones out."""
    head = ((b"x-big", b"v" * 500),)
    log = SeenLog(max_bytes=1200)
    for n in range(3):
        log.add(seen_request(request(headers=head, body=b""), Redactor(), n, 1))
    assert [s.interaction for s in log.requests] == [1, 2] and log.dropped == 1


def test_a_big_body_is_kept_up_to_the_cap() -> None:
    """A body longer than SEEN_MAX_BODY keeps its first SEEN_MAX_BODY bytes; shorter ones
    are kept whole (the same object: no copy)."""
    big = b"{" + b"x" * (SEEN_MAX_BODY + 10)
    assert seen_request(request(body=big), Redactor()).body == big[:SEEN_MAX_BODY]
    small = b'{"a": 1}'
    assert seen_request(request(body=small), Redactor()).body is small


_NAMES = st.sampled_from([b"Accept", b"accept", b"X-Key", b"x-key", b"Idempotency-Key"])


@given(st.lists(st.tuples(_NAMES, st.binary(max_size=20)), max_size=8))
def test_headers_lookup_property(fields: list[tuple[bytes, bytes]]) -> None:
    """For any header bytes: every spelling of a name reads the latin-1 values sent under any
    spelling, joined in wire order; fields keep every pair; len counts names once."""
    h = Headers(fields)
    for name, _ in fields:
        want = ", ".join(v.decode("latin-1") for k, v in fields if k.lower() == name.lower())
        text = name.decode()
        assert h[text] == h[text.upper()] == h[text.lower()] == want
    assert len(h.fields) == len(fields)
    assert len(h) == len({k.lower() for k, _ in fields})
