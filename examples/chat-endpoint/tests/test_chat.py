"""The chat endpoint tested from the front door: real HTTP to the endpoint (uvicorn on a
loopback port), its provider replayed by replayproxy from a recorded OpenAI stream, with
faults; every assertion on what a browser would receive, through replayproxy's stream capture.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from conftest import Endpoint
from scenario import CONTRACT

from replayproxy.testing import STREAMS, StreamCapture, capture_url, expected_text

EXPECTED = expected_text(STREAMS["openai-chat-text"])  # what the recorded stream says
TERMINAL = ["committed", "rejected"]

pytestmark = pytest.mark.replayproxy(cassette="cassettes/chat-stop.cassette", speed=0)


def chat(endpoint: Endpoint, turn_id: str, *, timeout: float = 10) -> StreamCapture:
    """POST /chat for one turn, captured to its end."""
    return capture_url(
        "POST",
        endpoint.url + "/chat",
        json=endpoint.chat_body(turn_id),
        timeout=timeout,
        terminal=TERMINAL,
    )


def kinds(capture: StreamCapture) -> list[str | None]:
    return [event.event for event in capture.events]


def text_of(capture: StreamCapture) -> str:
    return "".join(e.data["text"] for e in capture.events if e.event == "delta")


def assert_text_intact(capture: StreamCapture) -> None:
    text = text_of(capture)
    assert "\ufffd" not in text, "the endpoint garbled a UTF-8 character split across reads"
    assert text == EXPECTED, (
        f"the endpoint lost text when the provider's SSE frames were split across reads: "
        f"{len(text)} of {len(EXPECTED)} characters streamed"
    )


def test_streaming_headers(endpoint: Endpoint) -> None:
    """text/event-stream, no-cache, X-Accel-Buffering: no, and never compressed."""
    chat(endpoint, "t-headers").assert_streaming_headers(accel_buffering=True)


@pytest.mark.replayproxy(speed=1)
def test_incremental_delivery(endpoint: Endpoint, stream_snapshot: Any) -> None:
    """At the recorded pace (302 events over ~0.6 s) the turn reaches the client in many
    reads spread over time, not in one burst at the end."""
    capture = chat(endpoint, "t-incremental")
    capture.assert_streamed(min_frames=20, min_spread_ms=200)
    capture.assert_framing()
    capture.assert_terminated(TERMINAL)
    capture.assert_stream_ok(contract=CONTRACT)  # incremental = true: the checker judges it too
    # The turn by meaning (event types and fields, the end, streamed, terminated once), in
    # tests/__snapshots__/test_chat/test_incremental_delivery.json; written (and, after a
    # change that is meant, rewritten) by `python -m pytest --replayproxy-snapshot-update`.
    stream_snapshot(capture, contract=CONTRACT)


@pytest.mark.replayproxy(speed=1)  # the contract's incremental rule needs the recorded pace
def test_a_clean_turn_is_committed_and_passes_the_contract(endpoint: Endpoint) -> None:
    """started, the deltas, committed: the whole text, and the checker's contract holds."""
    capture = chat(endpoint, "t-clean")
    assert kinds(capture)[0] == "started" and kinds(capture)[-1] == "committed"
    assert_text_intact(capture)
    capture.assert_terminated(TERMINAL)
    capture.assert_stream_ok(contract=CONTRACT)


@pytest.mark.replayproxy(faults=["split:at=midline,gap=0.0005"])
def test_split_frames(endpoint: Endpoint) -> None:
    """Every provider event cut in the middle of its data line, in separate reads: the
    endpoint reassembles them and loses nothing."""
    capture = chat(endpoint, "t-split")
    assert_text_intact(capture)
    assert kinds(capture)[-1] == "committed"


@pytest.mark.replayproxy(faults=["split:at=utf8,gap=0.0005"])
def test_split_utf8(endpoint: Endpoint) -> None:
    """Reads that end inside a multi-byte character (the stream's dashes and apostrophes)."""
    capture = chat(endpoint, "t-utf8")
    assert_text_intact(capture)


@pytest.mark.replayproxy(cassette="cassettes/chat-length.cassette")
def test_finish_reason_length_is_committed_as_truncated(endpoint: Endpoint) -> None:
    """The provider stopped at max_tokens and said so: a complete stream, committed, marked
    truncated (the answer is cut, the stream is not)."""
    capture = chat(endpoint, "t-length")
    committed = capture.events[-1]
    assert committed.event == "committed"
    assert committed.data["finish_reason"] == "length" and committed.data["truncated"] is True
    assert endpoint.wait_ended("t-length")["truncated"] is True


@pytest.mark.replayproxy(faults=["truncate"])
def test_a_stream_cut_before_done_is_rejected(endpoint: Endpoint) -> None:
    """The provider's stream ends cleanly but without [DONE]: incomplete, so rejected."""
    capture = chat(endpoint, "t-truncate")
    assert kinds(capture)[-1] == "rejected", (
        "committed a turn whose upstream stream ended before [DONE] (an incomplete stream)"
    )
    assert capture.events[-1].data["reason"] == "upstream_incomplete"
    assert endpoint.wait_ended("t-truncate")["status"] == "rejected"


