"""Faults that cannot apply to an interaction: each refusal's exact one-line message, and where
positioned faults act by default (core/faults/__init__.py, position.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.faults import definitions, parse, plan
from replayproxy._core.schedule.model import FinishKind
from replayproxy._errors import FaultSpecError
from replayproxy.testing import MS
from replayproxy.testing import _builders as builders
from replayproxy.testing._streams import STREAMS
from tests.faults.builders import interaction


def sse(*frames: bytes, path: str = "/v1/chat/completions") -> Interaction:
    """An SSE response of these frames, 10 ms apart after a 5 ms head."""
    at = [(i + 1) * 10 for i in range(len(frames))]
    return builders.interaction(
        frames,
        url=f"https://api.openai.com{path}",
        body=b"",
        reason="OK",
        head_ms=5,
        at_ms=at,
        end_after_ms=10,
    )


NO_RESPONSE = Interaction(
    Request("POST", "https://api.openai.com/v1/chat/completions"),
    None,
    Ending(EndKind.NO_RESPONSE, 3 * MS),
)
UNKNOWN_API = sse(b"data: 1\n\n", path="/v9/other")


def _refusal(it: Interaction, *faults: str, speed: float = 1.0) -> str:
    with pytest.raises(FaultSpecError) as caught:
        plan(it, 0, speed=speed, faults=[parse(f) for f in faults])
    return str(caught.value)


_ANTHROPIC = "interaction 0 (POST /v1/messages): fault"
_CHAT = "interaction 0 (POST /v1/chat/completions): fault"


@pytest.mark.parametrize(
    ("it", "faults", "message"),
    [
        (
            interaction("openai-chat-json"),
            ["truncate"],
            f"{_CHAT} 'truncate': the body is not an event stream; give bytes=N or frames=N",
        ),
        (
            interaction("openai-chat-json"),
            ["error"],
            f"{_CHAT} 'error': the body is not an event stream; give bytes=N or frames=N",
        ),
        (
            sse(b"data: 1\n\n", b"data: 2\n\n"),
            ["truncate"],
            f"{_CHAT} 'truncate': the stream has no terminal event to stop before; give events=N",
        ),
        (
            interaction("anthropic-text"),
            ["reset:events=13"],
            f"{_ANTHROPIC} 'reset:events=13': events=13 is past the last event (12 events)",
        ),
        (
            interaction("anthropic-text"),
            ["close:bytes=1761"],
            f"{_ANTHROPIC} 'close:bytes=1761': bytes=1761 is past the end of the body (1760 bytes)",
        ),
        (
            interaction("anthropic-text"),
            ["hang:frames=13"],
            f"{_ANTHROPIC} 'hang:frames=13': frames=13 is past the last frame (12)",
        ),
        (
            interaction("anthropic-text"),
            ["drop:event=12"],
            f"{_ANTHROPIC} 'drop:event=12': event 12 does not exist "
            "(the stream has 12 events, 0-11)",
        ),
        (
            interaction("anthropic-text"),
            ["reorder:event=11"],
            f"{_ANTHROPIC} 'reorder:event=11': event 11 has no next event to swap with "
            "(the stream has 12 events, 0-11)",
        ),
        (
            interaction("anthropic-text"),
            ["reorder:event=12"],
            f"{_ANTHROPIC} 'reorder:event=12': event 12 does not exist "
            "(the stream has 12 events, 0-11)",
        ),
        (
            sse(b"data: {}\n\n", b"data: x\n\n"),
            ["corrupt:event=1"],
            f"{_CHAT} 'corrupt:event=1': event 1 has no JSON payload to cut",
        ),
        (
            UNKNOWN_API,
            ["error:events=1"],
            "interaction 0 (POST /v9/other): fault 'error:events=1': no in-band error format for "
            "this API (anthropic, openai chat/responses, gemini)",
        ),
        (
            interaction("bedrock-converse-text"),
            ["error"],
            "interaction 0 (POST /model/some-model/converse-stream): fault 'error': no in-band "
            "error format for this API (anthropic, openai chat/responses, gemini)",
        ),
        (
            interaction("bedrock-converse-text"),
            ["keepalive"],
            "interaction 0 (POST /model/some-model/converse-stream): fault 'keepalive': "
            "keepalives exist for SSE streams only, not AWS event-stream",
        ),
        (
            interaction("openai-chat-json"),
            ["keepalive"],
            f"{_CHAT} 'keepalive': needs an event stream, but the body is application/json, not "
            "an event stream (text/event-stream or application/vnd.amazon.eventstream): it has "
            "no events",
        ),
        (
            interaction("openai-chat-json"),
            ["error:bytes=10"],
            f"{_CHAT} 'error:bytes=10': needs an event stream, but the body is application/json, "
            "not an event stream (text/event-stream or application/vnd.amazon.eventstream): it "
            "has no events",
        ),
        (
            NO_RESPONSE,
            ["reset:events=1"],
            f"{_CHAT} 'reset:events=1': the interaction has no response to cut",
        ),
        (
            NO_RESPONSE,
            ["drop:event=0"],
            f"{_CHAT} 'drop:event=0': the interaction has no response, so no events",
        ),
        # 12 writes, one keepalive in each of the 12 20 ms waits, and 8,639,999 during the
        # one-day hang: more than MAX_WRITES, refused before any is built.
        (
            interaction("anthropic-text"),
            ["hang:events=12", "keepalive:every=0.01,until=86400"],
            f"{_ANTHROPIC} 'keepalive:every=0.01,until=86400': would build 8640023 writes for "
            "one response (at most 1000000); use a longer interval, a bigger piece or a shorter "
            "wait",
        ),
    ],
)
def test_refusals_are_exact(it: Interaction, faults: list[str], message: str) -> None:
    """Each fault that cannot apply names the interaction, the fault and the reason."""
    assert _refusal(it, *faults) == message


def test_negative_speed_is_refused() -> None:
    """--speed must not be negative."""
    assert _refusal(interaction("anthropic-text"), speed=-1) == "speed must be >= 0, got -1"


def test_limits_are_inclusive() -> None:
    """events=N, bytes=N and frames=N up to the stream's size are accepted."""
    it = interaction("anthropic-text")
    for fault in ("reset:events=12", "reset:bytes=1760", "reset:frames=12", "reorder:event=10"):
        assert plan(it, 0, faults=[parse(fault)]).body
    assert plan(it, 0, faults=[parse("drop:event=11")]).body != STREAMS["anthropic-text"].body


