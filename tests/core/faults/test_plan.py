"""plan(): each fault's effect on the schedule of a recorded provider stream (pure core)."""

from __future__ import annotations

import json

import pytest

from replayproxy._core.cassette.model import header_value
from replayproxy._core.faults import PlanCache, parse, plan
from replayproxy._core.schedule.model import FinishKind, Schedule, from_interaction
from replayproxy._core.wire.sse import parse_events
from replayproxy._errors import FaultSpecError
from replayproxy.testing import MS
from replayproxy.testing._streams import STREAMS
from tests.faults.builders import interaction

SSE_STREAMS = ["openai-chat-text", "openai-responses", "anthropic-text", "gemini-text"]


def run(name: str, *specs: str, speed: float = 1.0, count: int = 0, **kw: object) -> Schedule:
    return plan(
        interaction(name, **kw),  # type: ignore[arg-type]
        0,
        speed=speed,
        faults=[parse(s) for s in specs],
        replay_count=count,
    )


def datas(body: bytes) -> list[str]:
    return [e.data for e in parse_events(body)]


def test_no_fault_is_the_recording() -> None:
    """Without faults, plan() is the recorded schedule."""
    it = interaction("anthropic-text")
    assert plan(it, 0) == from_interaction(it)


@pytest.mark.parametrize("name", SSE_STREAMS)
def test_truncate_default_stops_before_the_terminal_event(name: str) -> None:
    """truncate ends cleanly just before the terminal event, keeping every event before it."""
    original = datas(STREAMS[name].body)
    sched = run(name, "truncate")
    assert sched.finish.kind is FinishKind.COMPLETE
    got = datas(sched.body)
    assert got == original[: len(got)]
    assert len(got) == len(original) - 1
    assert STREAMS[name].body.startswith(sched.body)


@pytest.mark.parametrize(
    ("fault", "kind"), [("reset", "reset"), ("close", "close"), ("hang", "hang")]
)
def test_endings_cut_at_event_boundary(fault: str, kind: str) -> None:
    """reset/close/hang at events=N send exactly N events, then finish the given way."""
    sched = run("anthropic-text", f"{fault}:events=4")
    assert sched.finish.kind.value == kind
    assert datas(sched.body) == datas(STREAMS["anthropic-text"].body)[:4]
    assert sched.finish.at_ns == sched.writes[-1].at_ns


def test_ending_default_is_mid_stream() -> None:
    """Without a position, reset acts after half the events."""
    n = len(datas(STREAMS["openai-chat-text"].body))
    assert len(datas(run("openai-chat-text", "reset").body)) == n // 2


def test_bytes_position_splits_a_write() -> None:
    """close:bytes=N sends exactly N body bytes, cutting a write in two."""
    sched = run("anthropic-text", "close:bytes=100")
    assert sched.body == STREAMS["anthropic-text"].body[:100]
    assert sched.finish.kind is FinishKind.CLOSE


def test_frames_position() -> None:
    """hang:frames=N sends exactly the first N recorded frames."""
    sched = run("openai-chat-text", "hang:frames=3")
    assert sched.body == b"".join(STREAMS["openai-chat-text"].events[:3])


def test_time_position_is_on_the_recorded_timeline() -> None:
    """time=T cuts at T seconds of the recording, whatever --speed is."""
    # frames at 70, 90, 110 ms ... ; time=0.1 keeps the frames at 70 and 90 ms.
    for speed in (1.0, 4.0, 0.0):
        sched = run("anthropic-text", "reset:time=0.1", speed=speed)
        assert sched.body == b"".join(STREAMS["anthropic-text"].events[:2])


def test_linger_sends_everything_and_never_ends() -> None:
    """linger keeps the whole body, terminal event included, and finishes with a hang."""
    sched = run("anthropic-text", "linger")
    assert sched.body == STREAMS["anthropic-text"].body
    assert sched.finish.kind is FinishKind.HANG


def test_stall_pauses_real_seconds_even_at_speed_zero() -> None:
    """stall:for=S delays everything after the position by S real seconds, at any speed."""
    sched = run("anthropic-text", "stall:for=0.5,events=3", speed=0)
    body = STREAMS["anthropic-text"].body
    cut = sum(len(e) for e in STREAMS["anthropic-text"].events[:3])
    pos = 0
    for w in sched.writes:
        assert w.at_ns == (500 * MS if pos >= cut else 0)
        pos += len(w.data)
    assert sched.body == body