def _cut(fault: str) -> object:
    # At the recorded pace: the contract's incremental rule is judged on real gaps.
    return pytest.param(fault, marks=pytest.mark.replayproxy(faults=[fault], speed=1), id=fault)


@pytest.mark.parametrize(
    "fault", [_cut("close:events=40"), _cut("reset:events=40"), _cut("hang:events=40")]
)
def test_a_closed_connection_is_never_committed(
    endpoint: Endpoint, fault: str, replayproxy: Any
) -> None:
    """The provider's connection is closed, reset or hangs mid-stream: the turn is rejected,
    the client's stream still ends cleanly with its terminal event, and the contract's
    upstream rule agrees (the replay's seen requests say which faults acted)."""
    turn_id = "t-" + fault.split(":")[0]
    capture = chat(endpoint, turn_id)
    assert kinds(capture)[-1] == "rejected", (
        f"committed a turn whose upstream connection was cut ({fault}): a closed connection "
        "is not a finished answer"
    )
    capture.assert_terminated(TERMINAL)
    assert endpoint.wait_ended(turn_id)["status"] == "rejected"
    capture.assert_stream_ok(contract=CONTRACT, requests=replayproxy.requests)


@pytest.mark.replayproxy(speed=1)  # the contract's incremental rule needs the recorded pace
def test_committed_only_when_the_record_agrees(endpoint: Endpoint) -> None:
    """The committed event says what the store holds: same message id, record version,
    finish reason and length of text, and the stored text is the streamed text."""
    capture = chat(endpoint, "t-record")
    committed = capture.events[-1].data
    row = endpoint.turn("t-record")
    assert row is not None and row["status"] == "committed"
    for name in ("message_id", "record_version", "finish_reason", "truncated"):
        assert committed[name] == row[name], f"committed says {name}={committed[name]!r}"
    assert committed["chars"] == len(row["text"]) and row["text"] == text_of(capture)
    capture.assert_stream_ok(contract=CONTRACT, record=row)  # the contract's fields.record


@pytest.mark.replayproxy(speed=0.25)  # 2.4 s for the turn: the cancel lands well before its end
def test_cancel_after_the_first_delta(endpoint: Endpoint) -> None:
    """The user presses stop after the first piece of text: the stream ends with rejected
    (cancelled), nothing is committed, and the turn cannot be cancelled twice."""
    seen: list[str] = []
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", endpoint.url + "/chat", json=endpoint.chat_body("t-cancel")) as r,
    ):
        for line in r.iter_lines():
            if line.startswith("event: "):
                seen.append(line.removeprefix("event: "))
                if seen[-1] == "delta" and seen.count("delta") == 1:
                    cancelled = client.post(endpoint.url + "/chat/t-cancel/cancel")
                    assert cancelled.status_code == 204
    assert seen[:2] == ["started", "delta"] and seen[-1] == "rejected"
    assert seen.count("delta") < 250, "the turn ran on after the cancel"
    row = endpoint.wait_ended("t-cancel")
    assert (row["status"], row["reason"]) == ("rejected", "cancelled")
    again = httpx.post(endpoint.url + "/chat/t-cancel/cancel")
    assert again.status_code == 409


@pytest.mark.replayproxy(speed=1)
def test_reconnect_with_last_event_id_before_the_terminal_event(endpoint: Endpoint) -> None:
    """The client's connection drops after a few events; it reconnects with Last-Event-ID
    and gets exactly the events it missed, the terminal one once, and the whole text."""
    first: list[tuple[str, str]] = []  # (id, text) of the deltas read before the drop
    last_id = ""
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", endpoint.url + "/chat", json=endpoint.chat_body("t-resume")) as r,
    ):
        for line in r.iter_lines():
            if line.startswith("id: "):
                last_id = line.removeprefix("id: ")
            elif line.startswith("data: ") and '"text"' in line:
                first.append((last_id, json.loads(line[6:])["text"]))
            if len(first) == 5:
                break  # the connection drops here (the with block closes it)
    assert last_id == "t-resume:5"
    rest = capture_url(
        "GET",
        endpoint.url + "/chat/t-resume/events",
        headers={"Last-Event-ID": last_id},
        terminal=TERMINAL,
    )
    assert rest.events[0].id == "t-resume:6", "the resumed stream repeats or skips events"
    rest.assert_framing()
    rest.assert_terminated(TERMINAL)
    assert rest.events[-1].event == "committed"
    assert "".join(t for _, t in first) + text_of(rest) == EXPECTED


def test_a_duplicate_turn_id_is_refused(endpoint: Endpoint) -> None:
    """A second POST with a turn id in use is a 409, and the stored turn is unchanged."""
    chat(endpoint, "t-twice")
    before = endpoint.wait_ended("t-twice")
    again = httpx.post(endpoint.url + "/chat", json=endpoint.chat_body("t-twice"))
    assert again.status_code == 409 and "duplicate turn id" in again.json()["error"]
    assert endpoint.turn("t-twice") == before and before["record_version"] == 1
