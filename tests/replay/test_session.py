"""ReplaySession (engine/session.py) without sockets: what each request resolves to, the
totals and their exit line, the unmatched response, and the up-front check of stored faults, each
stated exactly (speed: tests/core/replay/test_checks.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core import faults as faults_mod
from replayproxy._core.cassette.model import Request
from replayproxy._core.faults import parse
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.options import ReplaySettings
from replayproxy._core.replay.record_mode import RecordMode
from replayproxy._core.schedule.model import Write
from replayproxy._core.wire.error_body import error_body
from replayproxy._engine.failsafe import ReplayFailure, unmatched_response
from replayproxy._engine.session import (
    Passthrough,
    ReplaySession,
    Served,
    Summary,
    check_stored_faults,
    parse_faults,
)
from replayproxy._errors import CassetteError, CassetteFormatError, UsageError
from replayproxy.testing import MS, cassette, interaction, ws_interaction, ws_text

IT = interaction([b"data: 1\n\n", b"data: 2\n\n"], gap_ms=10, head_ms=20)
OTHER = interaction([b"data: x\n\n"], url="https://api.openai.invalid/v1/other")
MISSING = Request("POST", "https://api.openai.invalid/v1/nothing?key=SECRET", body=b"{}")


# -- the exit line -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        (Summary(1, 0, (), 1),
         "replayproxy: 1 interaction served, 0 unmatched requests, "
         "0 of 1 recorded interaction never used"),
        (Summary(2, 1, (0, 3), 5, new=1, errors=2),
         "replayproxy: 2 interactions served, 1 unmatched request, 2 replay errors, "
         "2 of 5 recorded interactions never used (#0, #3), 1 new interaction recorded"),
        (Summary(0, 2, (), 0, new=3, errors=1),
         "replayproxy: 0 interactions served, 2 unmatched requests, 1 replay error, "
         "0 of 0 recorded interactions never used, 3 new interactions recorded"),
        (Summary(0, 0, tuple(range(10)), 10),
         "replayproxy: 0 interactions served, 0 unmatched requests, 10 of 10 recorded "
         "interactions never used (#0, #1, #2, #3, #4, #5, #6, #7, #8, #9)"),
        (Summary(0, 0, tuple(range(11)), 11),
         "replayproxy: 0 interactions served, 0 unmatched requests, 11 of 11 recorded "
         "interactions never used (#0, #1, #2, #3, #4, #5, #6, #7, #8, #9, ...)"),
    ],
)  # fmt: skip
def test_summary_line(summary: Summary, line: str) -> None:
    """The exit line: counts with English plurals, errors only when there are some, at most
    10 unused interactions named, new ones only when some were recorded."""
    assert summary.line() == line


# -- the unmatched response ----------------------------------------------------------------------


def test_unmatched_response_is_the_providers_error_shape() -> None:
    """500, the provider's JSON error (by the request's path) with the full explanation, the
    unmatched marker, the one-line explanation header and the body's length."""
    miss = Miss("POST /v1/chat/completions?x=1", None, ())
    status, headers, body = unmatched_response(miss)
    assert status == 500
    assert json.loads(body)["error"]["message"] == miss.explain()
    extra, _ = error_body("/v1/chat/completions", miss.explain(), status=500)
    assert extra[0] == (b"content-type", b"application/json")
    assert headers == (
        *extra,
        (b"x-replayproxy-unmatched", b"1"),
        (b"x-replayproxy-explanation", miss.short().encode()),
        (b"content-length", str(len(body)).encode()),
    )
    # The path decides the shape: Anthropic's error type for /v1/messages.
    _, _, anthropic = unmatched_response(miss, "/v1/messages")
    assert json.loads(anthropic)["type"] == "error"
    assert json.loads(body) != json.loads(anthropic)


# -- up-front checks -----------------------------------------------------------------------------


def test_parse_faults_parses_strings_and_keeps_specs() -> None:
    """Strings are parsed; a FaultSpec passes through as it is."""
    spec = parse("jitter:ms=5")
    got = parse_faults(["close:events=1", spec])
    assert got == (parse("close:events=1"), spec) and got[1] is spec