def test_ttfb_delays_head_and_all_after() -> None:
    """ttfb:delay=S moves the head and every write S seconds later."""
    base = run("openai-chat-text")
    sched = run("openai-chat-text", "ttfb:delay=0.25")
    assert sched.head is not None and base.head is not None
    assert sched.head.at_ns == base.head.at_ns + 250 * MS
    assert [w.at_ns - 250 * MS for w in sched.writes] == [w.at_ns for w in base.writes]


def test_keepalive_fills_long_waits_with_comments() -> None:
    """keepalive inserts the provider keepalive into waits longer than every=, between events."""
    sched = run("openai-chat-text", "keepalive:every=0.03", gap_ms=100)
    comments = [w for w in sched.writes if w.data == b": keepalive\n\n"]
    assert len(comments) >= 3 * (len(STREAMS["openai-chat-text"].events) - 1)
    assert (
        b"".join(w.data for w in sched.writes if w not in comments)
        == STREAMS["openai-chat-text"].body
    )
    assert datas(sched.body) == datas(STREAMS["openai-chat-text"].body)


def test_keepalive_for_anthropic_is_ping() -> None:
    """Anthropic streams get `event: ping` keepalives, which are events of their own."""
    sched = run("anthropic-text", "keepalive:every=0.05", gap_ms=120)
    assert b'event: ping\ndata: {"type": "ping"}\n\n' in sched.body
    assert len(parse_events(sched.body)) > len(parse_events(STREAMS["anthropic-text"].body))


def test_keepalive_during_hang_is_bounded_by_until() -> None:
    """A hang with keepalive keeps sending keepalives, for until= seconds."""
    sched = run("openai-chat-text", "hang:events=2", "keepalive:every=0.1,until=1")
    extra = [w for w in sched.writes if w.data == b": keepalive\n\n"]
    assert 9 <= len(extra) <= 11
    assert sched.finish.kind is FinishKind.HANG


def test_throttle_caps_bytes_per_second() -> None:
    """throttle:bps=N delivers the body no faster than N bytes per second."""
    body_len = len(STREAMS["anthropic-text"].body)
    sched = run("anthropic-text", "throttle:bps=4000", speed=0)
    assert sched.body == STREAMS["anthropic-text"].body
    span = sched.writes[-1].at_ns - sched.writes[0].at_ns
    assert span >= (body_len - 4000 // 20) / 4000 * 1e9


def test_coalesce_one_write_at_the_end() -> None:
    """coalesce delivers the whole body in one write when the last byte was recorded."""
    base = run("openai-chat-text")
    sched = run("openai-chat-text", "coalesce")
    assert [w.data for w in sched.writes] == [base.body]
    assert sched.writes[0].at_ns == base.writes[-1].at_ns


def test_coalesce_window_groups_writes() -> None:
    """coalesce:window=S flushes once per window, never earlier than the bytes were recorded."""
    base = run("openai-chat-text", gap_ms=10)
    sched = run("openai-chat-text", "coalesce:window=0.1", gap_ms=10)
    assert sched.body == base.body
    assert 1 < len(sched.writes) < len(base.writes)
    # Each flush happens no earlier than the last original byte it carries was recorded.
    ends, pos = [], 0
    for w in base.writes:
        pos += len(w.data)
        ends.append((pos, w.at_ns))
    pos = 0
    for w in sched.writes:
        pos += len(w.data)
        assert w.at_ns >= max(at for end, at in ends if end <= pos)
        assert (w.at_ns - base.head.at_ns) % (100 * MS) == 0 or w is sched.writes[-1]  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["anthropic-text", "openai-chat-text"])
def test_drop_duplicate_reorder_touch_one_event(name: str) -> None:
    """drop/duplicate/reorder event=N remove, repeat or swap exactly that event."""
    original = datas(STREAMS[name].body)
    assert datas(run(name, "drop:event=3").body) == original[:3] + original[4:]
    assert datas(run(name, "duplicate:event=3").body) == original[:4] + original[3:]
    assert datas(run(name, "reorder:event=3").body) == [
        *original[:3],
        original[4],
        original[3],
        *original[5:],
    ]


def test_corrupt_cuts_the_json_payload() -> None:
    """corrupt:event=N leaves event N with half its JSON (unparseable), the rest untouched."""
    original = datas(STREAMS["anthropic-text"].body)
    got = datas(run("anthropic-text", "corrupt:event=3").body)
    assert len(got) == len(original)
    assert got[:3] == original[:3] and got[4:] == original[4:]
    assert original[3].startswith(got[3]) and len(got[3]) == len(original[3]) // 2
    with pytest.raises(ValueError):
        json.loads(got[3])


