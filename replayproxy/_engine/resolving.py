"""Where a replayed request is resolved (matched and planned): on the event loop when that is
cheap, else on a worker thread.

Resolving on a worker thread keeps an expensive plan from stalling every other stream on the
loop, but the hand-off is not free: the loop waits for the thread's result, and the two
threads take turns on the GIL (a switch can wait up to ``sys.getswitchinterval()``, 5 ms). With
200 requests arriving at once, that hand-off showed as the engine's gap error p99 over the
floor's and doubled its first-event latency. Without faults, planning a schedule is a lookup
(about 25 µs whatever the stream's length) and matching costs about 6 µs per recorded
interaction scanned, plus parsing the request's body (about 0.3 ms for 64 KiB of JSON), so a
small request against a small cassette resolves in well under a millisecond on the loop.
Faults plan in time proportional to the frames (``split:bytes=3`` on 20,000 frames: ~0.9 s),
so with any fault, a big cassette or a big request body, resolving stays on a worker thread.
The request's head counts too: its query is parsed, sorted and compared (about 3 µs per
parameter: a 20,000-parameter GET took 65 ms to match and 150 ms to explain as a miss) and
its headers are redacted for :attr:`~replayproxy._engine.session.ReplaySession.requests`, so a
long URL or many headers resolve on a worker thread as well (issue 28: a 12,000-parameter
query once held the loop for 10.9 s, and a concurrent stream arrived in one read).
"""

from __future__ import annotations

import asyncio

from replayproxy._core.cassette.model import Header, Request
from replayproxy._core.matching.matcher import Miss
from replayproxy._engine.session import Passthrough, ReplaySession, Served, unmatched_response

__all__ = [
    "INLINE_MAX_BODY",
    "INLINE_MAX_HEAD",
    "INLINE_MAX_INTERACTIONS",
    "explained",
    "resolve",
    "resolves_inline",
]

INLINE_MAX_INTERACTIONS = 100
"""Up to this many recorded interactions (and no faults), a request is resolved on the loop:
at most ~0.6 ms of matching."""

INLINE_MAX_BODY = 64 * 1024
"""Up to this many bytes of request body, a request is resolved on the loop."""

INLINE_MAX_HEAD = 2 * 1024
"""Up to this many bytes of URL and headers (names and values), a request is resolved on the
loop: an SDK request's head (some 15 headers, ~700 bytes) stays on it; 150 query parameters
match in ~0.3 ms and are explained as a miss in ~0.7 ms."""


def head_size(request: Request) -> int:
    """The bytes of ``request``'s URL and header names and values."""
    return len(request.url) + sum(len(k) + len(v) for k, v in request.headers)


def resolves_inline(session: ReplaySession, request: Request) -> bool:
    """Whether ``session`` resolves ``request`` in well under a millisecond: a small body and
    head, no faults to plan (given to the session or stored in the cassette) and a small
    cassette."""
    interactions = session.cassette.interactions
    return (
        len(request.body) <= INLINE_MAX_BODY
        and head_size(request) <= INLINE_MAX_HEAD
        and not session.faults
        and len(interactions) <= INLINE_MAX_INTERACTIONS
        and not any(i.faults for i in interactions)
    )


async def resolve(session: ReplaySession, request: Request) -> Served | Miss | Passthrough:
    """``session.resolve(request)``, on the loop when cheap, else on a worker thread."""
    if resolves_inline(session, request):
        return session.resolve(request)
    return await asyncio.to_thread(session.resolve, request)


async def explained(
    session: ReplaySession, request: Request, miss: Miss
) -> tuple[int, tuple[Header, ...], bytes]:
    """The explained answer to ``miss`` (:func:`unmatched_response`), rendered where ``request``
    was resolved: a miss of a long request lists many differences (100 query names of a
    20,000-parameter GET took ~0.2 ms each to word)."""
    if resolves_inline(session, request):
        return unmatched_response(miss, words=session.words)
    return await asyncio.to_thread(unmatched_response, miss, words=session.words)
