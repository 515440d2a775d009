"""Resumed SSE streams: serve the rest of a recorded stream to a client that reconnects (pure).

Two ways a client asks for "the rest":

- **Last-Event-ID** (WHATWG SSE reconnection): the request is the recorded one again (method,
  path, query and body match as usual; headers never take part) and carries
  ``Last-Event-ID: X``. When the recorded stream has event ids, the reply is the recorded
  stream after the event whose ``id:`` is ``X``. A recording without any ``id:`` lines is left
  to ordinary matching; one with ids but not ``X`` is a miss that says so.
- **Responses API background streams**: ``GET .../responses/{id}?stream=true&starting_after=N``
  when the cassette has no recorded GET of that path but has a recorded stream whose
  ``response.created`` event names response ``{id}``. The reply is that stream's events with
  ``sequence_number > N`` (all of them without ``starting_after``).

The remainder keeps the recorded timing: the head comes at its recorded offset (TTFB), and each
remaining write comes as long after the head as it came after the cut in the recording, so the
gaps between the remaining events are the recorded gaps. The ending is the recorded ending.
Replay-time and stored faults describe the recorded stream as first served; a resume is served
without them (a ``close:events=5`` fault cuts the first request, the reconnect gets the rest).

When several recorded streams qualify, the one served most recently (the last used one in
recorded order) wins, else the first: a client resumes the stream it was reading.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from replayproxy._core.cassette.model import Interaction, Request
from replayproxy._core.faults.position import cut_writes
from replayproxy._core.matching.differences import MatchOptions, describe_request, diff_requests
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.schedule.model import Finish, Schedule, Write, from_interaction
from replayproxy._core.wire.sse import SSEEvent, parse_events

__all__ = ["Resume", "find", "remainder"]

_RESPONSES_PATH = re.compile(r"^(?P<prefix>.*/responses)/(?P<id>[^/]+)$")


@dataclass(frozen=True, slots=True)
class Resume:
    """Serve recorded interaction ``index`` from event ``after`` on (``after`` events skipped).

    ``why`` says what asked for it (``Last-Event-ID '7'``), for logs.
    """

    index: int
    after: int
    why: str


def _events(interaction: Interaction) -> list[SSEEvent]:
    resp = interaction.response
    if resp is None:
        return []
    media = (resp.header("content-type") or "").split(";", 1)[0].strip().lower()
    if media != "text/event-stream":
        return []
    return parse_events(resp.body)


def _prefer(found: Sequence[tuple[int, int]], uses: Sequence[int]) -> tuple[int, int]:
    """The (index, after) a client most likely resumes: the last served stream, else the first."""
    served = [f for f in found if uses[f[0]] > 0]
    return served[-1] if served else found[0]


def _by_last_event_id(
    request: Request,
    last_id: str,
    interactions: Sequence[Interaction],
    options: MatchOptions,
    uses: Sequence[int],
) -> Resume | Miss | None:
    same = [n for n, i in enumerate(interactions) if not diff_requests(i.request, request, options)]
    # A reconnect that was itself recorded is an ordinary request: match it as such.
    if any(interactions[n].request.header("last-event-id") == last_id for n in same):
        return None
    with_ids: list[int] = []
    found: list[tuple[int, int]] = []
    for n in same:
        events = _events(interactions[n])
        ids = [e.id for e in events]
        if any(i is not None for i in ids):
            with_ids.append(n)
        if last_id in ids:
            found.append((n, ids.index(last_id) + 1))
    if found:
        n, after = _prefer(found, uses)
        return Resume(n, after, f"Last-Event-ID {last_id!r}")
    if not with_ids:
        return None  # no event ids were recorded: nothing to resume from
    return Miss(
        describe_request(request),
        with_ids[0],
        (),
        reason=f"the request carries Last-Event-ID {last_id!r}, but no recorded stream that "
        "matches it has an event with that id",
    )


def _response_id(events: Sequence[SSEEvent]) -> str | None:
    for event in events[:4]:  # response.created comes first
        doc = _json(event.data)
        if isinstance(doc, dict) and isinstance(doc.get("response"), dict):
            rid = doc["response"].get("id")
            if isinstance(rid, str):
                return rid
    return None


def _json(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _sequence(event: SSEEvent) -> int | None:
    doc = _json(event.data)
    if isinstance(doc, dict) and isinstance(doc.get("sequence_number"), int):
        return int(doc["sequence_number"])
    return None


def _by_starting_after(
    request: Request, interactions: Sequence[Interaction], uses: Sequence[int]
) -> Resume | Miss | None:
    m = _RESPONSES_PATH.match(request.path)
    if request.method.upper() != "GET" or m is None:
        return None
    query = dict(parse_qsl(urlsplit(request.url).query, keep_blank_values=True))
    if query.get("stream", "").lower() != "true":
        return None
    # A recorded retrieval of this very path is served as recorded.
    if any(
        i.request.method.upper() == "GET" and i.request.path == request.path for i in interactions
    ):
        return None
    raw = query.get("starting_after")
    start: int | None = None  # without starting_after: every event
    if raw is not None:
        try:
            start = int(raw)
        except ValueError:
            return Miss(
                describe_request(request),
                None,
                (),
                reason=f"starting_after must be an integer, got {raw!r}",
            )
    wanted = m.group("id")
    found: list[tuple[int, int]] = []
    for n, interaction in enumerate(interactions):
        events = _events(interaction)
        if _response_id(events) != wanted:
            continue
        after = 0
        if start is not None:
            for event in events:
                seq = _sequence(event)
                if seq is not None and seq > start:
                    break
                after += 1
        found.append((n, after))
    if not found:
        return None
    n, after = _prefer(found, uses)
    why = f"response {wanted} starting_after={raw}" if raw is not None else f"response {wanted}"
    return Resume(n, after, why)


def find(
    request: Request,
    interactions: Sequence[Interaction],
    options: MatchOptions,
    uses: Sequence[int],
) -> Resume | Miss | None:
    """Whether ``request`` resumes a recorded stream (:class:`Resume`), asks to resume one that
    cannot be (:class:`Miss` with a reason), or is an ordinary request (``None``).

    ``uses`` is how often each interaction was served so far (the matcher's counts).
    """
    last_id = request.header("last-event-id")
    if last_id is not None:
        return _by_last_event_id(request, last_id, interactions, options, uses)
    return _by_starting_after(request, interactions, uses)


def remainder(interaction: Interaction, after: int) -> Schedule:
    """The recorded stream of ``interaction`` without its first ``after`` events, re-timed so
    the rest follows the head as it followed the cut (see the module doc)."""
    schedule = from_interaction(interaction)
    head = schedule.head
    if head is None or after <= 0:
        return schedule
    events = _events(interaction)
    offset = events[after - 1].end if after <= len(events) else len(schedule.body)
    before, rest = cut_writes(schedule.writes, offset)
    cut_at = before[-1].at_ns if before else head.at_ns

    def shifted(at_ns: int) -> int:
        return head.at_ns + max(0, at_ns - cut_at)

    writes = tuple(Write(shifted(w.at_ns), w.data) for w in rest)
    finish = Finish(shifted(schedule.finish.at_ns), schedule.finish.kind)
    return replace(schedule, writes=writes, finish=finish)
