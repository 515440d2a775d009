"""Contract rules for WebSocket sessions: OpenAI Realtime and Gemini Live event grammars.

The input is a recorded (or faulted)
:class:`~replayproxy._core.cassette.websocket.WebSocketSession`; the checker reads the
**server** messages in order (client messages only tell which turn is which) and reports
:class:`~replayproxy._core.check.base.Violation` s whose ``event`` is the index of the server
message. As for the SSE grammars, ``error`` means a real client breaks or silently misbehaves:
the openai SDK's Realtime client ``json.loads`` every message, apps wait for ``response.done``
and accumulate deltas by ``item_id``; google-genai's ``live.connect`` waits for
``setupComplete`` and a turn for ``turnComplete``.

Rule ids: ``realtime.*`` and ``gemini.live.*`` (see :data:`~replayproxy._core.check.rules.RULES`
and docs/guides/checker.md). Which grammar applies is the provider registry's answer for the upgrade
URL (:func:`replayproxy._core.providers.detect` with ``websocket=True``).
"""

from __future__ import annotations

import json
from typing import Any

from replayproxy._core.cassette.websocket import WebSocketSession, WsCloseKind, WsMessage
from replayproxy._core.check.base import Report, Violation
from replayproxy._core.providers import DEFINITIONS, Framing, Provider

__all__ = ["RULE_PREFIXES", "check_session"]

RULE_PREFIXES = tuple(d.grammar + "." for d in DEFINITIONS if d.framing is Framing.WEBSOCKET)
"""The rule ids of WebSocket grammars start with these (the others are stream-body rules)."""

# Delta events and the .done event that repeats their joined text, by field name (GA names,
# and the beta names openai-python still accepts).
_DELTAS: dict[str, tuple[str, str | None]] = {
    f"response.{name}.delta": (f"response.{name}.done", field)
    for name, field in [
        ("output_text", "text"),
        ("text", "text"),
        ("output_audio_transcript", "transcript"),
        ("audio_transcript", "transcript"),
        ("function_call_arguments", "arguments"),
        ("output_audio", None),
        ("audio", None),
    ]
}
_DONE_OF = {done: (delta, field) for delta, (done, field) in _DELTAS.items()}


def _json(m: WsMessage) -> Any:
    try:
        return json.loads(m.data)
    except (ValueError, UnicodeDecodeError):
        return None


