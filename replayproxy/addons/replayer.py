"""The replay addon: answers every intercepted request from a cassette, never from the network.

mitmproxy cannot stream a body an addon produces itself (mitmproxy-notes §2.1), so the addon
owns an :class:`~replayproxy.origin.Origin` on mitmproxy's own loop (started in ``running``):

- ``request``: match the request (:class:`~replayproxy.session.ReplaySession`), register the
  planned schedule with the origin, and rewrite the flow to ``http://127.0.0.1:<origin>`` with
  the private ``x-replayproxy-token`` header that tells the origin which schedule to run.
  With ``connection_strategy=lazy`` mitmproxy then never resolves or contacts the real host
  (§2.2, §3.4); the addon sets it. Unmatched requests are answered at once with the explained
  500 (``x-replayproxy-unmatched: 1``).
- ``responseheaders``: ``flow.response.stream = True`` so every chunk from the origin is
  forwarded as it comes, keeping the recorded gaps and byte splits.

Options (prefix ``replayproxy_``, usable from ``mitmdump -s mitmdump_replay.py --set ...``):
``replayproxy_replay`` (cassette path), ``replayproxy_speed``, ``replayproxy_faults``,
``replayproxy_ignore_query``, ``replayproxy_ignore_body_field``, ``replayproxy_allow_repeats``,
``replayproxy_match_host``. The CLI passes a ready session to the constructor instead.

All hooks run on mitmproxy's event loop, the same loop as the origin, so the token table needs
no lock; the session has its own lock for readers on other threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from mitmproxy import ctx, exceptions, http

from replayproxy.core.matching import MatchOptions, Miss
from replayproxy.core.model import Request
from replayproxy.errors import ReplayProxyError
from replayproxy.origin import TOKEN_HEADER, Origin
from replayproxy.session import ReplaySession, check_speed, unmatched_response

__all__ = ["Replayer", "request_of"]

log = logging.getLogger(__name__)

_META = "replayproxy_replay"

# mitmproxy 11 leaves OptionsError untyped; keep mypy strict happy on both versions.
_options_error: Callable[[str], Exception] = exceptions.OptionsError


def request_of(flow_request: http.Request) -> Request:
    """The model :class:`Request` of a mitmproxy request (as the client sent it)."""
    return Request(
        method=flow_request.method,
        url=flow_request.url,
        http_version=flow_request.http_version,
        headers=tuple(flow_request.headers.fields),
        body=flow_request.raw_content or b"",
    )


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
        token = self.origin.expect(result.schedule, flow.request.method)
        req = flow.request
        flow.metadata[_META] = {
            "index": result.index,
            "token": token,
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

    def error(self, flow: http.HTTPFlow) -> None:
        # A flow that failed before reaching the origin leaves its schedule behind.
        meta = flow.metadata.get(_META)
        if meta is not None and self.origin is not None:
            self.origin.forget(meta["token"])
        _restore(flow)


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


def _log_miss(miss: Miss) -> None:
    log.warning(miss.one_line())
