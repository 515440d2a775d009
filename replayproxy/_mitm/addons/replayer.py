"""The replay addon: answers intercepted requests from a cassette, never from the network,
except the requests a record mode forwards.

mitmproxy cannot stream a body an addon produces itself (docs/contributing/mitmproxy-internals.md
§1), so the addon owns an :class:`~replayproxy._engine.origin.Origin` on mitmproxy's own loop
(started in ``running``) and, with ``origin_process=True`` (the CLI), an origin in a child process
for HTTP responses (:mod:`~replayproxy._engine.origin_process`; the schedule rides in the forwarded
body, :mod:`~replayproxy._mitm.addons._handoff`, and a failure it answers is counted here in
``responseheaders``):

- ``request``: match the request (:class:`~replayproxy._engine.session.ReplaySession`), register the
  planned schedule with the origin, and rewrite the flow to ``http://127.0.0.1:<origin>`` with
  the private ``x-replayproxy-token`` header that tells the origin which schedule to run.
  With ``connection_strategy=lazy`` mitmproxy then never resolves or contacts the real host
  (docs/contributing/mitmproxy-internals.md §2); the addon sets it. The schedule's clock starts when
  the request reached mitmproxy (:mod:`~replayproxy._mitm.addons._arrival`), so mitmproxy's own
  latency is absorbed by the recorded offsets instead of being added to them. Unmatched requests are
  answered at once with the explained 500 (``x-replayproxy-unmatched: 1``); a response with nothing
  to time or split (one write, clean end, all at ``t = 0``, as with ``--speed 0 --fault coalesce``)
  in one piece. In a record mode the session may instead say
  :class:`~replayproxy._engine.session.Passthrough`: the flow is marked
  (``flow.metadata[PASSTHROUGH_META]``), forwarded by mitmproxy and recorded by the
  :class:`~replayproxy._mitm.addons.recorder.Recorder` with this addon as its sink
  (:mod:`~replayproxy._mitm.addons._forwarding`, which also refuses, in ``server_connect``,
  every other upstream connection).
- ``websocket_message``: for a replayed WebSocket, note when mitmproxy received each client
  message (:mod:`~replayproxy._mitm.addons._arrival`) in the session's
  :class:`~replayproxy._engine.websocket.ClientArrivals`: the server messages answering it count
  their recorded delay from then.
- ``responseheaders``: ``flow.response.stream = True`` so every chunk from the origin is
  forwarded as it comes, keeping the recorded gaps and byte splits.
- ``error``: for a flow whose schedule ends in a reset, abort the HTTP/1 client connection with
  a TCP RST (:mod:`~replayproxy._mitm.addons._connections`), because mitmproxy itself only
  ever FIN-closes clients (docs/contributing/mitmproxy-internals.md §3): a reset would look like an
  incomplete body.

Options (prefix ``replayproxy_``, usable from ``mitmdump -s mitmdump_replay.py --set ...``):
``replayproxy_replay`` (cassette path) and the replay option table
(:mod:`~replayproxy._mitm.addons._replay_options`). The CLI passes a ready session to the
constructor instead, and :meth:`Replayer.use` switches sessions (one per test).

All hooks run on mitmproxy's event loop, the same loop as the origin, so the token table needs
no lock; the session has its own lock for readers on other threads.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from dataclasses import replace
from typing import Any

from mitmproxy import connection, ctx, http
from mitmproxy.proxy import server_hooks

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.options import RecordSettings
from replayproxy._core.schedule.model import instant_body
from replayproxy._engine import resolving
from replayproxy._engine.failsafe import (
    ReplayFailure,
    describe,
    failure_of,
    failure_response,
)
from replayproxy._engine.memory import ReleaseAfterBigBodies
from replayproxy._engine.origin import Origin
from replayproxy._engine.origin_process import OriginProcess, OriginProcessError
from replayproxy._engine.session import Passthrough, ReplaySession
from replayproxy._engine.websocket import ClientArrivals
from replayproxy._mitm.addons import _handoff, _replay_options
from replayproxy._mitm.addons._arrival import (
    FirstRequests,
    arrived_at,
    loop_time,
    message_arrived_at,
)
from replayproxy._mitm.addons._connections import drop_client, reset_client
from replayproxy._mitm.addons._convert import request_of
from replayproxy._mitm.addons._forwarding import Forwarding

__all__ = ["PASSTHROUGH_META", "Replayer", "arrived_at", "request_of"]

log = logging.getLogger(__name__)

_META = _handoff.META

PASSTHROUGH_META = "replayproxy_passthrough"
"""``flow.metadata`` key set (to True) on a flow a record mode forwards upstream. Every other
flow is answered from the cassette and must never reach the network."""


class Replayer:
    """Serve a cassette through mitmproxy. Pass a session, or set ``replayproxy_replay``."""

    def __init__(
        self, session: ReplaySession | None = None, *, origin_process: bool = False
    ) -> None:
        self.session = session
        self._fixed = session is not None
        self.origin: Origin | None = None
        # The CLI runs the HTTP origin in a child process (engine/origin_process); WebSocket
        # sessions, mitmdump -s and the pytest plugin use the in-process origin.
        self.process: OriginProcess | None = OriginProcess() if origin_process else None
        self._forwarded = Forwarding()  # flows a record mode forwards upstream
        # Replayed WebSocket flows: when mitmproxy received each client message (flow id).
        self._ws_arrivals: dict[str, ClientArrivals] = {}
        self._memory = ReleaseAfterBigBodies()
        self._first_requests = FirstRequests()

    def use(self, session: ReplaySession | None) -> None:
        """Serve ``session`` from now on (thread-safe: one attribute store); options are ignored."""
        self._fixed = session is not None
        self.session = session

    # -- options ---------------------------------------------------------------------------

    def load(self, loader: Any) -> None:
        _replay_options.declare_options(loader)

    def configure(self, updated: set[str]) -> None:
        opts: Any = ctx.options  # mitmproxy's option attributes are dynamic
        if not self._fixed and any(name.startswith("replayproxy_") for name in updated):
            self.session = None  # a bad option leaves none
            self.session = _replay_options.session_from_options(opts)
        if self.session is not None:
            _replay_options.keep_lazy(opts)

    # -- lifecycle -------------------------------------------------------------------------

    async def running(self) -> None:
        if self.origin is None:
            self.origin = Origin(fail=self._origin_failed)
            await self.origin.start()
        if self.process is not None and not self.process.port:
            await self.process.start()

    async def done(self) -> None:
        if self.origin is not None:
            await self.origin.close()
            self.origin = None
        if self.process is not None:
            await self.process.close()
        if self.session is not None and not self._fixed:
            log.info(self.session.summary().line())

    def _origin_failed(self, request: str, exc: BaseException) -> ReplayFailure:
        """The origin could not execute a schedule: count it like a failure in :meth:`request`."""
        session = self.session
        return failure_of(exc, request) if session is None else session.fail(request, exc)

    # -- flows -----------------------------------------------------------------------------

    async def request(self, flow: http.HTTPFlow) -> None:
        session = self.session
        if session is None:
            return
        try:  # everything in here fails closed
            ready = self._first_requests.ready(flow.client_conn)  # every request counts as seen
            if flow.response is not None:
                return
            await self._replay(session, flow, ready)
        except Exception as e:  # fail closed: mitmproxy would carry on and forward the request
            self._fail(session, flow, e)

    def client_disconnected(self, client: connection.Client) -> None:
        self._first_requests.forget(client)

    async def _replay(
        self, session: ReplaySession, flow: http.HTTPFlow, ready: float | None = None
    ) -> None:
        if self.origin is None:  # never let a replayed request through to the network
            flow.response = http.Response.make(
                503,
                b"replayproxy: the replay origin is not running\n",
                {"content-type": "text/plain"},
            )
            return
        # On a worker thread unless cheap: a big body or a fault that builds many writes must
        # not stall every other stream on mitmproxy's loop.
        request = request_of(flow.request)
        result = await resolving.resolve(session, request)
        if isinstance(result, Passthrough):
            # Left as the client sent it: mitmproxy forwards it, the Recorder (added after
            # this addon, with this addon as its sink) records it into `session`.
            flow.metadata[PASSTHROUGH_META] = True
            self._forwarded.add(flow, session)
            return
        if isinstance(result, Miss):
            status, headers, body = await resolving.explained(session, request, result)
            flow.response = http.Response.make(status, body, headers)
            return
        whole = None if result.websocket is not None else instant_body(result.schedule)
        if whole is not None and result.schedule.head is not None:
            # Nothing to time or split (e.g. --speed 0 --fault coalesce): answer in one piece,
            # as mitmproxy's own server replay does, without the hop through the origin.
            flow.response = _handoff.whole_response(result.schedule.head, whole)
            return
        arrived = arrived_at(flow.request, loop_time(), time.time(), ready)
        websocket = result.websocket
        if websocket is not None:
            arrivals = self._ws_arrivals[flow.id] = ClientArrivals()
            on_drop = functools.partial(drop_client, flow)
            websocket = replace(websocket, on_drop=on_drop, arrivals=arrivals)
        _handoff.hand_over(flow, result, websocket, arrived, self.origin, self.process)

    # -- the recorder's sink (record modes) ---------------------------------------------------

    def wants(self, flow: http.HTTPFlow) -> bool:
        """Whether the Recorder should record ``flow``: only the flows forwarded upstream."""
        return flow in self._forwarded

    def write(self, flow: http.HTTPFlow, interaction: Interaction) -> None:
        """Record a forwarded flow into the session that forwarded it (on the proxy thread)."""
        self._forwarded.record(flow, interaction)

    def record_settings(self, flow: http.HTTPFlow) -> RecordSettings:
        """How to record a forwarded flow: as the session that forwarded it says (redaction)."""
        session = self._forwarded.session_of(flow)
        return RecordSettings() if session is None else session.record_settings

    def pending(self, session: ReplaySession) -> int:
        """How many forwarded flows of ``session`` are not recorded yet (still streaming)."""
        return self._forwarded.pending(session)

    def allows_upstream(self, client_id: str) -> bool:
        """Whether a connection upstream for this client connection serves a forwarded flow
        (for a ``server_connect`` guard: every other upstream connection must be refused)."""
        return self._forwarded.allows_upstream(client_id)

    def _forget(self, flow: http.HTTPFlow) -> dict[str, Any] | None:
        """Drop what :meth:`_replay` registered for ``flow`` (the origin's schedule, the
        WebSocket arrivals); returns the flow's replay metadata, if any."""
        meta: dict[str, Any] | None = flow.metadata.get(_META)
        if meta is not None and "token" in meta and self.origin is not None:
            self.origin.forget(meta["token"])
        self._ws_arrivals.pop(flow.id, None)
        return meta

    def _fail(self, session: ReplaySession, flow: http.HTTPFlow, exc: Exception) -> None:
        """Answer ``flow`` with the explained 500 (:mod:`~replayproxy._engine.failsafe`), undoing
        whatever :meth:`_replay` had done to it; this must not raise."""
        self._forget(flow)
        _handoff.restore(flow)
        flow.metadata.pop(_META, None)
        request = describe(flow.request.method, flow.request.url)
        try:
            failure = session.fail(request, exc)
        except Exception:  # a failing on_error callback must not undo the answer
            failure = failure_of(exc, request)
        status, headers, body = failure_response(failure)
        flow.response = http.Response.make(status, body, headers)

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Refuse every upstream connection in replay but the one to our own origin (and, in
        a record mode, those for the flows :meth:`_replay` chose to forward).

        Independent of :meth:`request`: should a future bug let a flow through un-rewritten,
        mitmproxy still cannot reach the network (the client gets mitmproxy's 502 "Connection
        killed", and the run fails: the refusal counts as a replay error).
        """
        if self.session is not None:
            self._forwarded.guard(data, self.session, self._origins())

    def _origins(self) -> list[tuple[str, int]]:
        """Where replayed flows go: the in-process origin and the origin process."""
        out = [] if self.origin is None else [_handoff.origin_address(self.origin)]
        if self.process is not None and self.process.port:
            out.append(self.process.address)
        return out

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        arrivals = self._ws_arrivals.get(flow.id)
        if arrivals is None or flow.websocket is None:
            return
        message = flow.websocket.messages[-1]
        if message.from_client:
            arrivals.note(message.content, message_arrived_at(message.timestamp))

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._ws_arrivals.pop(flow.id, None)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if _META in flow.metadata and flow.response is not None:
            flow.response.stream = True
            summary = _handoff.failure_summary(flow.response)
            if summary is not None and self.session is not None:
                # The origin process answered with the explained 500: count it here.
                request = describe(flow.request.method, flow.request.url)
                with contextlib.suppress(Exception):
                    self.session.fail(request, OriginProcessError(summary))

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None and flow.response.status_code != 101:
            self._ws_arrivals.pop(flow.id, None)  # the upgrade was refused: no messages follow
        _handoff.restore(flow)
        self._release_big_body(flow)

    def _release_big_body(self, flow: http.HTTPFlow) -> None:
        """After a flow with a big request body, give its memory back once the flow is freed
        (see :mod:`replayproxy._engine.memory`)."""
        self._memory.seen(len(flow.request.raw_content or b""))

    async def error(self, flow: http.HTTPFlow) -> None:
        # A flow that failed before reaching the origin leaves its schedule behind.
        meta = self._forget(flow)
        process, session = self.process, self.session
        if (
            meta is not None
            and process is not None
            and process.exited() is not None
            and session is not None
        ):
            with contextlib.suppress(Exception):  # the stream was cut: say why, and count it
                session.fail(describe(flow.request.method, flow.request.url), process.gone())
        # mitmproxy runs this hook before it FIN-closes the client (the error hook comes first
        # in HttpStream.handle_protocol_error), so aborting here is what the client sees.
        if (
            meta is not None
            and meta.get("reset")
            and flow.request.http_version.startswith("HTTP/1")
        ):
            await reset_client(flow)
        _handoff.restore(flow)
        self._release_big_body(flow)