class _Realtime:
    """OpenAI Realtime server-event grammar, one server message at a time."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.open: dict[str, int] = {}  # response id -> index of its response.created
        self.done: set[str] = set()
        self.items: set[str] = set()  # the ids of open output items
        self.finished_items: set[str] = set()
        self.text: dict[tuple[str, int, str], list[str]] = {}  # (item, content, delta) -> deltas
        self.event_ids: set[str] = set()
        self.started = False  # a server message was seen

    def message(self, n: int, m: WsMessage) -> None:
        first = not self.started
        self.started = True
        if not m.text:
            self.report.add("realtime.binary", "a binary server message; the Realtime API "
                            "sends JSON text", event=n)  # fmt: skip
        doc = _json(m)
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            self.report.add("realtime.json", "not a JSON object with a string 'type'", event=n)
            return
        kind: str = doc["type"]
        if first and kind != "session.created":
            self.report.add("realtime.session-first", f"the first server event is {kind}", event=n)
        eid = doc.get("event_id")
        if isinstance(eid, str):
            if eid in self.event_ids:
                self.report.add("realtime.event-id", f"event_id {eid!r} repeats", event=n)
            self.event_ids.add(eid)
        self._grammar(n, kind, doc)

    def _grammar(self, n: int, kind: str, doc: dict[str, Any]) -> None:
        response = doc.get("response") if isinstance(doc.get("response"), dict) else {}
        rid = doc.get("response_id") or (response or {}).get("id")
        if kind == "response.created":
            if isinstance(rid, str):
                if rid in self.open or rid in self.done:
                    self.report.add("realtime.response-done", f"response {rid} created twice",
                                    event=n)  # fmt: skip
                self.open[rid] = n
            return
        if kind == "response.done":
            if not isinstance(rid, str) or rid not in self.open:
                what = "already done" if rid in self.done else "never created"
                self.report.add("realtime.response-done",
                                f"response.done for response {rid} ({what})", event=n)  # fmt: skip
                return
            del self.open[rid]
            self.done.add(rid)
            return
        if kind.startswith("response.") and isinstance(rid, str) and rid not in self.open:
            what = "already done" if rid in self.done else "never created"
            self.report.add("realtime.response-open",
                            f"{kind} for response {rid} ({what})", event=n)  # fmt: skip
        item = doc.get("item") if isinstance(doc.get("item"), dict) else None
        if kind == "response.output_item.added" and item and isinstance(item.get("id"), str):
            self.items.add(item["id"])
        elif kind == "response.output_item.done" and item and isinstance(item.get("id"), str):
            self.items.discard(item["id"])
            self.finished_items.add(item["id"])
        elif kind in _DELTAS or kind in _DONE_OF:
            self._delta(n, kind, doc)

    def _delta(self, n: int, kind: str, doc: dict[str, Any]) -> None:
        item = doc.get("item_id")
        if not isinstance(item, str) or item not in self.items:
            state = "already done" if item in self.finished_items else "never added"
            self.report.add("realtime.delta-item",
                            f"{kind} for item {item} ({state})", event=n)  # fmt: skip
            return
        content = doc.get("content_index")
        key_kind = kind if kind in _DELTAS else _DONE_OF[kind][0]
        key = (item, content if isinstance(content, int) else 0, key_kind)
        if kind in _DELTAS:
            delta = doc.get("delta")
            self.text.setdefault(key, []).append(delta if isinstance(delta, str) else "")
            return
        field = _DONE_OF[kind][1]
        if field is None:
            return
        joined = "".join(self.text.pop(key, []))
        full = doc.get(field)
        if isinstance(full, str) and full != joined:
            self.report.add(
                "realtime.done-text",
                f"{kind}.{field} is {full[:40]!r}..., the deltas join to {joined[:40]!r}...",
                event=n,
            )

    def finish(self, session: WebSocketSession) -> None:
        for rid, n in self.open.items():
            how = _how_it_ended(session)
            self.report.add(
                "realtime.response-done",
                f"response {rid} (created at server event {n}) never reached response.done; "
                f"the session {how}",
                event=n,
            )


class _GeminiLive:
    """Gemini Live (BidiGenerateContent) server-message grammar."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.started = False  # a server message was seen
        self.turn_open: int | None = None  # server message that opened the current model turn

    def message(self, n: int, m: WsMessage) -> None:
        first = not self.started
        self.started = True
        doc = _json(m)  # Gemini Live sends its JSON in text or binary frames
        if not isinstance(doc, dict):
            self.report.add("gemini.live.json", "not a JSON object", event=n)
            return
        if first and "setupComplete" not in doc:
            self.report.add("gemini.live.setup-first",
                            f"the first server message has {sorted(doc)[:3]}", event=n)  # fmt: skip
        content = doc.get("serverContent")
        if not isinstance(content, dict):
            return
        if content.get("modelTurn") is not None and self.turn_open is None:
            self.turn_open = n
        if content.get("turnComplete") or content.get("interrupted"):
            self.turn_open = None

    def finish(self, session: WebSocketSession) -> None:
        if self.turn_open is not None:
            self.report.add(
                "gemini.live.turn-complete",
                f"the model turn opened at server message {self.turn_open} never reached "
                f"turnComplete; the session {_how_it_ended(session)}",
                event=self.turn_open,
            )


def _how_it_ended(session: WebSocketSession) -> str:
    close = session.close
    if close.kind is WsCloseKind.DROPPED:
        return "was dropped (1006)"
    if close.kind is WsCloseKind.OPEN:
        return "was still open when the recording stopped"
    who = "client" if close.by_client else "server"
    return f"was closed by the {who} with {close.code}"


def check_session(session: WebSocketSession, provider: Provider | str) -> list[Violation]:
    """The violations of ``session``'s server messages against ``provider``'s grammar
    (:attr:`Provider.OPENAI_REALTIME` or :attr:`Provider.GEMINI_LIVE`)."""
    report = Report()
    api = Provider(provider)
    grammar = _Realtime(report) if api is Provider.OPENAI_REALTIME else _GeminiLive(report)
    for n, m in enumerate(session.server_messages):
        grammar.message(n, m)
    grammar.finish(session)
    report.summarize()
    return report.items