def test_a_cassette_built_in_code_is_validated_field_by_field() -> None:
    """A Cassette object has not been through a loader: a bad field is a CassetteFormatError
    naming the interaction, without a path."""
    bad = replace(IT, request=replace(IT.request, method=""))
    with pytest.raises(CassetteFormatError) as info:
        check_stored_faults(cassette(IT, bad))
    assert str(info.value).startswith("cassette: interaction 1: ")
    assert info.value.path is None
    check_stored_faults(cassette(IT, bad), "loaded.cassette")  # loaded: its loader checked


def test_a_bad_stored_fault_stops_replay_naming_the_interaction() -> None:
    """A stored fault that does not parse: CassetteFormatError naming the interaction, its
    request, the fault (first 60 characters) and the parser's reason, with the source path."""
    long = "nonsense:" + "x" * 80
    bad = replace(OTHER, faults=(long,))
    with pytest.raises(CassetteFormatError) as info:
        check_stored_faults(cassette(IT, bad), Path("c.cassette"))
    reason = info.value.reason
    assert reason.startswith(f"interaction 1 (POST /v1/other): stored fault {long[:60]!r}: ")
    assert info.value.path == "c.cassette"
    with pytest.raises(CassetteFormatError) as built:
        check_stored_faults(cassette(bad))
    assert built.value.path is None and built.value.reason.startswith("interaction 0 (POST")


# -- the session: construction ------------------------------------------------------------------


def test_a_record_mode_needs_a_path() -> None:
    """Recording into a Cassette object is refused in one line naming the mode."""
    with pytest.raises(UsageError, match=r"^record mode once needs a cassette path to record to$"):
        ReplaySession(cassette(IT), record_mode="once")


def test_a_missing_cassette_is_an_error_unless_missing_ok(tmp_path: Path) -> None:
    """In replay-only mode a missing file is a CassetteError; with missing_ok it is an empty
    cassette (every request a miss) and ``exists`` says so."""
    path = tmp_path / "none.cassette"
    with pytest.raises(CassetteError):
        ReplaySession(path)
    s = ReplaySession(path, missing_ok=True)
    assert (s.exists, s.cassette.interactions, s.sink) == (False, (), None)
    assert isinstance(s.resolve(IT.request), Miss)
    assert ReplaySession(cassette(IT)).exists is True


def test_a_cassette_path_is_loaded_with_its_warnings(tmp_path: Path) -> None:
    """A path is loaded (torn tails reported through on_warning) and kept as ``path``."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(IT, OTHER))
    path.write_bytes(path.read_bytes()[:-3])
    warnings: list[str] = []
    s = ReplaySession(str(path), on_warning=warnings.append)
    assert s.path == path and s.exists
    assert s.cassette.interactions == (IT,)
    assert len(warnings) == 1 and "torn tail" in warnings[0]


def test_from_settings_passes_every_setting() -> None:
    """from_settings(): speed, faults, match options and record mode from ReplaySettings."""
    options = MatchOptions(ignore_body_fields=("/model",))
    jitter = parse("jitter:ms=1")
    settings = ReplaySettings(speed=4.0, faults=(jitter,), match=options)
    s = ReplaySession.from_settings(cassette(IT), settings, missing_ok=True)
    assert (s.speed, s.faults, s.options) == (4.0, (jitter,), options)
    assert s.policy.mode is RecordMode.NONE and s.exists


def test_from_settings_passes_the_record_mode(tmp_path: Path) -> None:
    """The record mode comes from the settings too."""
    settings = ReplaySettings(record_mode=RecordMode.ALL)
    s = ReplaySession.from_settings(tmp_path / "new.cassette", settings)
    assert s.policy.mode is RecordMode.ALL and s.sink is not None


# -- resolving -----------------------------------------------------------------------------------


def test_a_match_is_served_with_its_schedule_and_counted() -> None:
    """A matching request: Served with the interaction's index, its repeat count and the
    schedule planned at the session's speed (offsets halved at speed 2)."""
    s = ReplaySession(cassette(IT, OTHER), speed=2, options=MatchOptions(allow_repeats=True))
    first = s.resolve(OTHER.request)
    assert isinstance(first, Served)
    assert (first.index, first.replay_count, first.websocket) == (1, 0, None)
    assert first.schedule == faults_mod.plan(OTHER, 1, speed=2)
    assert first.schedule.head is not None and first.schedule.head.at_ns == 25 * MS
    again = s.resolve(OTHER.request)
    assert isinstance(again, Served) and again.replay_count == 1
    assert s.summary() == Summary(served=2, unmatched=0, unused=(0,), recorded=2)


