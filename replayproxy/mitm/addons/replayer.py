"""The replay addon: answers every intercepted request from a cassette, never from the network.

mitmproxy cannot stream a body an addon produces itself (mitmproxy-notes §2.1), so the addon
owns an :class:`~replayproxy.engine.origin.Origin` on mitmproxy's own loop (started in ``running``):

- ``request``: match the request (:class:`~replayproxy.engine.session.ReplaySession`), register the
  planned schedule with the origin, and rewrite the flow to ``http://127.0.0.1:<origin>`` with
  the private ``x-replayproxy-token`` header that tells the origin which schedule to run.
  With ``connection_strategy=lazy`` mitmproxy then never resolves or contacts the real host
  (§2.2, §3.4); the addon sets it. Unmatched requests are answered at once with the explained
  500 (``x-replayproxy-unmatched: 1``).
  A response with nothing to time or split (one write, clean end, all at ``t = 0``, as with
  ``--speed 0 --fault coalesce``) is answered directly instead, in one piece.
- ``responseheaders``: ``flow.response.stream = True`` so every chunk from the origin is
  forwarded as it comes, keeping the recorded gaps and byte splits.
- ``error``: for a flow whose schedule ends in a reset, abort the HTTP/1 client connection with
  a TCP RST (see :func:`_reset_client`), because mitmproxy itself only ever FIN-closes clients
  (mitmproxy-notes §3.1), which would make a reset look like an incomplete body.

Options (prefix ``replayproxy_``, usable from ``mitmdump -s mitmdump_replay.py --set ...``):
``replayproxy_replay`` (cassette path), ``replayproxy_speed``, ``replayproxy_faults``,
``replayproxy_ignore_query``, ``replayproxy_ignore_body_field``, ``replayproxy_allow_repeats``,
``replayproxy_match_host``. The CLI passes a ready session to the constructor instead.

All hooks run on mitmproxy's event loop, the same loop as the origin, so the token table needs
no lock; the session has its own lock for readers on other threads.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mitmproxy import ctx, exceptions, http

from replayproxy.core.matching import MatchOptions, Miss
from replayproxy.core.schedule import FinishKind, Head, instant_body
from replayproxy.engine.origin import TOKEN_HEADER, Origin, wire_headers
from replayproxy.engine.session import ReplaySession, check_speed, unmatched_response
from replayproxy.engine.sockets import reset_after_drain
from replayproxy.errors import ReplayProxyError
from replayproxy.mitm.addons._convert import request_of

__all__ = ["Replayer", "request_of"]

log = logging.getLogger(__name__)

_META = "replayproxy_replay"

# mitmproxy 11 leaves OptionsError untyped; keep mypy strict happy on both versions.
_options_error: Callable[[str], Exception] = exceptions.OptionsError


class Replayer:
    """Serve a cassette through mitmproxy. Pass a session, or set ``replayproxy_replay``."""

    def __init__(self, session: ReplaySession | None = None) -> None:
        self.session = session
        self._fixed = session is not None
        self.origin: Origin | None = None

    def use(self, session: ReplaySession | None) -> None:
        """Serve ``session`` from now on (thread-safe: one attribute store); options are ignored."""
        self._fixed = session is not None
        self.session = session

    # -- options ---------------------------------------------------------------------------

    def load(self, loader: Any) -> None:
        loader.add_option(
            "replayproxy_replay", str | None, None, "Replay this cassette (no upstream traffic)."
        )
        loader.add_option(
            "replayproxy_speed", str, "1", "Replay speed: 1 as recorded, 2 twice as fast, 0 none."
        )
        loader.add_option(
            "replayproxy_faults", Sequence[str], [], "Fault specs applied to every response."
        )
        loader.add_option(
            "replayproxy_ignore_query", Sequence[str], [], "Query parameters ignored in matching."
        )
        loader.add_option(
            "replayproxy_ignore_body_field",
            Sequence[str],
            [],
            "JSON pointers of body fields ignored in matching (e.g. /stream_options).",
        )
        loader.add_option(
            "replayproxy_allow_repeats",
            bool,
            False,
            "Serve the last matching interaction again once all are used up.",
        )
        loader.add_option("replayproxy_match_host", bool, False, "Also require the host to match.")

    def configure(self, updated: set[str]) -> None:
        opts: Any = ctx.options  # mitmproxy's option attributes are dynamic
        if not self._fixed and any(name.startswith("replayproxy_") for name in updated):
            self.session = None
            if opts.replayproxy_replay:
                try:
                    self.session = ReplaySession(
                        opts.replayproxy_replay,
                        speed=check_speed(opts.replayproxy_speed),
                        faults=list(opts.replayproxy_faults),
                        options=MatchOptions(
                            ignore_query=frozenset(opts.replayproxy_ignore_query),
                            ignore_body_fields=tuple(opts.replayproxy_ignore_body_field),
                            match_host=opts.replayproxy_match_host,
                            allow_repeats=opts.replayproxy_allow_repeats,
                        ),
                        on_miss=_log_miss,
                        on_warning=log.warning,
                    )
                except ReplayProxyError as e:
                    raise _options_error(str(e)) from None
        # Replay must never resolve or connect to the recorded host (mitmproxy-notes §2.2).
        if (
            self.session is not None
            and "connection_strategy" in opts
            and opts.connection_strategy != "lazy"
        ):
            opts.update(connection_strategy="lazy")

    # -- lifecycle -------------------------------------------------------------------------

    async def running(self) -> None:
        if self.origin is None:
            self.origin = Origin()
            await self.origin.start()

    async def done(self) -> None:
        if self.origin is not None:
            await self.origin.close()
            self.origin = None
        if self.session is not None and not self._fixed:
            log.info(self.session.summary().line())

    # -- flows -----------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        if self.session is None or flow.response is not None:
            return
        if self.origin is None:  # never let a replayed request through to the network
            flow.response = http.Response.make(
                503,
                b"replayproxy: the replay origin is not running\n",
                {"content-type": "text/plain"},
            )
            return
        result = self.session.resolve(request_of(flow.request))
        if isinstance(result, Miss):
            status, headers, body = unmatched_response(result)
            flow.response = http.Response.make(status, body, headers)
            return
        whole = None if result.websocket is not None else instant_body(result.schedule)
        if whole is not None and result.schedule.head is not None:
            # Nothing to time or split (e.g. --speed 0 --fault coalesce): answer in one piece,
            # as mitmproxy's own server replay does, without the hop through the origin.
            flow.response = _whole_response(result.schedule.head, whole)
            return
        websocket = result.websocket
        if websocket is not None:
            websocket = replace(websocket, on_drop=functools.partial(_drop_client, flow))
        token = self.origin.expect(result.schedule, flow.request.method, websocket)
        req = flow.request
        flow.metadata[_META] = {
            "index": result.index,
            "token": token,
            # Plain data (the flow may be saved): whether the client must see a TCP RST.
            "reset": result.schedule.finish.kind is FinishKind.RESET,
            "target": (req.scheme, req.host, req.port, req.host_header),
        }
        flow.request.headers[TOKEN_HEADER] = token
        flow.request.scheme = "http"
        flow.request.host = "127.0.0.1"
        flow.request.port = self.origin.port

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if _META in flow.metadata and flow.response is not None:
            flow.response.stream = True

    def response(self, flow: http.HTTPFlow) -> None:
        _restore(flow)

    async def error(self, flow: http.HTTPFlow) -> None:
        # A flow that failed before reaching the origin leaves its schedule behind.
        meta = flow.metadata.get(_META)
        if meta is not None and self.origin is not None:
            self.origin.forget(meta["token"])
        # mitmproxy runs this hook before it FIN-closes the client (the error hook comes first
        # in HttpStream.handle_protocol_error), so aborting here is what the client sees.
        if (
            meta is not None
            and meta.get("reset")
            and flow.request.http_version.startswith("HTTP/1")
        ):
            await _reset_client(flow)
        _restore(flow)


def _whole_response(head: Head, body: bytes) -> http.Response:
    """A complete response with the recorded head and ``body`` as is (never re-encoded)."""
    response = http.Response.make(head.status, b"", wire_headers(head.headers, chunked=False))
    response.raw_content = body  # not .content: that would apply content-encoding again
    response.headers["content-length"] = str(len(body))
    if head.reason:
        response.reason = head.reason
    return response


def _restore(flow: http.HTTPFlow) -> None:
    """Once the exchange is over, show the flow as the client sent it (mitmweb, saved flows,
    later addons): the recorded host instead of the loopback origin, without the token."""
    meta = flow.metadata.get(_META)
    if meta is None or "target" not in meta:
        return
    scheme, host, port, host_header = meta.pop("target")
    req = flow.request
    req.scheme, req.host, req.port = scheme, host, port
    req.host_header = host_header
    req.headers.pop(TOKEN_HEADER, None)


async def _reset_client(flow: http.HTTPFlow) -> bool:
    """Abort the client's connection with a TCP RST; ``False`` if that was not possible.

    mitmproxy treats an upstream ECONNRESET like EOF and only FIN-closes clients, so a replayed
    reset would reach an HTTP/1 client as an incomplete body. mitmproxy has no API to reset a
    client, so this reaches into INTERNALS (verified on 11.0.2 and 12.3.1, mitmproxy-notes
    §3.5): ``proxyserver.connections[client id].transports[client].writer``. Anything
    unexpected (another layout, a mitmproxy_rs stream in WireGuard/local mode, a socket that
    refuses SO_LINGER) falls back to mitmproxy's FIN, logged at debug level.

    The reset itself is the origin's (:func:`~replayproxy.engine.sockets.reset_after_drain`): it
    waits until the bytes already forwarded have left. Under TLS the RST cuts the connection without
    close_notify, as a real reset does.
    """
    try:
        addons: Any = ctx.master.addons  # untyped in mitmproxy 11
        proxyserver = addons.get("proxyserver")
        writer = proxyserver.connections[flow.client_conn.id].transports[flow.client_conn].writer
        transport = writer.transport
        sock = writer.get_extra_info("socket")
        if sock is None or not isinstance(transport, asyncio.WriteTransport):
            raise TypeError(f"unexpected client transport {type(transport).__name__}")
    except (KeyError, AttributeError, TypeError) as e:
        log.debug("replayproxy: cannot reset the client connection (%r); it gets a FIN", e)
        return False
    if not await reset_after_drain(transport, sock):
        log.debug("replayproxy: the client left or refused SO_LINGER; it gets a FIN")
        return False
    return True


async def _drop_client(flow: http.HTTPFlow, sent: int) -> None:
    """Before a replayed WebSocket drops its connection: once mitmproxy has relayed the
    ``sent`` server messages, cut the client's connection without a close frame.

    mitmproxy answers a dropped upstream with a close frame to the client, and wsproto turns
    the local-only code 1006 into 1000, so the client would see a clean close. Cutting the
    client first makes it see what a real dropped connection looks like (1006).
    """
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        data = flow.websocket
        if data is not None and sum(1 for m in data.messages if not m.from_client) >= sent:
            break
        await asyncio.sleep(0.002)
    await _reset_client(flow)


def _log_miss(miss: Miss) -> None:
    log.warning(miss.one_line())
