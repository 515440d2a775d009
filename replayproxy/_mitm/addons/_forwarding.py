"""What of the replay addon's traffic may reach the network: the flows a record mode forwards
upstream, recorded into the session that forwarded them, and a guard refusing every other
upstream connection.

In a record mode the session may answer a request with
:class:`~replayproxy._engine.session.Passthrough`: the replayer leaves the flow as the client sent
it, mitmproxy forwards it, and the :class:`~replayproxy._mitm.addons.recorder.Recorder` (added
after the replayer, with the replayer as its sink) records it. :class:`Forwarding` remembers,
per flow, the session that forwarded it (the session may be switched, next test, while a flow
still streams), and per client connection how many forwarded flows are open: only those
connections may go upstream (:meth:`Forwarding.guard`).

All methods run on mitmproxy's event loop, except :meth:`Forwarding.pending` (a test or the
harness waiting for recordings), which reads a copy.
"""

from __future__ import annotations

import contextlib
import logging

from mitmproxy import http
from mitmproxy.proxy import server_hooks
from mitmproxy.utils import human

from replayproxy._core.cassette.model import Interaction
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import ReplayProxyError, UpstreamError

__all__ = ["Forwarding"]

# The replayer's logger: what a mitmdump user filters on.
log = logging.getLogger("replayproxy._mitm.addons.replayer")


class Forwarding:
    """The forwarded flows not yet recorded, and the client connections they came on."""

    def __init__(self) -> None:
        self._sessions: dict[str, ReplaySession] = {}  # flow id -> the session to record into
        self._clients: dict[str, int] = {}  # client connection id -> forwarded flows open

    def add(self, flow: http.HTTPFlow, session: ReplaySession) -> None:
        """``flow`` is forwarded upstream, to be recorded into ``session``."""
        self._sessions[flow.id] = session
        client = flow.client_conn.id
        self._clients[client] = self._clients.get(client, 0) + 1

    def __contains__(self, flow: http.HTTPFlow) -> bool:
        return flow.id in self._sessions

    def session_of(self, flow: http.HTTPFlow) -> ReplaySession | None:
        """The session that forwarded ``flow``, until it is recorded."""
        return self._sessions.get(flow.id)

    def record(self, flow: http.HTTPFlow, interaction: Interaction) -> None:
        """Record a forwarded flow into the session that forwarded it; a recording error is
        the session's (counted, logged), never the proxy's."""
        session = self._sessions.pop(flow.id, None)
        client = flow.client_conn.id
        left = self._clients.get(client, 0) - 1
        if left > 0:
            self._clients[client] = left
        else:
            self._clients.pop(client, None)
        if session is None:
            return
        try:
            session.record(interaction)
        except ReplayProxyError as e:
            session.errors.append(str(e))
            log.error("%s", e)

    def pending(self, session: ReplaySession) -> int:
        """How many forwarded flows of ``session`` are not recorded yet (still streaming)."""
        return sum(1 for s in list(self._sessions.values()) if s is session)

    def allows_upstream(self, client_id: str) -> bool:
        """Whether this client connection has a forwarded flow open."""
        return self._clients.get(client_id, 0) > 0

    def guard(
        self,
        data: server_hooks.ServerConnectionHookData,
        session: ReplaySession,
        origins: list[tuple[str, int]],
    ) -> None:
        """Refuse the upstream connection ``data`` unless it goes to one of our ``origins`` or
        serves a forwarded flow; a refusal counts as one of ``session``'s replay errors."""
        address = data.server.address
        if address is not None and tuple(address[:2]) in origins:
            return
        if self.allows_upstream(data.client.id):
            return  # a flow a record mode forwards on purpose
        where = human.format_address(address) if address else "(no address)"
        refusal = UpstreamError(f"refused to connect to {where}: replay never contacts the network")
        data.server.error = str(refusal)
        with contextlib.suppress(Exception):
            session.fail(f"connection to {where}", refusal)