def test_error_anthropic_overloaded_then_end() -> None:
    """error on Anthropic sends `event: error` (overloaded_error) and ends without message_stop."""
    sched = run("anthropic-text", "error:events=5")
    events = parse_events(sched.body)
    assert len(events) == 6
    assert events[-1].event == "error"
    assert json.loads(events[-1].data)["error"]["type"] == "overloaded_error"
    assert sched.finish.kind is FinishKind.COMPLETE


def test_error_type_and_message() -> None:
    """error:type=...,message=... puts them in the provider's error payload."""
    sched = run("anthropic-text", "error:events=2,type=api_error,message=boom")
    payload = json.loads(parse_events(sched.body)[-1].data)
    assert payload["error"] == {"type": "api_error", "message": "boom"}


def test_error_openai_chat_is_data_error() -> None:
    """error on OpenAI Chat sends `data: {"error": ...}` and no [DONE]."""
    sched = run("openai-chat-text", "error:events=4")
    last = parse_events(sched.body)[-1]
    assert last.event == "message" and "error" in json.loads(last.data)
    assert b"[DONE]" not in sched.body


def test_error_openai_responses_is_response_failed() -> None:
    """error on OpenAI Responses sends response.failed with the next sequence_number."""
    sched = run("openai-responses", "error:events=3")
    last = parse_events(sched.body)[-1]
    payload = json.loads(last.data)
    assert last.event == "response.failed" and payload["type"] == "response.failed"
    assert payload["sequence_number"] == 3
    assert payload["response"]["status"] == "failed"


def test_error_gemini_keeps_crlf_framing() -> None:
    """error on Gemini sends a `data: {"error": ...}` event framed with CRLF like the stream."""
    sched = run("gemini-text", "error:events=1")
    assert sched.body.endswith(b"\r\n\r\n")
    assert "error" in json.loads(parse_events(sched.body)[-1].data)


@pytest.mark.parametrize(
    ("name", "code", "check"),
    [
        ("anthropic-text", 529, lambda b: b["error"]["type"] == "overloaded_error"),
        ("anthropic-text", 429, lambda b: b["error"]["type"] == "rate_limit_error"),
        ("openai-chat-text", 429, lambda b: b["error"]["code"] == "rate_limit_exceeded"),
        ("openai-chat-text", 500, lambda b: b["error"]["type"] == "server_error"),
        ("gemini-text", 503, lambda b: b["error"]["status"] == "UNAVAILABLE"),
    ],
)
def test_status_replaces_response(name: str, code: int, check: object) -> None:
    """status:code=N sends N with the provider's JSON error body and retry-after when given."""
    sched = run(name, f"status:code={code},retry-after=2")
    assert sched.head is not None and sched.head.status == code
    assert header_value(sched.head.headers, "content-type") == "application/json"
    assert header_value(sched.head.headers, "retry-after") == "2"
    assert check(json.loads(sched.body))  # type: ignore[operator]
    assert sched.finish.kind is FinishKind.COMPLETE


def test_selectors_interaction_and_path() -> None:
    """interaction= and path= restrict a fault to matching interactions."""
    it = interaction("anthropic-text")
    full = it.response.body if it.response else b""
    assert plan(it, 1, faults=[parse("reset:interaction=0")]).body == full
    assert plan(it, 0, faults=[parse("reset:interaction=0")]).body != full
    assert plan(it, 0, faults=[parse("reset:path=/v1/chat/*")]).body == full
    assert plan(it, 0, faults=[parse("reset:path=/v1/mess*")]).body != full


def test_probability_is_seeded_and_reproducible() -> None:
    """p=P with seed=S draws per (interaction, replay_count): same inputs, same outcome."""
    it = interaction("anthropic-text")
    spec = parse("reset:p=0.5,seed=11")
    draws = [plan(it, 0, faults=[spec], replay_count=i).finish.kind for i in range(40)]
    again = [plan(it, 0, faults=[spec], replay_count=i).finish.kind for i in range(40)]
    assert draws == again
    hits = draws.count(FinishKind.RESET)
    assert 8 <= hits <= 32
    other = [
        plan(it, 0, faults=[parse("reset:p=0.5,seed=12")], replay_count=i).finish.kind
        for i in range(40)
    ]
    assert other != draws


def test_stored_faults_apply_without_replay_faults() -> None:
    """Faults stored in the interaction apply on every plan()."""
    it = interaction("anthropic-text", faults=("truncate",))
    assert b"message_stop" not in plan(it, 0).body


