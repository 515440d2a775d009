"""Resumed streams (core/replay/resume.py), exactly: the Resume or Miss returned, what qualifies as
the stream to resume, and the re-timed remainder."""

from __future__ import annotations

import json

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.resume import Resume, find, remainder
from replayproxy.testing import interaction
from tests.core.replay.test_resume import MS, URL, event, reconnect, responses_stream, stream

BASE = "https://api.openai.com/v1/responses/resp_B"


def test_unknown_last_event_id_is_this_miss() -> None:
    """The miss names the request and the first recorded stream with ids, and says why."""
    found = find(reconnect("zz"), [stream(2, with_ids=False), stream(3)], MatchOptions(), [0, 0])
    assert found == Miss(
        "POST /v1/stream",
        1,
        (),
        reason="the request carries Last-Event-ID 'zz', but no recorded stream that matches it "
        "has an event with that id",
    )


def test_the_match_options_decide_which_streams_are_the_same_request() -> None:
    """A reconnect whose body differs only in an ignored field resumes that stream."""
    recorded = [stream(4, body=b'{"a": 1, "user": "x"}')]
    request = reconnect("e1", body=b'{"a": 1, "user": "y"}')
    assert find(request, recorded, MatchOptions(), [1]) is None
    options = MatchOptions(ignore_body_fields=("/user",))
    assert find(request, recorded, options, [1]) == Resume(0, 2, "Last-Event-ID 'e1'")


def _with_type(it: Interaction, content_type: bytes) -> Interaction:
    assert it.response is not None
    headers = ((b"content-type", content_type),)
    return Interaction(
        it.request,
        Response(
            200,
            "OK",
            headers=headers,
            head_offset_ns=it.response.head_offset_ns,
            frames=it.response.frames,
        ),
        it.end,
    )


def test_only_event_streams_are_resumed_whatever_their_parameters() -> None:
    """text/event-stream with parameters is a stream; application/json is not."""
    typed = _with_type(stream(4), b"Text/Event-Stream; charset=utf-8; x=y")
    assert find(reconnect("e1"), [typed], MatchOptions(), [1]) == Resume(0, 2, "Last-Event-ID 'e1'")
    json_typed = _with_type(stream(4), b"application/json")
    assert find(reconnect("e1"), [json_typed], MatchOptions(), [1]) is None


def test_starting_after_is_this_resume() -> None:
    """The Resume says which response and where, for logs."""
    recorded = [responses_stream("resp_B", 8)]
    found = find(
        Request("GET", BASE + "?stream=true&starting_after=3"), recorded, MatchOptions(), [1]
    )
    assert found == Resume(0, 4, "response resp_B starting_after=3")
    found = find(Request("GET", BASE + "?stream=true"), recorded, MatchOptions(), [1])
    assert found == Resume(0, 0, "response resp_B")


def test_an_empty_starting_after_is_this_miss() -> None:
    """starting_after= with no value is not "from the start": it is an explained miss."""
    found = find(
        Request("GET", BASE + "?stream=true&starting_after="),
        [responses_stream("resp_B", 3)],
        MatchOptions(),
        [0],
    )
    assert found == Miss(
        "GET /v1/responses/resp_B?stream=true&starting_after=",
        None,
        (),
        reason="starting_after must be an integer, got ''",
    )


def test_only_a_get_of_a_responses_path_resumes() -> None:
    """POST to the retrieve path is an ordinary request; a recorded GET of another path does
    not stop the resume."""
    recorded = [responses_stream("resp_B", 4)]
    post = Request("POST", BASE + "?stream=true")
    assert find(post, recorded, MatchOptions(), [1]) is None
    models = Interaction(
        Request("GET", "https://api.openai.com/v1/models"), None, Ending(EndKind.NO_RESPONSE, 0)
    )
    get = Request("GET", BASE + "?stream=true&starting_after=0")
    assert find(get, [*recorded, models], MatchOptions(), [1, 0]) == Resume(
        0, 1, "response resp_B starting_after=0"
    )


def _responses(*docs: object) -> Interaction:
    """A Responses API stream of these JSON events, 10 ms apart, the head at 0, ending at 99 ms."""
    return interaction(
        [b"data: " + json.dumps(d).encode() + b"\n\n" for d in docs],
        url="https://api.openai.com/v1/responses",
        body=b'{"stream":true}',
        reason="OK",
        head_ms=0,
        gap_ms=10,
        end=Ending(EndKind.COMPLETE, 99 * MS),
    )


def test_the_response_id_comes_from_one_of_the_first_four_events() -> None:
    """Events that are not objects, or carry no response object, are passed over; an id only
    in the fifth event is not looked for."""
    created = {"type": "response.created", "sequence_number": 2, "response": {"id": "resp_B"}}
    third = _responses([1], {"type": "response.queued"}, created, {"sequence_number": 3})
    get = Request("GET", BASE + "?stream=true&starting_after=2")
    assert find(get, [third], MatchOptions(), [1]) == Resume(
        0, 3, "response resp_B starting_after=2"
    )
    fifth = _responses({}, {}, {}, {}, created)
    assert find(get, [fifth], MatchOptions(), [1]) is None


def test_events_without_a_sequence_number_are_skipped_with_the_rest() -> None:
    """An event with no (integer) sequence number before the cut is skipped too."""
    created = {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_B"}}
    it = _responses(
        created, {"type": "keepalive"}, "text", {"sequence_number": 1}, {"sequence_number": 2}
    )
    get = Request("GET", BASE + "?stream=true&starting_after=0")
    assert find(get, [it], MatchOptions(), [1]) == Resume(0, 3, "response resp_B starting_after=0")


def test_without_starting_after_every_event_is_served() -> None:
    """No starting_after: the whole stream, even events before any sequence number."""
    created = {"type": "response.created", "sequence_number": -1, "response": {"id": "resp_B"}}
    get = Request("GET", BASE + "?stream=true")
    assert find(get, [_responses({"type": "x"}, created)], MatchOptions(), [1]) == Resume(
        0, 0, "response resp_B"
    )


def test_remainder_exact_times_and_tails() -> None:
    """A cut inside a frame sends the rest of it at the head's time; bytes after the last event
    are still sent; asking past the end sends nothing more."""
    both = Frame(60 * MS, event(0) + event(1))
    resp = Response(
        200,
        "OK",
        headers=((b"content-type", b"text/event-stream"),),
        head_offset_ns=50 * MS,
        frames=(both, Frame(70 * MS, event(2) + b": end\n\n")),
    )
    it = Interaction(Request("POST", URL, body=b"{}"), resp, Ending(EndKind.COMPLETE, 75 * MS))
    got = remainder(it, 1)
    assert [(w.at_ns, w.data) for w in got.writes] == [
        (50 * MS, event(1)),
        (60 * MS, event(2) + b": end\n\n"),
    ]
    got = remainder(it, 3)
    assert [(w.at_ns, w.data) for w in got.writes] == [(50 * MS, b": end\n\n")]
    assert got.finish.at_ns == 55 * MS
    assert remainder(it, 4).writes == ()
    empty = Interaction(
        it.request, Response(200, "OK", head_offset_ns=5 * MS), Ending(EndKind.COMPLETE, 9 * MS)
    )
    got = remainder(empty, 1)
    assert (got.writes, got.finish.at_ns) == ((), 9 * MS)
