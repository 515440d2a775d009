"""Differences by meaning between two event streams and two cassettes (``cassette diff
--events``), pure.

:func:`diff_meanings` compares two lists of :class:`~.meaning.EventMeaning`: one
:class:`EventDifference` per changed field of a changed event, with both values
(``event 3 (message): /choices/0/finish_reason: "stop" → "length"``), and events added or
removed. A long value is shown around the difference, never cut before it.
:func:`diff_events` does that per interaction pair of two cassettes, so two recordings of the
same turn (other ids, ``created`` times, hosts, ports, timing and byte splits) show nothing.
A WebSocket session's messages, both ways, are its events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._core.cassette.texttokens import quote
from replayproxy._core.json.pointer import format_pointer
from replayproxy._core.providers import detect
from replayproxy._core.tools.diff import Difference, opcodes, pair_interactions
from replayproxy._core.tools.meaning import (
    EventMeaning,
    body_meaning,
    event_meaning,
    volatile_paths,
)
from replayproxy._core.wire.events import NotAStreamError

__all__ = ["EventDifference", "diff_events", "diff_meanings"]

_WIDTH = 160  # the longest value shown whole in a difference line


@dataclass(frozen=True, slots=True)
class EventDifference:
    """One difference of two event lists by meaning: ``what`` names the event and the field
    (``event 3 (message): /choices/0/finish_reason``); ``a`` and ``b`` are the JSON values
    (empty: absent)."""

    what: str
    a: str
    b: str

    @property
    def line(self) -> str:
        if not self.a:
            return f"{self.what}: added {self.b}"
        if not self.b:
            return f"{self.what}: removed (was {self.a})"
        return f"{self.what}: {self.a} → {self.b}"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _window(text: str, at: int) -> str:
    """``text`` whole when short, else a window that starts before ``at`` (the difference)."""
    if len(text) <= _WIDTH:
        return text
    start = max(0, at - _WIDTH // 3)
    end = start + _WIDTH
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _both(what: str, a: object, b: object) -> EventDifference:
    ta, tb = _json(a), _json(b)
    at = next(
        (i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), min(len(ta), len(tb))
    )
    return EventDifference(what, _window(ta, at), _window(tb, at))


def _fields(
    where: str, a: object, b: object, path: tuple[str, ...], out: list[EventDifference]
) -> None:
    if a == b and type(a) is type(b):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            sub = (*path, key)
            what = f"{where}: {format_pointer(sub)}"
            if key not in b:
                out.append(EventDifference(what, _window(_json(a[key]), 0), ""))
            elif key not in a:
                out.append(EventDifference(what, "", _window(_json(b[key]), 0)))
            else:
                _fields(where, a[key], b[key], sub, out)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _fields(where, x, y, (*path, str(i)), out)
        return
    out.append(_both(f"{where}: {format_pointer(path) or '(data)'}", a, b))


def diff_meanings(a: Sequence[EventMeaning], b: Sequence[EventMeaning]) -> list[EventDifference]:
    """Every difference between event lists ``a`` and ``b`` (empty when they mean the same):
    per changed field of a changed event, with both values; events removed from ``a`` and
    added in ``b``. Events are numbered as in ``a`` (``event N of B`` for an added one)."""
    out: list[EventDifference] = []
    keys_a = [e.type + "\0" + _json(e.data) for e in a]
    keys_b = [e.type + "\0" + _json(e.data) for e in b]
    for op, a1, a2, b1, b2 in opcodes(keys_a, keys_b):
        if op == "equal":
            continue
        paired = min(a2 - a1, b2 - b1)
        for k in range(paired):
            x, y = a[a1 + k], b[b1 + k]
            where = f"event {a1 + k} ({x.type})"
            if x.type != y.type:
                out.append(_both(f"{where}: type", x.type, y.type))
            _fields(where, x.data, y.data, (), out)
        for i in range(a1 + paired, a2):
            out.append(
                EventDifference(f"event {i} ({a[i].type})", _window(_json(a[i].data), 0), "")
            )
        for j in range(b1 + paired, b2):
            out.append(
                EventDifference(f"event {j} of B ({b[j].type})", "", _window(_json(b[j].data), 0))
            )
    return out


def _ws_meaning(x: Interaction, ignore: Sequence[str]) -> list[EventMeaning]:
    """A WebSocket session's messages as events, both directions (``client`` before the type
    of what the client sent); a binary message is its size."""
    assert x.websocket is not None
    volatile = volatile_paths(detect(x.request, websocket=True), ignore=ignore)
    out = []
    for m in x.websocket.messages:
        text = m.data.decode("utf-8", "replace") if m.text else f"(binary, {len(m.data)} bytes)"
        e = event_meaning(None, text, volatile=volatile)
        out.append(EventMeaning(f"client {e.type}", e.data) if m.from_client else e)
    return out


def _meaning(x: Interaction, ignore: Sequence[str]) -> list[EventMeaning] | None:
    if x.websocket is not None:
        return _ws_meaning(x, ignore)
    resp = x.response
    if resp is None:
        return None
    content_type = resp.header("content-type")
    try:
        return body_meaning(
            resp.body, content_type, provider=detect(x.request, content_type), ignore=ignore
        )
    except NotAStreamError:
        return None


def _label(x: Interaction) -> str:
    return f"{x.request.method} {x.request.path}"


def _pair_events(
    ai: int, x: Interaction, bi: int, y: Interaction, ignore: Sequence[str]
) -> list[Difference]:
    out: list[Difference] = []

    def add(level: str, what: str, a: str, b: str) -> None:
        out.append(Difference(level, ai, bi, _label(x), what, a, b))

    sa = "none" if x.response is None else str(x.response.status)
    sb = "none" if y.response is None else str(y.response.status)
    if sa != sb:
        add("interaction", "status", sa, sb)
    if x.end.kind != y.end.kind:
        add("interaction", "end", x.end.kind.value, y.end.kind.value)
    ea, eb = _meaning(x, ignore), _meaning(y, ignore)
    if ea is None or eb is None:
        ba = b"" if x.response is None else x.response.body
        bb = b"" if y.response is None else y.response.body
        if (ea is None) != (eb is None) or ba != bb:
            add("interaction", "body (not an event stream on both sides)", quote(ba), quote(bb))
        return out
    for d in diff_meanings(ea, eb):
        add("event", d.what, d.a, d.b)
    return out


def diff_events(a: Cassette, b: Cassette, ignore: Sequence[str] = ()) -> list[Difference]:
    """The differences between cassettes ``a`` and ``b`` by meaning: per interaction pair its
    status, ending and events (:mod:`~replayproxy._core.tools.meaning`: ids, ``created`` and the
    like left out, with the JSON pointers in ``ignore``), never times, frames, hosts or headers.
    Interactions pair by method, path and request body."""
    xs, ys = a.interactions, b.interactions
    keys_a = [(x.request.method, x.request.path, x.request.body) for x in xs]
    keys_b = [(y.request.method, y.request.path, y.request.body) for y in ys]
    return pair_interactions(
        xs, ys, opcodes(keys_a, keys_b), lambda i, x, j, y: _pair_events(i, x, j, y, ignore)
    )