def test_a_miss_is_kept_and_reported() -> None:
    """No match: the Miss is returned, kept in ``misses``, given to on_miss, and counted."""
    seen: list[Miss] = []
    s = ReplaySession(cassette(IT), on_miss=seen.append)
    miss = s.resolve(MISSING)
    assert isinstance(miss, Miss)
    assert miss.request == "POST /v1/nothing?key=<redacted>"
    assert s.misses == [miss] and seen == [miss]
    assert s.summary() == Summary(served=0, unmatched=1, unused=(0,), recorded=1)


def test_a_fault_that_cannot_act_is_a_miss_with_its_reason() -> None:
    """A fault naming event 9 of a 2-event stream: a Miss (matched interaction 0) whose reason
    is the fault's error; not counted as served."""
    seen: list[Miss] = []
    s = ReplaySession(cassette(IT), faults=["close:events=9"], on_miss=seen.append)
    miss = s.resolve(IT.request)
    assert isinstance(miss, Miss)
    assert (miss.request, miss.nearest, miss.differences) == ("POST /v1/chat/completions", 0, ())
    assert "events=9" in miss.reason
    assert s.misses == [miss] and seen == [miss]
    assert s.summary() == Summary(served=0, unmatched=1, unused=(), recorded=1)


def test_a_bug_while_planning_is_raised_and_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception while planning propagates (the shell fails closed); the request
    counts neither as served nor as a miss."""

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("planted")

    monkeypatch.setattr(faults_mod, "plan", broken)
    s = ReplaySession(cassette(IT))
    with pytest.raises(RuntimeError, match="planted"):
        s.resolve(IT.request)
    assert s.summary() == Summary(served=0, unmatched=0, unused=(), recorded=1)


def test_passthrough_in_record_modes(tmp_path: Path) -> None:
    """Recording a new cassette forwards every request; new_episodes forwards only misses."""
    fresh = ReplaySession(tmp_path / "new.cassette", record_mode="once")
    assert fresh.resolve(IT.request) == Passthrough("POST /v1/chat/completions")
    path = tmp_path / "c.cassette"
    store.save(path, cassette(IT))
    episodes = ReplaySession(path, record_mode="new_episodes")
    assert isinstance(episodes.resolve(IT.request), Served)
    assert episodes.resolve(MISSING) == Passthrough("POST /v1/nothing?key=<redacted>")
    assert episodes.misses == []
    assert episodes.summary().unmatched == 0


def test_record_appends_and_makes_the_interaction_matchable(tmp_path: Path) -> None:
    """record(): appended to the cassette file, known to the matcher as already used (a
    repeat is forwarded again; never listed unused), counted as new."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(IT))
    s = ReplaySession(path, record_mode="new_episodes")
    s.record(OTHER)
    s.close()
    s.close()  # idempotent
    assert store.load(path).interactions == (IT, OTHER)
    assert s.resolve(OTHER.request) == Passthrough("POST /v1/other")
    assert s.summary() == Summary(served=0, unmatched=0, unused=(0,), recorded=1, new=1)
    repeats = ReplaySession(
        path, record_mode="new_episodes", options=MatchOptions(allow_repeats=True)
    )
    repeats.record(replace(OTHER, request=replace(OTHER.request, url=OTHER.request.url + "2")))
    served = repeats.resolve(replace(OTHER.request, url=OTHER.request.url + "2"))
    assert isinstance(served, Served) and (served.index, served.replay_count) == (2, 1)
    repeats.close()


