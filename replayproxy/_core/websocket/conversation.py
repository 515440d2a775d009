"""Replaying a WebSocket session: the conversation as a pure state machine.

A recorded session is cut into **turns**. Turn 0 is what the server sent before the client's
first message; turn ``k`` is client message ``k`` and the server messages recorded after it,
up to the next client message. On replay the server messages of a turn are sent at their
recorded offsets **relative to the client message they answered** (turn 0: relative to the
upgrade response), so replay follows the client's pace: a burst recorded 300 ms after
``response.create`` comes 300 ms after the client sends it, however long the client took to
send it. Messages never overtake each other: a message is due no earlier than the one before.

Client messages are matched in order against the recorded ones: text that parses as JSON on
both sides is compared as JSON (key order and spacing ignored) with the fields named by JSON
pointer in ``ignore`` dropped from both sides; anything else byte for byte. A message that does
not match, or one the recording does not have, ends the session with an explained close
(1008, policy violation, the reason naming the message and the first difference).

How the recorded session ended is replayed too: a server close frame (its code and reason)
or a dropped connection at its offset after the last turn; a client close is the client's to
send; a session still open when recording stopped stays open.

:class:`Conversation` does no I/O and reads no clock: the shell passes ``now_ns`` (its own
monotonic time) and executes the :class:`Send` / :class:`Close` actions it gets back, in order,
each at its ``at_ns``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from replayproxy._core import faults as faults_mod
from replayproxy._core.cassette.model import Interaction, Request
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.faults import FaultSpec
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.matching.differences import MatchOptions, diff_requests
from replayproxy._core.schedule.model import Schedule, from_interaction, scale

__all__ = [
    "DEFAULT_IGNORED",
    "POLICY_VIOLATION",
    "Close",
    "Conversation",
    "Send",
    "Turn",
    "WsPlan",
    "plan_interaction",
    "plan_session",
]

POLICY_VIOLATION = 1008
DEFAULT_IGNORED = ("/event_id",)
"""Client-chosen ids (OpenAI Realtime ``event_id``) never match a recording: always ignored."""

_MAX_REASON = 123  # RFC 6455 §5.5: a control frame payload is <= 125 bytes, 2 are the code


@dataclass(frozen=True, slots=True)
class Send:
    """Send server message ``message`` at ``at_ns`` (fragmented as its ``fragments`` say)."""

    at_ns: int
    message: WsMessage


@dataclass(frozen=True, slots=True)
class Close:
    """End the session at ``at_ns``: a close frame with ``code``/``reason``, or, with
    ``code is None``, drop the TCP connection without one (the client sees 1006)."""

    at_ns: int
    code: int | None
    reason: str = ""


Action = Send | Close


@dataclass(frozen=True, slots=True)
class Turn:
    """``client`` (``None`` for turn 0) and the server replies as ``(delay_ns, message)``."""

    client: WsMessage | None
    replies: tuple[tuple[int, WsMessage], ...]


@dataclass(frozen=True, slots=True)
class WsPlan:
    """A session ready to replay: its turns, and how it ends (``end_delay_ns`` after the last
    turn's client message, or after the upgrade when there is none)."""

    turns: tuple[Turn, ...]
    close: WsClose
    end_delay_ns: int
    ignore: tuple[str, ...] = DEFAULT_IGNORED


def plan_session(
    session: WebSocketSession,
    head_offset_ns: int,
    *,
    speed: float = 1.0,
    options: MatchOptions | None = None,
) -> WsPlan:
    """Cut ``session`` into turns, with delays divided by ``speed`` (0: no waiting)."""

    def scaled(ns: int) -> int:
        return 0 if speed == 0 else max(0, round(ns / speed))

    turns: list[Turn] = []
    anchor = head_offset_ns
    client: WsMessage | None = None
    replies: list[tuple[int, WsMessage]] = []
    for m in session.messages:
        if m.from_client:
            turns.append(Turn(client, tuple(replies)))
            client, anchor, replies = m, m.offset_ns, []
        else:
            replies.append((scaled(m.offset_ns - anchor), m))
    turns.append(Turn(client, tuple(replies)))
    ignore = (*DEFAULT_IGNORED, *(options.ignore_body_fields if options else ()))
    return WsPlan(
        tuple(turns), session.close, scaled(session.close.offset_ns - anchor), tuple(ignore)
    )


def plan_interaction(
    interaction: Interaction,
    index: int,
    *,
    speed: float = 1.0,
    faults: Sequence[FaultSpec] = (),
    replay_count: int = 0,
    options: MatchOptions | None = None,
) -> tuple[Schedule, WsPlan | None]:
    """What to serve for a recorded WebSocket interaction: the schedule of its ``101`` head
    and the conversation to replay after it, faults applied and scaled by ``speed`` (each by
    the WebSocket applier of its definition in :mod:`replayproxy._core.faults.registry`). A
    fault of the RESPONSE phase (``status``) refuses the upgrade: then the schedule is the HTTP
    error and the plan ``None``. Raises :class:`~replayproxy._errors.FaultSpecError` when a
    fault cannot apply."""
    planned = ws_faults.plan(
        interaction, index, speed=speed, faults=faults, replay_count=replay_count
    )
    if planned is None:
        schedule = faults_mod.plan(
            interaction, index, speed=speed, faults=faults, replay_count=replay_count
        )
        return schedule, None
    session, head_ns = planned
    schedule = scale(from_interaction(interaction), speed)
    if schedule.head is not None:
        schedule = replace(schedule, head=replace(schedule.head, at_ns=head_ns))
    return schedule, plan_session(session, head_ns, options=options)


def _describe(message: WsMessage | None) -> str:
    if message is None:
        return "(none)"
    if message.text:
        text = message.data.decode("utf-8", "replace")
        return text if len(text) <= 60 else text[:57] + "..."
    return f"{len(message.data)} binary bytes"


def message_difference(recorded: WsMessage, got: WsMessage, ignore: Sequence[str]) -> str | None:
    """Why client message ``got`` does not match ``recorded`` (``None``: it matches)."""
    if recorded.text != got.text:
        kinds = ("binary", "text")
        return f"recorded a {kinds[recorded.text]} message, got a {kinds[got.text]} one"
    if not recorded.text:
        return None if recorded.data == got.data else "the binary payload differs"
    # JSON comparison with ignored pointers, exactly as request bodies are compared.
    diffs = diff_requests(
        Request("WS", "/", body=recorded.data),
        Request("WS", "/", body=got.data),
        MatchOptions(ignore_body_fields=tuple(ignore)),
    )
    if not diffs:
        return None
    d = diffs[0]
    if d.pointer is None:
        return "the text differs"
    return f"at {d.pointer or '/'}: recorded {d.recorded}, got {d.requested}"


def _reason(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= _MAX_REASON:
        return text
    return data[: _MAX_REASON - 3].decode("utf-8", "ignore") + "..."


class Conversation:
    """One replay of a :class:`WsPlan`: feed it the client's messages, execute its actions."""

    def __init__(self, plan: WsPlan) -> None:
        self.plan = plan
        self.received = 0  # client messages matched so far
        self.miss: str | None = None  # the full explanation, once a message did not match
        self.closed = False
        self._last_due = 0

    def _due(self, at_ns: int) -> int:
        self._last_due = max(self._last_due, at_ns)
        return self._last_due

    def _turn_actions(self, k: int, now_ns: int, ready_ns: int | None = None) -> list[Action]:
        replies = self.plan.turns[k].replies
        if ready_ns is not None and replies:
            # The message reached us after its first reply was due (a saturated relay): the
            # turn starts late and keeps its recorded gaps, instead of sending every overdue
            # reply at once; as for HTTP (docs/guides/replay.md, "Timing").
            now_ns += max(0, ready_ns - (now_ns + replies[0][0]))
        out: list[Action] = [Send(self._due(now_ns + delay), m) for delay, m in replies]
        if k == len(self.plan.turns) - 1:
            close = self.plan.close
            at = self._due(now_ns + self.plan.end_delay_ns)
            if close.kind is WsCloseKind.DROPPED:
                out.append(Close(at, None))
            elif close.kind is WsCloseKind.CLOSE and not close.by_client:
                out.append(Close(at, close.code, close.reason))
        return out

    def start(self, now_ns: int) -> list[Action]:
        """The actions due once the upgrade response is sent (``now_ns``)."""
        self._last_due = now_ns
        return self._turn_actions(0, now_ns)

    def client_message(
        self, text: bool, data: bytes, now_ns: int, ready_ns: int | None = None
    ) -> list[Action]:
        """The actions answering a client message that arrived at ``now_ns`` (when it reached
        replayproxy) and could be answered from ``ready_ns`` on (when the engine read it;
        default: ``now_ns``)."""
        if self.closed:
            return []
        got = WsMessage(now_ns, True, text, data)
        n = self.received
        if n + 1 >= len(self.plan.turns):
            return self._mismatch(
                f"client message {n} was not recorded (the recording has {n}): {_describe(got)}",
                now_ns,
            )
        recorded = self.plan.turns[n + 1].client
        assert recorded is not None
        why = message_difference(recorded, got, self.plan.ignore)
        if why is not None:
            return self._mismatch(f"client message {n} does not match the recording: {why}", now_ns)
        self.received += 1
        return self._turn_actions(n + 1, now_ns, ready_ns)

    def _mismatch(self, explanation: str, now_ns: int) -> list[Action]:
        self.miss = explanation
        self.closed = True
        return [Close(now_ns, POLICY_VIOLATION, _reason("replayproxy: " + explanation))]
