"""Handing a replayed flow to an origin, and taking the flow back once the exchange is over.

The replay addon rewrites a matched flow to go to its loopback origin (:func:`hand_over`): the
origin process for a schedule that waits, else the in-process origin, which finds the schedule
by the private token header. :func:`restore` shows the flow again as the client sent it (the
recorded host, no private headers, the client's body).

With the origin in a child process (:mod:`replayproxy._engine.origin_process`) there is no
shared token table: the schedule rides in the forwarded request itself, as its body
(:mod:`replayproxy._core.schedule.codec`), with the child's secret in
:data:`~replayproxy._engine.origin.PACKED_HEADER`. The client's own body is kept in the flow's
replay metadata and put back when the exchange is over (:func:`restore`), so addons after
this one, mitmweb and saved flows see the request as the client sent it.
"""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from replayproxy._core.schedule import codec as schedule_wire
from replayproxy._core.schedule.model import FinishKind, Head, Schedule
from replayproxy._engine.http1_writer import wire_headers
from replayproxy._engine.origin import FAILURE_HEADER, PACKED_HEADER, TOKEN_HEADER, Origin
from replayproxy._engine.origin_process import OriginProcess
from replayproxy._engine.session import Served
from replayproxy._engine.websocket import WsServe

__all__ = [
    "META",
    "failure_summary",
    "hand_over",
    "origin_address",
    "pack_into",
    "restore",
    "waits",
    "whole_response",
]

META = "replayproxy_replay"
"""``flow.metadata`` key of a replayed flow's replay metadata (plain data: flows may be saved)."""

_BODY = "client_body"

# The forwarded body is the packed schedule, sent as is: these would describe the client's.
_BODY_HEADERS = ("content-encoding", "transfer-encoding", "content-length")


def waits(schedule: Schedule) -> bool:
    """Whether anything in ``schedule`` waits (not ``--speed 0`` without a delaying fault).
    Only timers gain from the origin process; an instant schedule stays on the in-process
    origin, which spares mitmproxy the hop of the packed body (forward ``--speed 0``, 4 rounds
    interleaved: 387 responses/s through the child, 404 in-process)."""
    head = schedule.head
    return (
        (head is not None and head.at_ns > 0)
        or schedule.finish.at_ns > 0
        or any(w.at_ns > 0 for w in schedule.writes)
    )


def hand_over(
    flow: http.HTTPFlow,
    served: Served,
    websocket: WsServe | None,
    arrived: float | None,
    origin: Origin,
    process: OriginProcess | None,
) -> None:
    """Send ``flow`` to the origin that plays ``served`` (``websocket``: its WebSocket part, as
    the addon completed it), its clock started at ``arrived``; records the flow's replay
    metadata under :data:`META`. Raises, touching nothing, if the origin process is gone."""
    req = flow.request
    meta: dict[str, Any] = {
        "index": served.index,
        # Plain data (the flow may be saved): whether the client must see a TCP RST.
        "reset": served.schedule.finish.kind is FinishKind.RESET,
        "target": (req.scheme, req.host, req.port, req.host_header),
    }
    if process is not None and websocket is None and waits(served.schedule):
        if process.exited() is not None:
            raise process.gone()
        pack_into(flow, meta, served.schedule, arrived, process.secret)
        address = process.address
    else:
        meta["token"] = origin.expect(
            served.schedule, req.method, arrived=arrived, websocket=websocket
        )
        req.headers[TOKEN_HEADER] = meta["token"]
        address = origin_address(origin)
    flow.metadata[META] = meta
    req.scheme = "http"
    req.host, req.port = address


def origin_address(origin: Origin) -> tuple[str, int]:
    """Where the in-process origin listens."""
    return ("127.0.0.1", origin.port)


def pack_into(
    flow: http.HTTPFlow,
    meta: dict[str, Any],
    schedule: Schedule,
    arrived: float | None,
    secret: str,
) -> None:
    """Make ``flow``'s request carry ``schedule`` to the origin process (``meta``: the flow's
    replay metadata, which keeps the client's body)."""
    req = flow.request
    packed = schedule_wire.pack(schedule, req.method, arrived)  # first: may raise
    meta[_BODY] = (req.raw_content, {name: req.headers.get_all(name) for name in _BODY_HEADERS})
    for name in _BODY_HEADERS:
        req.headers.pop(name, None)
    req.headers[PACKED_HEADER] = secret
    req.raw_content = packed
    req.headers["content-length"] = str(len(packed))


def restore(flow: http.HTTPFlow) -> None:
    """Once the exchange is over, show the flow as the client sent it (mitmweb, saved flows,
    later addons): the recorded host instead of the loopback origin, without the private
    headers, with the client's body."""
    meta = flow.metadata.get(META)
    if meta is None or "target" not in meta:
        return
    scheme, host, port, host_header = meta.pop("target")
    req = flow.request
    req.scheme, req.host, req.port = scheme, host, port
    req.host_header = host_header
    req.headers.pop(TOKEN_HEADER, None)
    _restore_body(req, meta)


def whole_response(head: Head, body: bytes) -> http.Response:
    """A complete response with the recorded head and ``body`` as is (never re-encoded): for a
    schedule with nothing to time or split, answered without the hop to an origin."""
    response = http.Response.make(head.status, b"", wire_headers(head.headers, chunked=False))
    response.raw_content = body  # not .content: that would apply content-encoding again
    response.headers["content-length"] = str(len(body))
    if head.reason:
        response.reason = head.reason
    return response


def _restore_body(req: http.Request, meta: dict[str, Any]) -> None:
    """Undo :func:`pack_into` (nothing if the flow was not packed)."""
    if _BODY not in meta:
        return
    body, headers = meta.pop(_BODY)
    req.headers.pop(PACKED_HEADER, None)
    req.raw_content = body
    for name, values in headers.items():
        req.headers.set_all(name, values)


def failure_summary(response: http.Response) -> str | None:
    """The origin process's summary of a failure it answered, removed from ``response``."""
    summary = response.headers.get(FAILURE_HEADER)
    if summary is not None:
        del response.headers[FAILURE_HEADER]
    return summary
