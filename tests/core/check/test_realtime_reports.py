"""The WebSocket grammars (OpenAI Realtime, Gemini Live), each branch: small sessions and the
exact report for each (rule, server message index, message), including how the session ended
when a response or a model turn never finished."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.check.grammars.realtime import check_session
from replayproxy._core.providers import detect

CLOSED = WsClose(0, WsCloseKind.CLOSE, 1000, "", True)


def ws(*msgs: Any, close: WsClose = CLOSED, binary: bool = False) -> WebSocketSession:
    """Server messages (a dict or list is sent as JSON text, bytes as is); ("client", obj) is a
    client message."""
    out = []
    for m in msgs:
        client = isinstance(m, tuple)
        body = m[1] if client else m
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        out.append(WsMessage(0, client, not binary, data))
    return WebSocketSession(tuple(out), close)


SESSION = {"type": "session.created", "session": {}}


def created(rid: Any = "r1", **kw: Any) -> dict[str, Any]:
    return {"type": "response.created", "response": {"id": rid}, **kw}


def done(rid: Any = "r1") -> dict[str, Any]:
    return {"type": "response.done", "response": {"id": rid}}


def item_added(iid: Any = "i1", rid: str = "r1") -> dict[str, Any]:
    return {"type": "response.output_item.added", "response_id": rid, "item": {"id": iid}}


def item_done(iid: str = "i1", rid: str = "r1") -> dict[str, Any]:
    return {"type": "response.output_item.done", "response_id": rid, "item": {"id": iid}}


def delta(
    text: Any, kind: str = "response.output_text", ci: Any = 0, iid: Any = "i1"
) -> dict[str, Any]:
    out = {
        "type": f"{kind}.delta",
        "response_id": "r1",
        "item_id": iid,
        "content_index": ci,
        "delta": text,
    }
    return {k: v for k, v in out.items() if v is not ...}


def text_done(
    full: Any, kind: str = "response.output_text", field: str = "text", ci: Any = 0, iid: str = "i1"
) -> dict[str, Any]:
    return {
        "type": f"{kind}.done",
        "response_id": "r1",
        "item_id": iid,
        "content_index": ci,
        field: full,
    }


def turn(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [SESSION, created(), item_added(), *middle, item_done(), done()]


REALTIME: dict[str, WebSocketSession] = {
    "clean": ws(*turn(delta("Hel"), delta("lo"), text_done("Hello"))),
    "session-not-first": ws(created(), done(), SESSION),
    "binary-json-is-read": ws(SESSION, created(), done(), binary=True),
    "a-list": ws(SESSION, [1], created(), done()),
    "type-not-a-string": ws(SESSION, {"type": 5}, created(), done()),
    "client-messages-are-not-counted": ws(
        SESSION, ("client", {"type": "response.create"}), created(), created(), done()
    ),
    "event-id-repeats-each-time": ws(
        SESSION | {"event_id": "e"}, created() | {"event_id": "e"}, done() | {"event_id": "e"}
    ),
    "event-id-not-a-string": ws(SESSION | {"event_id": 5}, created() | {"event_id": 5}, done()),
    "created-after-done": ws(SESSION, created(), done(), created(), done()),
    "created-without-an-id": ws(
        SESSION, created(None), {"type": "response.created", "response": "r1"}, created(), done()
    ),
    "done-never-created": ws(SESSION, done("r9")),
    "done-twice": ws(SESSION, created(), done(), done()),
    "done-without-an-id": ws(SESSION, {"type": "response.done"}),
    "event-for-a-response-never-created": ws(
        SESSION, {"type": "response.output_item.added", "response_id": "r9", "item": {"id": "x"}}
    ),
    "response-id-from-the-response-object": ws(
        SESSION, created(), done(), {"type": "response.text.delta", "response": {"id": "r1"}}
    ),
    "delta-for-an-item-never-added": ws(*turn(delta("x", iid="i2"))),
    "delta-without-an-item-id": ws(*turn(delta("x", iid=5))),
    "item-without-an-id": ws(
        SESSION,
        created(),
        item_added(5),
        {"type": "response.output_item.added", "item": "i1"},
        delta("x"),
        done(),
    ),
    "content-indexes-kept-apart": ws(
        *turn(delta("a", ci=0), delta("b", ci=1), text_done("a", ci=0), text_done("b", ci=1))
    ),
    "delta-after-its-item-is-done": ws(
        SESSION, created(), item_added(), item_done(), delta("x"), done()
    ),
    "an-item-elsewhere-is-not-done": ws(
        *turn({"type": "conversation.item.created", "item": {"id": "i1"}}, delta("x"))
    ),
    "item-done-never-added": ws(SESSION, created(), item_done("i9"), done()),
    "content-index-missing-is-0": ws(*turn(delta("a", ci=...), text_done("a", ci=0))),
    "kinds-kept-apart": ws(
        *turn(delta("a", "response.output_audio_transcript"), delta("b"), text_done("b"))
    ),
    "content-index-not-an-int-is-0": ws(*turn(delta("a", ci="1"), text_done("a", ci=0))),
    "beta-audio-transcript": ws(
        *turn(
            delta("a", "response.audio_transcript"),
            text_done("ab", "response.audio_transcript", "transcript"),
        )
    ),
    "audio-done-has-no-text": ws(
        *turn(delta("AAA", "response.output_audio"), text_done(None, "response.output_audio"))
    ),
    "done-without-deltas": ws(*turn(text_done("Hello"))),
    "done-text-not-a-string": ws(*turn(delta("a"), text_done(5))),
    "delta-not-a-string": ws(*turn(delta(5), delta("a"), text_done("a"))),
    "long-texts-shown-to-40": ws(*turn(delta("x" * 50), text_done("y" * 50))),
    "function-arguments": ws(
        *turn(
            delta('{"a":', "response.function_call_arguments"),
            text_done('{"a":1}', "response.function_call_arguments", "arguments"),
        )
    ),
    "never-done-dropped": ws(
        SESSION, created(), created("r2"), close=WsClose(0, WsCloseKind.DROPPED)
    ),
    "never-done-still-open": ws(SESSION, created(), close=WsClose(0, WsCloseKind.OPEN)),
    "never-done-closed-by-the-server": ws(
        SESSION, created(), close=WsClose(0, WsCloseKind.CLOSE, 1011, "", False)
    ),
}

SETUP = {"setupComplete": {}}


def model(text: str = "hi") -> dict[str, Any]:
    return {"serverContent": {"modelTurn": {"parts": [{"text": text}]}}}


COMPLETE = {"serverContent": {"turnComplete": True}}

GEMINI: dict[str, WebSocketSession] = {
    "clean": ws(SETUP, model(), model(), COMPLETE, binary=True),
    "text-frames-too": ws(SETUP, model(), COMPLETE),
    "a-list": ws(SETUP, [1], model(), COMPLETE),
    "not-json": ws(SETUP, b"\xff", model(), COMPLETE),
    "setup-not-first": ws({"d": 1, "c": 2, "b": 3, "a": 4}, SETUP, model(), COMPLETE),
    "server-content-not-an-object": ws(SETUP, {"serverContent": [1]}, model(), COMPLETE),
    "interrupted-ends-the-turn": ws(SETUP, model(), {"serverContent": {"interrupted": True}}),
    "turn-opens-at-its-first-message": ws(
        SETUP, {"serverContent": {}}, model(), model(), close=WsClose(0, WsCloseKind.DROPPED)
    ),
    "second-turn-never-complete": ws(
        SETUP, model(), COMPLETE, model(), close=WsClose(0, WsCloseKind.OPEN)
    ),
    "null-model-turn": ws(SETUP, {"serverContent": {"modelTurn": None}}),
    "turn-complete-false": ws(SETUP, model(), {"serverContent": {"turnComplete": False}}),
}

Found = list[tuple[str, int | None, str]]

REALTIME_EXPECTED: dict[str, Found] = dict(
    [
        ("clean", []),
        (
            "session-not-first",
            [("realtime.session-first", 0, "the first server event is response.created")],
        ),
        (
            "binary-json-is-read",
            [
                ("realtime.binary", 0, "a binary server message; the Realtime API sends JSON text"),
                ("realtime.binary", 1, "a binary server message; the Realtime API sends JSON text"),
                ("realtime.binary", 2, "a binary server message; the Realtime API sends JSON text"),
            ],
        ),
        ("a-list", [("realtime.json", 1, "not a JSON object with a string 'type'")]),
        ("type-not-a-string", [("realtime.json", 1, "not a JSON object with a string 'type'")]),
        (
            "client-messages-are-not-counted",
            [("realtime.response-done", 2, "response r1 created twice")],
        ),
        (
            "event-id-repeats-each-time",
            [
                ("realtime.event-id", 1, "event_id 'e' repeats"),
                ("realtime.event-id", 2, "event_id 'e' repeats"),
            ],
        ),
        ("event-id-not-a-string", []),
        ("created-after-done", [("realtime.response-done", 3, "response r1 created twice")]),
        ("created-without-an-id", []),
        (
            "done-never-created",
            [("realtime.response-done", 1, "response.done for response r9 (never created)")],
        ),
        (
            "done-twice",
            [("realtime.response-done", 3, "response.done for response r1 (already done)")],
        ),
        (
            "done-without-an-id",
            [("realtime.response-done", 1, "response.done for response None (never created)")],
        ),
        (
            "event-for-a-response-never-created",
            [
                (
                    "realtime.response-open",
                    1,
                    "response.output_item.added for response r9 (never created)",
                )
            ],
        ),
        (
            "response-id-from-the-response-object",
            [
                ("realtime.response-open", 3, "response.text.delta for response r1 (already done)"),
                ("realtime.delta-item", 3, "response.text.delta for item None (never added)"),
            ],
        ),
        (
            "delta-for-an-item-never-added",
            [("realtime.delta-item", 3, "response.output_text.delta for item i2 (never added)")],
        ),
        (
            "delta-without-an-item-id",
            [("realtime.delta-item", 3, "response.output_text.delta for item 5 (never added)")],
        ),
        (
            "item-without-an-id",
            [("realtime.delta-item", 4, "response.output_text.delta for item i1 (never added)")],
        ),
        ("content-indexes-kept-apart", []),
        (
            "delta-after-its-item-is-done",
            [("realtime.delta-item", 4, "response.output_text.delta for item i1 (already done)")],
        ),
        ("an-item-elsewhere-is-not-done", []),
        ("item-done-never-added", []),
        ("content-index-missing-is-0", []),
        ("kinds-kept-apart", []),
        ("content-index-not-an-int-is-0", []),
        (
            "beta-audio-transcript",
            [
                (
                    "realtime.done-text",
                    4,
                    (
                        "response.audio_transcript.done.transcript is 'ab'..., the deltas "
                        "join to 'a'..."
                    ),
                )
            ],
        ),
        ("audio-done-has-no-text", []),
        (
            "done-without-deltas",
            [
                (
                    "realtime.done-text",
                    3,
                    ("response.output_text.done.text is 'Hello'..., the deltas join to ''..."),
                )
            ],
        ),
        ("done-text-not-a-string", []),
        ("delta-not-a-string", []),
        (
            "long-texts-shown-to-40",
            [
                (
                    "realtime.done-text",
                    4,
                    (
                        "response.output_text.done.text is "
                        "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'..., the deltas join to "
                        "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'..."
                    ),
                )
            ],
        ),
        (
            "function-arguments",
            [
                (
                    "realtime.done-text",
                    4,
                    (
                        "response.function_call_arguments.done.arguments is '{\"a\":1}'..., "
                        "the deltas join to '{\"a\":'..."
                    ),
                )
            ],
        ),
        (
            "never-done-dropped",
            [
                (
                    "realtime.response-done",
                    1,
                    (
                        "response r1 (created at server event 1) never reached "
                        "response.done; the session was dropped (1006)"
                    ),
                ),
                (
                    "realtime.response-done",
                    2,
                    (
                        "response r2 (created at server event 2) never reached "
                        "response.done; the session was dropped (1006)"
                    ),
                ),
            ],
        ),
        (
            "never-done-still-open",
            [
                (
                    "realtime.response-done",
                    1,
                    (
                        "response r1 (created at server event 1) never reached "
                        "response.done; the session was still open when the recording "
                        "stopped"
                    ),
                )
            ],
        ),
        (
            "never-done-closed-by-the-server",
            [
                (
                    "realtime.response-done",
                    1,
                    (
                        "response r1 (created at server event 1) never reached "
                        "response.done; the session was closed by the server with 1011"
                    ),
                )
            ],
        ),
    ]
)

GEMINI_EXPECTED: dict[str, Found] = dict(
    [
        ("clean", []),
        ("text-frames-too", []),
        ("a-list", [("gemini.live.json", 1, "not a JSON object")]),
        ("not-json", [("gemini.live.json", 1, "not a JSON object")]),
        (
            "setup-not-first",
            [("gemini.live.setup-first", 0, "the first server message has ['a', 'b', 'c']")],
        ),
        ("server-content-not-an-object", []),
        ("interrupted-ends-the-turn", []),
        (
            "turn-opens-at-its-first-message",
            [
                (
                    "gemini.live.turn-complete",
                    2,
                    (
                        "the model turn opened at server message 2 never reached "
                        "turnComplete; the session was dropped (1006)"
                    ),
                )
            ],
        ),
        (
            "second-turn-never-complete",
            [
                (
                    "gemini.live.turn-complete",
                    3,
                    (
                        "the model turn opened at server message 3 never reached "
                        "turnComplete; the session was still open when the recording "
                        "stopped"
                    ),
                )
            ],
        ),
        ("null-model-turn", []),
        (
            "turn-complete-false",
            [
                (
                    "gemini.live.turn-complete",
                    1,
                    (
                        "the model turn opened at server message 1 never reached "
                        "turnComplete; the session was closed by the client with 1000"
                    ),
                )
            ],
        ),
    ]
)


def _found(session: WebSocketSession, provider: str) -> Found:
    violations = check_session(session, provider)
    assert all(v.offset is None for v in violations)  # a WebSocket message has no body offset
    return [(v.rule, v.event, v.message) for v in violations]


def test_every_session_has_its_expected_report() -> None:
    """The tables name the same sessions."""
    assert list(REALTIME_EXPECTED) == list(REALTIME)
    assert list(GEMINI_EXPECTED) == list(GEMINI)


@pytest.mark.parametrize("name", list(REALTIME))
def test_the_realtime_report_is_exact(name: str) -> None:
    """Each OpenAI Realtime session reports exactly these rules, at these server messages, with
    these messages."""
    assert _found(REALTIME[name], "openai-realtime") == REALTIME_EXPECTED[name]


@pytest.mark.parametrize("name", list(GEMINI))
def test_the_gemini_live_report_is_exact(name: str) -> None:
    """Each Gemini Live session reports exactly these rules, at these server messages, with
    these messages."""
    assert _found(GEMINI[name], "gemini-live") == GEMINI_EXPECTED[name]


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("wss://api.openai.com/v1/realtime?model=gpt-realtime", "openai-realtime"),
        ("wss://api.openai.com/v1/realtime/?model=gpt-realtime", "openai-realtime"),
        ("wss://proxy.example/openai/v1/realtime//", "openai-realtime"),
        ("wss://api.openai.com/v1/realtimes", None),
        ("wss://api.openai.com/v1/realtimeX", None),
        ("wss://api.openai.com/v1/realtime/sessions", None),
        ("wss://example.com/ws/x.GenerativeService.BidiGenerateContent", "gemini-live"),
        ("wss://example.com/ws/x.GenerativeService.BidiGenerateContentConstrained", "gemini-live"),
        ("wss://example.com/socket", None),
    ],
)
def test_detect_ws_from_the_upgrade_path(url: str, provider: str | None) -> None:
    """The path decides: ending in /realtime (trailing slashes aside), or holding
    BidiGenerateContent; the query string does not count."""
    assert detect(url, websocket=True) == provider