def test_default_positions() -> None:
    """Without a position: halfway through the events of a stream, through the bytes of
    anything else; truncate just before the terminal event."""
    body = STREAMS["anthropic-text"].body
    events = STREAMS["anthropic-text"].events
    got = plan(interaction("anthropic-text"), 0, faults=[parse("reset")])
    assert got.body == b"".join(events[:6])
    assert got.finish.kind is FinishKind.RESET
    assert got.finish.at_ns == 50 * MS + 6 * 20 * MS
    got = plan(interaction("anthropic-text"), 0, faults=[parse("truncate")])
    assert got.body == b"".join(events[:11]) and body.endswith(events[11])
    json_body = STREAMS["openai-chat-json"].body
    got = plan(interaction("openai-chat-json"), 0, faults=[parse("close")])
    assert got.body == json_body[: len(json_body) // 2]
    got = plan(interaction("openai-chat-json"), 0, faults=[parse("stall:for=2")])
    assert [w.at_ns for w in got.writes] == [70 * MS, 2070 * MS]
    assert got.body == json_body


def test_a_stream_without_events_is_cut_by_bytes() -> None:
    """A stream without events is cut halfway through its bytes by default; events=0 is its
    start, at the head."""
    it = sse(b": keepalive\n\n")
    got = plan(it, 0, faults=[parse("reset")])
    assert got.body == b": keep" and got.finish.at_ns == 10 * MS
    got = plan(it, 0, faults=[parse("reset:events=0")])
    assert got.body == b"" and got.finish.at_ns == 5 * MS


def test_status_without_retry_after() -> None:
    """status:code=N without retry-after= sends no retry-after header."""
    got = plan(interaction("anthropic-text"), 0, faults=[parse("status:code=503")])
    assert got.head is not None and got.head.status == 503
    assert [k for k, _ in got.head.headers if k == b"retry-after"] == []


def test_an_ending_at_the_start_of_a_stream_whose_head_is_at_zero() -> None:
    """reset:events=0 with the head recorded at 0 resets at 0, with no writes at all."""
    got = plan(interaction("anthropic-text", ttfb_ms=0), 0, faults=[parse("reset:events=0")])
    assert got.writes == ()
    assert (got.finish.at_ns, got.finish.kind) == (0, FinishKind.RESET)
    got = plan(interaction("anthropic-text"), 0, faults=[parse("reset:events=4")])
    assert len(got.writes) == 4 and all(w.data for w in got.writes)


@pytest.mark.parametrize("fault", [d.name for d in definitions() if d.positioned])
def test_default_positions_need_a_response(fault: str) -> None:
    """Without a response there is nothing to cut, whatever the positioned fault and its
    default position."""
    assert _refusal(NO_RESPONSE, fault) == (
        f"{_CHAT} {fault!r}: the interaction has no response to cut"
    )


def test_cut_positions_are_exact() -> None:
    """bytes=1 is cut at the first write's time; time=T includes a write at exactly T;
    events=0 keeps what comes before the first event (a comment)."""
    it = interaction("anthropic-text")
    first = STREAMS["anthropic-text"].events[0]
    got = plan(it, 0, faults=[parse("reset:bytes=1")])
    assert (got.body, got.finish.at_ns) == (first[:1], 70 * MS)
    got = plan(it, 0, faults=[parse("reset:time=0.07")])
    assert (got.body, got.finish.at_ns) == (first, 70 * MS)
    got = plan(sse(b": hi\n\n", b"data: 1\n\n"), 0, faults=[parse("reset:events=0")])
    assert (got.body, got.finish.at_ns) == (b": hi\n\n", 10 * MS)


def test_an_events_position_needs_an_event_stream() -> None:
    """events=N on a JSON body names the problem."""
    assert _refusal(interaction("openai-chat-json"), "reset:events=1") == (
        f"{_CHAT} 'reset:events=1': needs an event stream, but the body is application/json, "
        "not an event stream (text/event-stream or application/vnd.amazon.eventstream): it has "
        "no events"
    )


def _typed(content_type: bytes | None, *frames: bytes) -> Interaction:
    it = sse(*frames)
    assert it.response is not None
    headers = () if content_type is None else ((b"content-type", content_type),)
    return replace(it, response=replace(it.response, headers=headers))


def test_the_content_type_decides_the_events() -> None:
    """A JSON-typed body that looks like SSE is cut by bytes; an untyped SSE body is sniffed;
    an SSE-typed body with an unknown first field is still SSE."""
    three = b"data: 1\n\ndata: 2\n\ndata: 3\n\n"
    got = plan(_typed(b"application/json", three), 0, faults=[parse("reset")])
    assert got.body == b"data: 1\n\ndata"  # 13 of 27 bytes, not 1 of 3 events
    body = b'data: {"a": 12}\n\n'
    got = plan(_typed(None, body), 0, faults=[parse("corrupt:event=0")])
    assert got.body == b'data: {"a"\n\n'
    odd = b'note: hi\ndata: {"a": 12}\n\n'
    got = plan(_typed(b"text/event-stream", odd), 0, faults=[parse("corrupt:event=0")])
    assert got.body == b'note: hi\ndata: {"a"\n\n'


def _late_first(it: Interaction) -> Interaction:
    """The first frame 25 ms after the 5 ms head: room for two 10 ms keepalives."""
    assert it.response is not None
    frames = (replace(it.response.frames[0], offset_ns=30 * MS),)
    return replace(it, response=replace(it.response, frames=frames))


def test_keepalive_and_jitter_options_reach_the_schedule() -> None:
    """kind=, text= and dist= are used as given; an SSE body without a content type, or with
    an unknown first field, gets keepalives."""
    it = interaction("anthropic-text", gap_ms=3000)
    got = plan(it, 0, faults=[parse("keepalive:kind=comment,text=hi,every=1")])
    assert got.body.count(b": hi\n\n") == 2 * 12 and b"event: ping" not in got.body[:100]
    untyped = _late_first(_typed(None, b"data: 1\n\n"))
    assert plan(untyped, 0, faults=[parse("keepalive:every=0.01,text=k")]).body == (
        b": k\n\n" + b": k\n\n" + b"data: 1\n\n"
    )
    odd = _late_first(_typed(b"text/event-stream", b"note: x\ndata: 1\n\n"))
    assert plan(odd, 0, faults=[parse("keepalive:every=0.01,text=k")]).body.startswith(b": k")
    a = plan(it, 0, faults=[parse("jitter:dist=lognormal,ms=1,seed=1")])
    b = plan(it, 0, faults=[parse("jitter:dist=uniform,ms=1,seed=1")])
    assert [w.at_ns for w in a.writes] != [w.at_ns for w in b.writes]


def test_max_writes_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault may build exactly MAX_WRITES writes, not one more."""
    from replayproxy._core.faults import http_appliers as faults

    it = interaction("anthropic-text")  # 12 writes; split:bytes=1760 adds 1760 // 1760 = 1
    monkeypatch.setattr(faults, "MAX_WRITES", 13)
    assert plan(it, 0, faults=[parse("split:bytes=1760")]).body == STREAMS["anthropic-text"].body
    monkeypatch.setattr(faults, "MAX_WRITES", 12)
    assert "would build 13 writes" in _refusal(it, "split:bytes=1760")
