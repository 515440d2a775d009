"""When a request or a WebSocket client message reached replayproxy, in the origin's clock:
where a replayed schedule (or a WebSocket turn) starts.

A replayed schedule counts its offsets from the request's arrival at mitmproxy, not from when
the origin reads it, so mitmproxy's own latency is absorbed by the recorded offsets instead of
being added to them (docs/guides/replay.md, "Timing"). mitmproxy stamps requests with
the wall clock (``time.time()``, in 11.x and 12.x alike); the origin runs on the loop's
monotonic clock, so the stamp's *age* is carried over, never the stamp itself.

The first request on a new client connection is counted from the moment the connection was
ready to carry it (accepted, or its TLS handshake done) when the whole request was in within
:data:`FRESH_CONNECTION_S` of that: a client that connects to send a request sends it at once,
and the rest of that time is mitmproxy setting the connection up (the ``client_connected`` and
``next_layer`` hooks, choosing the protocol layer) before it parses and stamps the request. A
later request on the connection, or one that came later than that (a pre-connected pool, a
slow upload), is counted from the request's own stamp.
"""

from __future__ import annotations

import asyncio
import time

from mitmproxy import connection, http

MAX_AGE_S = 5.0
"""An age beyond this (or negative) means the wall clock stepped: it counts as 0."""

FRESH_CONNECTION_S = 0.010
"""How soon after the connection was ready a first request must be complete to be counted
from the connection: longer than mitmproxy's own set-up of a connection on a loaded 2-core
machine (1-5 ms), shorter than any pause a client would make on purpose."""


def arrived_at(
    request: http.Request, loop_now: float, wall_now: float, ready: float | None = None
) -> float:
    """When ``request`` reached mitmproxy, in the event loop's clock (``loop.time()``).

    The stamp is ``timestamp_end`` once the whole request is in (the analogue of the
    recorder's t0, taken when the complete request goes upstream), else ``timestamp_start``
    (head parsed); ``ready`` (wall clock: when the client connection could first carry this
    request, see :meth:`FirstRequests.ready`) replaces it when the request was complete within
    :data:`FRESH_CONNECTION_S` of it. The stamp's age on the wall clock is moved to the
    monotonic loop clock; a negative or implausible age (the wall clock stepped) counts as 0.
    """
    stamp = request.timestamp_end
    if stamp is None:
        stamp = request.timestamp_start
    if ready is not None and stamp is not None and 0.0 <= stamp - ready <= FRESH_CONNECTION_S:
        stamp = ready
    return loop_stamp(stamp, loop_now, wall_now)


def message_arrived_at(
    stamp: float, loop_now: float | None = None, wall_now: float | None = None
) -> float:
    """When a WebSocket message stamped ``stamp`` reached mitmproxy, in the loop's clock.

    mitmproxy stamps each message (``message.timestamp``) when the whole message was read,
    before any addon's hook. ``loop_now`` defaults to :func:`loop_time` (the hooks and the
    origin share mitmproxy's loop), ``wall_now`` to ``time.time()``.
    """
    return loop_stamp(
        stamp,
        loop_time() if loop_now is None else loop_now,
        time.time() if wall_now is None else wall_now,
    )


def loop_stamp(stamp: float | None, loop_now: float, wall_now: float) -> float:
    """A wall-clock ``stamp`` in the loop's clock: ``loop_now`` minus its age; a missing stamp,
    or a negative or implausible age, counts as now."""
    age = 0.0 if stamp is None else wall_now - stamp
    if not 0.0 <= age <= MAX_AGE_S:
        age = 0.0
    return loop_now - age


def loop_time() -> float:
    """The origin's clock: the running loop's (hooks run on it); monotonic outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:  # a hook called directly, as mitmproxy's taddons tests do
        return time.monotonic()


class FirstRequests:
    """Which client connections have already sent a request (hooks run on one loop: no lock)."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def ready(self, client: connection.Client) -> float | None:
        """For the first request on ``client``: when the connection was ready to carry it
        (wall clock: its TLS handshake done, else accepted); ``None`` for any later request."""
        if client.id in self._seen:
            return None
        self._seen.add(client.id)
        if client.tls_established:
            return client.timestamp_tls_setup
        return client.timestamp_start

    def forget(self, client: connection.Client) -> None:
        """The connection closed (mitmproxy's ``client_disconnected``)."""
        self._seen.discard(client.id)