def test_stored_malformed_fault_names_the_interaction() -> None:
    """A malformed stored fault is a one-line error naming the interaction."""
    it = interaction("anthropic-text", faults=("explode:now=1",))
    with pytest.raises(
        FaultSpecError, match=r"^interaction 4 \(POST /v1/messages\): stored fault: unknown fault"
    ):
        plan(it, 4)


@pytest.mark.parametrize(
    "spec",
    ["reset:events=2", "drop:event=0", "keepalive", "truncate", "error"],
)
def test_event_fault_on_json_body_is_an_error(spec: str) -> None:
    """An event-based fault on a JSON body is an error naming the interaction, not a no-op."""
    it = interaction("openai-models")
    with pytest.raises(FaultSpecError) as info:
        plan(it, 2, faults=[parse(spec)])
    assert str(info.value).startswith("interaction 2 (GET /v1/models): fault ")
    assert "\n" not in str(info.value)


def test_position_past_the_end_is_an_error() -> None:
    """A position past the end of the stream names the interaction and the stream's size."""
    with pytest.raises(FaultSpecError, match=r"events=99 is past the last event \(12 events\)"):
        run("anthropic-text", "reset:events=99")
    with pytest.raises(FaultSpecError, match="event 12 does not exist"):
        run("anthropic-text", "drop:event=12")
    with pytest.raises(FaultSpecError, match="no next event"):
        run("anthropic-text", "reorder:event=11")


def test_byte_faults_work_on_json_bodies() -> None:
    """bytes= positions and byte faults work on non-stream bodies too."""
    body = STREAMS["openai-models"].body
    sched = run("openai-models", "close")
    assert sched.body == body[: len(body) // 2]
    assert run("openai-models", "split:bytes=7").body == body


def _messages(body: bytes) -> list[tuple[str, bytes]]:
    from replayproxy._core.wire.eventstream import EventStreamMessage, decode_all

    return [(m.name, m.payload) for m in decode_all(body) if isinstance(m, EventStreamMessage)]


def test_event_edits_on_aws_event_stream() -> None:
    """drop/duplicate/reorder act on whole event-stream messages (Bedrock)."""
    original = _messages(STREAMS["bedrock-converse-text"].body)
    assert _messages(run("bedrock-converse-text", "drop:event=2").body) == [
        *original[:2],
        *original[3:],
    ]
    assert _messages(run("bedrock-converse-text", "duplicate:event=2").body) == [
        *original[:3],
        *original[2:],
    ]
    assert _messages(run("bedrock-converse-text", "reorder:event=2").body) == [
        *original[:2],
        original[3],
        original[2],
        *original[4:],
    ]


def test_corrupt_event_stream_breaks_the_crc() -> None:
    """corrupt on an event-stream message flips a byte: the decoder reports a CRC error there."""
    from replayproxy._core.wire.eventstream import EventStreamError, decode_all

    items = decode_all(run("bedrock-converse-text", "corrupt:event=3").body)
    assert [type(i).__name__ for i in items[:3]] == ["EventStreamMessage"] * 3
    assert isinstance(items[3], EventStreamError)


def test_truncate_event_stream_before_message_stop() -> None:
    """truncate on Bedrock stops before the messageStop message."""
    names = [n for n, _ in _messages(run("bedrock-converse-text", "truncate").body)]
    assert (
        "messageStop" not in names
        and names == [n for n, _ in _messages(STREAMS["bedrock-converse-text"].body)][: len(names)]
    )


@pytest.mark.parametrize("spec", ["error", "keepalive"])
def test_no_error_or_keepalive_format_for_event_stream(spec: str) -> None:
    """error and keepalive refuse AWS event-stream bodies with a one-line error."""
    with pytest.raises(FaultSpecError, match=r"^interaction 0 \(POST /model/some-model/"):
        run("bedrock-converse-text", spec)


def test_plans_are_reused_but_random_draws_are_not() -> None:
    """plan() with a cache returns the same schedule again for the same input; seeded jitter
    still draws afresh for each repeat (replay_count) and reproducibly for the same one."""
    it = interaction("anthropic-text")
    cache = PlanCache()
    assert plan(it, 0, speed=2, cache=cache) is plan(it, 0, speed=2, cache=cache)
    jitter = [parse("jitter:ms=20,seed=3")]
    first = plan(it, 0, faults=jitter, replay_count=0, cache=cache)
    assert first == plan(it, 0, faults=jitter, replay_count=0, cache=cache)
    assert first != plan(it, 0, faults=jitter, replay_count=1, cache=cache)