def test_record_in_replay_only_mode_is_refused() -> None:
    """A replay-only session has nowhere to record: one UsageError line."""
    s = ReplaySession(cassette(IT))
    with pytest.raises(UsageError, match=r"^this session does not record \(record mode none\)$"):
        s.record(OTHER)
    s.close()


def test_fail_counts_reports_and_keeps_the_first_hundred(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fail(): the failure goes to on_error and is returned; the count goes on past the 100
    kept in ``failures``."""
    reported: list[ReplayFailure] = []
    s = ReplaySession(cassette(IT), on_error=reported.append)
    first = s.fail("POST /v1/x", KeyError("model"))
    assert first == ReplayFailure("POST /v1/x", "KeyError: 'model'")
    assert reported == [first] and s.failures == [first]
    for i in range(100):
        s.fail(f"GET /{i}", ValueError(str(i)))
    assert len(s.failures) == 100 and s.failures[-1].request == "GET /98"
    assert s.summary().errors == 101
    assert len(reported) == 101
    ReplaySession(cassette(IT)).fail("GET /", ValueError())  # no on_error: nothing to call


# -- resuming a stream ---------------------------------------------------------------------------

EVENTS = interaction(
    [b"id: 1\ndata: a\n\n", b"id: 2\ndata: b\n\n", b"id: 3\ndata: c\n\n"], gap_ms=10, head_ms=20
)


def _resuming(last_id: str) -> Request:
    return replace(EVENTS.request, headers=((b"last-event-id", last_id.encode()),))


def test_last_event_id_serves_the_rest_of_the_stream() -> None:
    """A reconnect with Last-Event-ID: 1 gets events 2 and 3, re-timed from the cut and scaled
    by the speed; each resume counts as a repeat of the interaction, and as served."""
    s = ReplaySession(cassette(EVENTS), speed=2)
    got = s.resolve(_resuming("1"))
    assert isinstance(got, Served)
    assert (got.index, got.replay_count) == (0, 0)
    assert got.schedule.writes == (
        Write(15 * MS, b"id: 2\ndata: b\n\n"),  # 10 ms after the 20 ms head, then 10 more
        Write(20 * MS, b"id: 3\ndata: c\n\n"),
    )
    again = s.resolve(_resuming("2"))
    assert isinstance(again, Served) and again.replay_count == 1
    assert [w.data for w in again.schedule.writes] == [b"id: 3\ndata: c\n\n"]
    assert s.summary() == Summary(served=2, unmatched=0, unused=(), recorded=1)


def test_an_unknown_last_event_id_is_a_miss() -> None:
    """A Last-Event-ID the recording does not have: a Miss, kept and reported."""
    seen: list[Miss] = []
    s = ReplaySession(cassette(EVENTS), on_miss=seen.append)
    miss = s.resolve(_resuming("9"))
    assert isinstance(miss, Miss) and miss.reason
    assert s.misses == [miss] and seen == [miss]
    assert s.summary() == Summary(served=0, unmatched=1, unused=(0,), recorded=1)


# -- WebSocket sessions --------------------------------------------------------------------------

WS = ws_interaction([ws_text(6, False, {"type": "session.created"})])


def test_a_websocket_interaction_is_served_with_its_conversation() -> None:
    """A recorded WebSocket: Served with the 101 schedule and the conversation to run; a miss
    inside the conversation becomes a session Miss (no longer served), reported."""
    seen: list[Miss] = []
    s = ReplaySession(cassette(WS), on_miss=seen.append)
    got = s.resolve(WS.request)
    assert isinstance(got, Served) and got.websocket is not None
    assert got.schedule.head is not None and got.websocket.head == got.schedule.head
    assert got.websocket.plan.turns[0].replies[0][1].data == b'{"type": "session.created"}'
    assert s.summary().served == 1
    assert got.websocket.on_miss is not None
    got.websocket.on_miss("client message 0 was not recorded")
    assert len(s.misses) == 1 and seen == s.misses
    miss = s.misses[0]
    assert (miss.request, miss.nearest, miss.reason) == (
        "GET /v1/realtime?model=gpt-realtime",
        0,
        "client message 0 was not recorded",
    )
    assert s.summary().served == 0


def test_a_status_fault_refuses_the_upgrade() -> None:
    """status:code=429 on a WebSocket: Served with the HTTP error schedule, no conversation."""
    s = ReplaySession(cassette(WS), faults=["status:code=429"])
    got = s.resolve(WS.request)
    assert isinstance(got, Served) and got.websocket is None
    assert got.schedule.head is not None and got.schedule.head.status == 429


def test_a_websocket_fault_that_cannot_act_is_a_miss() -> None:
    """close:events=5 on a session with one server message: a Miss with the fault's reason."""
    seen: list[Miss] = []
    s = ReplaySession(cassette(WS), faults=["close:events=5"], on_miss=seen.append)
    miss = s.resolve(WS.request)
    assert isinstance(miss, Miss) and seen == [miss]
    assert "events=5 is past the last server message (1)" in miss.reason
    assert s.summary() == Summary(served=0, unmatched=1, unused=(), recorded=1)


# -- more exact details --------------------------------------------------------------------------


def test_unmatched_response_takes_the_path_from_the_request_description() -> None:
    """Without ``path=``, the path after the method in ``miss.request`` picks the error shape
    (Anthropic's for /v1/messages, Gemini's with the 500 status in it), even when the query
    holds a space."""
    anthropic = Miss("POST /v1/messages?q=a b", None, ())
    assert unmatched_response(anthropic) == unmatched_response(anthropic, "/v1/messages")
    assert json.loads(unmatched_response(anthropic)[2])["type"] == "error"
    gemini = Miss("POST /v1beta/models/g:streamGenerateContent", None, ())
    doc = json.loads(unmatched_response(gemini)[2])
    assert (doc["error"]["code"], doc["error"]["status"]) == (500, "INTERNAL")


def test_session_defaults() -> None:
    """By default: speed 1, no faults, default match options, no recording problems yet."""
    s = ReplaySession(cassette(IT))
    assert (s.speed, s.faults, s.options, s.errors, s.failures) == (
        1.0, (), MatchOptions(), [], []
    )  # fmt: skip
    assert s.resolve(IT.request) == Served(0, 0, faults_mod.plan(IT, 0))


def test_a_cassette_object_with_a_bad_field_is_refused_up_front() -> None:
    """A Cassette built in code is validated when the session starts."""
    bad = replace(IT, request=replace(IT.request, method=""))
    with pytest.raises(CassetteFormatError, match=r"^cassette: interaction 0: "):
        ReplaySession(cassette(bad))


def test_a_cassette_file_with_a_bad_stored_fault_names_the_file(tmp_path: Path) -> None:
    """A stored fault that does not parse stops the session, naming the cassette file."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(replace(IT, faults=("nonsense",))))
    with pytest.raises(CassetteFormatError) as info:
        ReplaySession(path)
    assert info.value.path == str(path)
    assert info.value.reason.startswith("interaction 0 (POST /v1/chat/completions): stored")


def test_recording_warnings_go_to_on_warning(tmp_path: Path) -> None:
    """new_episodes on a torn cassette: the load's warning and the append's (cutting the
    torn tail) both go to on_warning."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(IT, OTHER))
    path.write_bytes(path.read_bytes()[:-3])
    warnings: list[str] = []
    s = ReplaySession(path, record_mode="new_episodes", on_warning=warnings.append)
    s.record(OTHER)
    s.record(replace(OTHER, request=replace(OTHER.request, url=OTHER.request.url + "2")))
    s.close()
    assert len(warnings) == 2 and all("torn tail" in w for w in warnings)
    assert s.summary().new == 2


def test_from_settings_passes_the_other_arguments(tmp_path: Path) -> None:
    """Keyword arguments of from_settings() reach the constructor (here: missing_ok)."""
    s = ReplaySession.from_settings(tmp_path / "none.cassette", ReplaySettings(), missing_ok=True)
    assert s.exists is False


def test_each_serving_plans_with_its_index_and_repeat_count() -> None:
    """A seeded fault (jitter) is planned for the interaction's index and repeat count, so
    each repeat gets its own, reproducible timing."""
    s = ReplaySession(
        cassette(OTHER, IT),
        faults=["jitter:ms=50"],
        options=MatchOptions(allow_repeats=True),
    )
    spec = (parse("jitter:ms=50"),)
    for n in range(2):
        got = s.resolve(IT.request)
        assert isinstance(got, Served) and (got.index, got.replay_count) == (1, n)
        assert got.schedule == faults_mod.plan(IT, 1, faults=spec, replay_count=n)


def test_every_resume_counts_as_one_more_repeat() -> None:
    """Resumes of one stream count its repeats 0, 1, 2."""
    s = ReplaySession(cassette(EVENTS))
    counts = []
    for _ in range(3):
        got = s.resolve(_resuming("1"))
        assert isinstance(got, Served)
        counts.append(got.replay_count)
    assert counts == [0, 1, 2]


WS3 = ws_interaction([ws_text(6, False, {"type": "a"}), ws_text(26, False, {"type": "b"})])


def test_a_websocket_is_planned_at_the_sessions_speed_and_options() -> None:
    """The conversation's delays are divided by the speed; the session's ignored fields are
    ignored in client messages too; index and repeat count are the match's."""
    s = ReplaySession(
        cassette(OTHER, WS3),
        speed=2,
        options=MatchOptions(ignore_body_fields=("/session",), allow_repeats=True),
    )
    plans = []
    for n in range(2):
        got = s.resolve(WS3.request)
        assert isinstance(got, Served) and got.websocket is not None
        assert (got.index, got.replay_count) == (1, n)
        plans.append(got.websocket.plan)
    plan = plans[0]
    assert [d for d, _ in plan.turns[0].replies] == [500_000, 10_500_000]  # (6-5)/2, (26-5)/2
    assert plan.ignore == ("/event_id", "/session")
    refused = ReplaySession(cassette(OTHER, WS3), faults=["status:code=429"])
    got = refused.resolve(WS3.request)
    assert isinstance(got, Served) and (got.index, got.replay_count) == (1, 0)


def test_a_websocket_fault_for_this_interaction_applies_to_it() -> None:
    """A fault selected by ``interaction=0`` acts on interaction 0 (here: it cannot, so a
    miss), not on others; a miss in the conversation has no differences."""
    s = ReplaySession(cassette(WS, WS3), faults=["close:events=5,interaction=0"])
    miss = s.resolve(WS.request)
    assert isinstance(miss, Miss) and miss.nearest == 0 and miss.differences == ()
    assert isinstance(s.resolve(WS3.request), Served)


def test_a_probabilistic_websocket_fault_follows_the_repeat_count() -> None:
    """``p=0.5`` decides per serving, from the index and the repeat count: the session's
    outcomes are exactly those the fault selector gives for repeats 0..7."""
    spec = parse("close:events=5,p=0.5")
    s = ReplaySession(cassette(WS3), faults=[spec], options=MatchOptions(allow_repeats=True))
    expected = [faults_mod.applies(spec, WS3, 0, n) for n in range(8)]
    assert True in expected and False in expected  # the draw says something
    assert [isinstance(s.resolve(WS3.request), Miss) for _ in range(8)] == expected


def test_the_unmatched_response_stays_importable_from_the_session() -> None:
    """unmatched_response and its header names moved to failsafe.py; imports from session.py
    still give the very same objects."""
    from replayproxy._engine import failsafe, session

    for name in ("unmatched_response", "UNMATCHED_STATUS", "UNMATCHED_HEADER"):
        assert getattr(session, name) is getattr(failsafe, name), name
        assert name in session.__all__
    assert session.UNMATCHED_EXPLANATION_HEADER == failsafe.UNMATCHED_EXPLANATION_HEADER
