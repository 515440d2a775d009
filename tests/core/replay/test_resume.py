"""Resumed SSE streams (core/replay/resume.py): which recorded stream a reconnect resumes, and the
rest."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.resume import Resume, find, remainder
from replayproxy._core.schedule.model import FinishKind
from replayproxy.testing import MS, SSE_HEADERS, interaction

URL = "https://api.example.invalid/v1/stream"


def event(i: int, *, with_id: bool = True) -> bytes:
    line = b"id: e%d\n" % i if with_id else b""
    return line + b'data: {"text": "t%d"}\n\n' % i


def stream(
    n: int, *, with_ids: bool = True, gap_ms: int = 10, url: str = URL, body: bytes = b"{}"
) -> Interaction:
    """``n`` events ``gap_ms`` apart after a 50 ms head, with ``id:`` lines or without."""
    events = [event(i, with_id=with_ids) for i in range(n)]
    return interaction(events, url=url, body=body, reason="OK", headers=SSE_HEADERS, gap_ms=gap_ms)


def reconnect(last_id: str, *, body: bytes = b"{}") -> Request:
    return Request("POST", URL, headers=((b"Last-Event-ID", last_id.encode()),), body=body)


def responses_stream(rid: str, n: int, *, gap_ms: int = 10) -> Interaction:
    """A Responses API stream of ``n`` events (response ``rid``), ``gap_ms`` apart from 0."""
    events = []
    for i in range(n):
        kind = "response.created" if i == 0 else "response.output_text.delta"
        doc: dict[str, object] = {"type": kind, "sequence_number": i}
        if i == 0:
            doc["response"] = {"id": rid}
        else:
            doc["delta"] = f"d{i}"
        data = b"event: " + kind.encode() + b"\ndata: " + json.dumps(doc).encode() + b"\n\n"
        events.append(data)
    return interaction(
        events,
        url="https://api.openai.com/v1/responses",
        body=b'{"stream":true}',
        reason="OK",
        headers=SSE_HEADERS,
        head_ms=0,
        gap_ms=gap_ms,
        end_after_ms=0,
    )


def test_last_event_id_resumes_after_that_event() -> None:
    """A reconnect with Last-Event-ID e4 resumes after event 4 (5 events skipped)."""
    found = find(reconnect("e4"), [stream(8)], MatchOptions(), [1])
    assert found == Resume(0, 5, "Last-Event-ID 'e4'")


def test_remainder_serves_exactly_the_rest_with_recorded_gaps() -> None:
    """The rest is events 5.. in order, the first one gap after the head, then gap apart."""
    schedule = remainder(stream(8, gap_ms=10), 5)
    assert schedule.body == b"".join(event(i) for i in range(5, 8))
    assert schedule.head is not None and schedule.head.at_ns == 50 * MS
    assert [w.at_ns for w in schedule.writes] == [60 * MS, 70 * MS, 80 * MS]
    assert schedule.finish.kind is FinishKind.COMPLETE
    assert schedule.finish.at_ns == 81 * MS


def test_unknown_last_event_id_is_an_explained_miss() -> None:
    """An id the recording never sent is a miss whose reason names the id."""
    found = find(reconnect("nope"), [stream(4)], MatchOptions(), [1])
    assert isinstance(found, Miss)
    assert "Last-Event-ID 'nope'" in found.one_line()


def test_recording_without_ids_is_left_to_ordinary_matching() -> None:
    """Without recorded event ids, a Last-Event-ID header changes nothing."""
    assert find(reconnect("e1"), [stream(4, with_ids=False)], MatchOptions(), [0]) is None


def test_a_different_request_is_not_resumed() -> None:
    """Last-Event-ID resumes only a recorded request that matches (body differs: no resume)."""
    assert find(reconnect("e1", body=b'{"x":1}'), [stream(4)], MatchOptions(), [1]) is None


def test_a_recorded_reconnect_is_matched_as_recorded() -> None:
    """When the recording holds the reconnect itself, it is served as recorded, not cut."""
    first = stream(4)
    again = Interaction(reconnect("e1"), first.response, first.end)
    assert find(reconnect("e1"), [first, again], MatchOptions(), [1, 0]) is None


def test_the_last_served_stream_is_resumed() -> None:
    """Two identical recorded streams: the reconnect resumes the one served last."""
    found = find(reconnect("e2"), [stream(4), stream(4)], MatchOptions(), [1, 1])
    assert isinstance(found, Resume) and found.index == 1
    found = find(reconnect("e2"), [stream(4), stream(4)], MatchOptions(), [1, 0])
    assert isinstance(found, Resume) and found.index == 0


def test_starting_after_resumes_a_recorded_response_by_id() -> None:
    """GET /v1/responses/{id}?stream=true&starting_after=3 serves sequence numbers 4.."""
    recorded = [responses_stream("resp_A", 3), responses_stream("resp_B", 8)]
    req = Request("GET", "https://api.openai.com/v1/responses/resp_B?stream=true&starting_after=3")
    found = find(req, recorded, MatchOptions(), [1, 1])
    assert isinstance(found, Resume) and (found.index, found.after) == (1, 4)
    seqs = [
        json.loads(line[6:])["sequence_number"]
        for line in remainder(recorded[1], found.after).body.split(b"\n")
        if line.startswith(b"data: ")
    ]
    assert seqs == [4, 5, 6, 7]


def test_retrieve_without_starting_after_serves_the_whole_stream() -> None:
    """GET .../responses/{id}?stream=true without starting_after replays every event."""
    req = Request("GET", "https://api.openai.com/v1/responses/resp_B?stream=true")
    found = find(req, [responses_stream("resp_B", 5)], MatchOptions(), [0])
    assert isinstance(found, Resume) and found.after == 0


def test_bad_starting_after_is_an_explained_miss() -> None:
    """starting_after=abc is a miss that says it must be an integer."""
    req = Request("GET", "https://api.openai.com/v1/responses/resp_B?stream=true&starting_after=x")
    found = find(req, [responses_stream("resp_B", 5)], MatchOptions(), [0])
    assert isinstance(found, Miss) and "starting_after must be an integer" in found.one_line()


def test_unknown_response_id_and_plain_get_are_not_resumed() -> None:
    """An unknown id, a non-streaming GET, or a recorded GET of the path: ordinary matching."""
    recorded = [responses_stream("resp_B", 5)]
    for url in (
        "https://api.openai.com/v1/responses/resp_C?stream=true",
        "https://api.openai.com/v1/responses/resp_B",
    ):
        assert find(Request("GET", url), recorded, MatchOptions(), [0]) is None
    get = Request("GET", "https://api.openai.com/v1/responses/resp_B?stream=true")
    with_get = [*recorded, Interaction(get, recorded[0].response, recorded[0].end)]
    assert find(get, with_get, MatchOptions(), [0, 0]) is None


@given(st.integers(1, 12), st.data(), st.lists(st.integers(1, 40), min_size=12, max_size=12))
def test_prefix_plus_remainder_is_the_recording(
    n: int, data: st.DataObject, gaps: list[int]
) -> None:
    """For any cut, the skipped events plus the remainder are the recorded body, and the
    remainder's gaps are the recorded gaps."""
    after = data.draw(st.integers(0, n))
    frames, t = [], 50 * MS
    for i in range(n):
        t += gaps[i] * MS
        frames.append(Frame(t, event(i)))
    resp = Response(200, "OK", headers=SSE_HEADERS, head_offset_ns=50 * MS, frames=tuple(frames))
    it = Interaction(Request("GET", URL), resp, Ending(EndKind.COMPLETE, t))
    rest = remainder(it, after)
    assert b"".join(event(i) for i in range(after)) + rest.body == resp.body
    recorded_gaps = [b.offset_ns - a.offset_ns for a, b in itertools.pairwise(frames[after:])]
    served_gaps = [b.at_ns - a.at_ns for a, b in itertools.pairwise(rest.writes)]
    assert served_gaps == recorded_gaps
