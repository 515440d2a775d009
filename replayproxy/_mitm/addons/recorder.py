"""The recording addon: every HTTP(S) flow becomes one interaction appended to a cassette.

Options (declared and validated in :mod:`~replayproxy._mitm.addons._record_options`; all but
the first two are the record group of the option table, :mod:`replayproxy._core.replay.options`):

- ``replayproxy_record``: cassette path; empty = not recording.
- ``replayproxy_write_mode``: the write mode (not a record mode): ``new`` (refuse an existing
  file), ``append``, ``overwrite``. Its old name, ``replayproxy_record_mode``, still works, with
  a warning.
- the record group's redaction and failed-TLS options (``replayproxy_redact_headers``,
  ``..._redact_query``, ``..._redact_body_field``, ``..._no_redact``,
  ``..._record_tls_failures``): see :data:`~replayproxy._core.replay.options.RECORD_OPTIONS`.

With a ``sink`` (record modes: the :class:`~replayproxy._mitm.addons.replayer.Replayer`, added
before the recorder), only the flows ``sink.wants(flow)`` are recorded, each handed to
``sink.write(flow, interaction)`` instead of the ``replayproxy_record`` file, and recorded as
``sink.record_settings(flow)`` says (the redaction of the session that forwarded it: one proxy
serves test after test, each with its own), not as the options say.

How a flow is recorded (hooks run on mitmproxy's event loop):

- ``request``: ``t0 = clock()`` (``time.monotonic_ns`` unless a test passes another), the
  wall-clock ``recorded_at`` and the request as the client sent it (later addons or mitmproxy
  may rewrite ``flow.request``). This hook is the last step before mitmproxy (connects if it
  must and) sends the request upstream, so every offset in the cassette is "nanoseconds since
  the request was sent upstream"; the head offset (TTFB) includes connection setup when the
  connection was new, as a client sees it.
- ``responseheaders``: the head's offset; then ``flow.response.stream = tap``. mitmproxy
  calls the tap once per received chunk (HTTP/1 ``Data`` / HTTP/2 ``DATA``); it stamps the
  chunk and returns it unchanged, so the client gets every event as it arrives. The tap is
  synchronous and only appends to a list: it must never block the loop.
- ``response`` / ``error``: build the :class:`Interaction` (pure, ``core.recording``), redact
  it, append it to the cassette (one ``os.write``: a killed recorder loses at most the flows
  in flight). Whichever hook comes first wins: mitmproxy 11.0.2 on Python 3.11 can fire both.
- ``done``: flows still in flight are written with ``EndKind.ERROR`` ("recording stopped").

A write that fails (disk full, I/O error, read-only; :class:`~replayproxy._errors.
CassetteWriteError`) stops the recording: one error line names the file and the interaction,
:attr:`Recorder.failure` keeps it, and every later request is answered with a 503 that says so
instead of being forwarded unrecorded. A cassette that cannot be opened at ``running`` does the
same (``replayproxy record`` then stops before serving).

An upstream TCP RST looks like EOF to mitmproxy on HTTP/1. To record it as ``reset``, the
``server_connected`` hook keeps the upstream connection's asyncio ``StreamReader``: when the
socket is reset, asyncio stores the ``ConnectionResetError`` there (``StreamReaderProtocol.
connection_lost``), which the ``error`` hook then reads
(:mod:`~replayproxy._mitm.addons._connections`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mitmproxy import http

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.cassette.websocket import WsClose, WsCloseKind, WsMessage
from replayproxy._core.replay.assembly import (
    ResponseHead,
    build_interaction,
    ending_from_error,
    is_tls_verification_failure,
)
from replayproxy._core.replay.options import RecordSettings
from replayproxy._errors import CassetteError, CassetteWriteError
from replayproxy._mitm.addons import ws_record
from replayproxy._mitm.addons._connections import reader_of, upstream_reset
from replayproxy._mitm.addons._convert import frame_h2_for_h1_client, head_of, request_of
from replayproxy._mitm.addons._record_options import (
    WRITE_MODE_OPTIONS,
    WRITE_MODES,
    OptionsError,
    check_target,
    declare_options,
    record_settings_from,
    write_mode_from,
)
from replayproxy._store import CassetteWriter

__all__ = ["WRITE_MODES", "RecordSink", "Recorder"]

logger = logging.getLogger("replayproxy.record")


class RecordSink(Protocol):
    """Where a recorder with a sink sends its interactions, and which flows it records."""

    def wants(self, flow: http.HTTPFlow) -> bool: ...

    def write(self, flow: http.HTTPFlow, interaction: Interaction) -> None: ...

    def record_settings(self, flow: http.HTTPFlow) -> RecordSettings: ...


@dataclass
class _InFlight:
    """What the recorder knows about one flow until it is finalized."""

    flow: http.HTTPFlow
    t0: int
    recorded_at: float
    request: Request
    settings: RecordSettings
    head: ResponseHead | None = None
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    websocket: list[WsMessage] | None = None  # set once the flow upgraded to a WebSocket


class Recorder:
    """mitmproxy addon recording every flow to ``replayproxy_record``.

    ``on_record`` (optional) is called on the proxy thread with each interaction written,
    e.g. to count them or print progress. ``clock`` (monotonic nanoseconds) stamps the head,
    the frames and the ending; tests pass a fake one to check offsets exactly.
    """

    def __init__(
        self,
        on_record: Callable[[Interaction], None] | None = None,
        *,
        sink: RecordSink | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.on_record = on_record
        self.sink = sink
        self._clock = clock
        self.writer: CassetteWriter | None = None
        self.settings = RecordSettings()  # from the options; a sink gives its own per flow
        self.count = 0
        self.requests = 0  # requests seen, recorded or not
        self.failure: str | None = None
        """Why recording stopped (the cassette could not be opened or written), one line."""
        self._flows: dict[str, _InFlight] = {}
        self._readers: dict[str, Any] = {}  # server connection id -> asyncio.StreamReader
        self._master: Any = None
        self._target: tuple[str, str] | None = None  # (path, mode) from the options
        self._running = False
        self._lock = threading.Lock()

    # -- options -----------------------------------------------------------------------------

    def load(self, loader: Any) -> None:
        self._master = loader.master
        declare_options(loader)

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        opts = ctx.options
        self.settings = record_settings_from(opts)
        if updated & {"replayproxy_record", *WRITE_MODE_OPTIONS}:
            path, mode = opts.replayproxy_record, write_mode_from(opts)
            if path:
                check_target(path, mode)
            self._target = (path, mode) if path else None
            if self._running:
                try:
                    self._open()
                except CassetteError as e:
                    raise OptionsError(str(e)) from None

    def running(self) -> None:
        # The file is created only once the proxy listens: a failed start leaves nothing.
        self._running = True
        try:
            self._open()
        except CassetteError as e:
            self._stop(str(e))

    def _open(self) -> None:
        target = self._target
        if self.writer is not None and target is not None and str(self.writer.path) == target[0]:
            return  # the write mode alone changed: it only matters when opening
        self._close()
        if target is None:
            return
        # Created mode 0600 by the writer: cassettes hold prompts and answers.
        self.writer = CassetteWriter(target[0], target[1], on_warning=logger.warning)
        logger.info("recording to %s", target[0])

    def _close(self) -> None:
        with self._lock:
            writer, self.writer = self.writer, None
        if writer is not None:
            try:
                writer.close()
            except CassetteWriteError as e:
                self._stop(str(e))

    def _stop(self, line: str) -> None:
        """Recording failed: say so once as an error, and refuse what would go unrecorded."""
        logger.error("%s", line)
        with self._lock:
            if self.failure is None:
                self.failure = line

    # -- hooks -------------------------------------------------------------------------------

    def server_connected(self, data: Any) -> None:
        reader = reader_of(self._master, data.client, data.server)
        if reader is not None:
            self._readers[data.server.id] = reader

    def server_disconnected(self, data: Any) -> None:
        # The error hook of a flow on this connection may still be queued: drop the reader a
        # little later rather than now.
        reader = self._readers.get(data.server.id)
        if reader is not None and self._master is not None:
            self._master.event_loop.call_later(5.0, self._readers.pop, data.server.id, None)

    def request(self, flow: http.HTTPFlow) -> None:
        self.requests += 1
        if self.sink is None and self.failure is not None and flow.response is None:
            # Never forward what cannot be recorded: the client learns why, the upstream
            # (and the credentials in the request) are not reached.
            text = f"replayproxy: not forwarded, recording stopped: {self.failure}\n"
            flow.response = http.Response.make(503, text.encode(), {"content-type": "text/plain"})
            return
        if (self.writer is None) if self.sink is None else not self.sink.wants(flow):
            return
        settings = self.settings if self.sink is None else self.sink.record_settings(flow)
        self._flows[flow.id] = _InFlight(
            flow,
            t0=self._clock(),
            recorded_at=time.time(),
            request=request_of(flow.request),
            settings=settings,
        )

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state = self._flows.get(flow.id)
        if state is None or flow.response is None:
            return
        now = self._clock()
        response = flow.response
        state.head = ResponseHead(
            status=response.status_code,
            reason=response.reason,
            http_version=response.http_version,
            headers=tuple((bytes(k), bytes(v)) for k, v in response.headers.fields),
            offset_ns=now - state.t0,
        )
        frames, t0, clock = state.frames, state.t0, self._clock

        def tap(chunk: bytes) -> bytes:
            if chunk:
                frames.append((clock() - t0, chunk))
            return chunk

        response.stream = tap
        frame_h2_for_h1_client(flow)

    def response(self, flow: http.HTTPFlow) -> None:
        state = self._flows.get(flow.id)
        if state is not None and flow.websocket is not None and state.websocket is None:
            # A WebSocket follows this 101: the interaction is written at websocket_end.
            state.websocket = []
            return
        state = self._flows.pop(flow.id, None)
        if state is None:
            return
        now = self._clock() - state.t0
        if state.head is None and flow.response is not None:
            # A response made without an upstream head (e.g. set by another addon).
            state.head = head_of(flow.response, now)
        if not state.frames and flow.response is not None and flow.response.raw_content:
            state.frames.append((now, flow.response.raw_content))  # buffered, not streamed
        self._write(flow, state, Ending(EndKind.COMPLETE, now))

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        state = self._flows.get(flow.id)
        if state is None or state.websocket is None or flow.websocket is None:
            return
        message = ws_record.message_of(flow.websocket.messages[-1], self._clock() - state.t0)
        if message is not None:
            state.websocket.append(message)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        state = self._flows.pop(flow.id, None)
        if state is None or state.websocket is None or flow.websocket is None:
            return
        now = self._clock() - state.t0
        self._write(
            flow, state, Ending(EndKind.COMPLETE, now), ws_record.close_of(flow.websocket, now)
        )

    def error(self, flow: http.HTTPFlow) -> None:
        state = self._flows.pop(flow.id, None)
        if state is None:
            return
        now = self._clock() - state.t0
        if state.websocket is not None:
            close = WsClose(now, WsCloseKind.DROPPED, None, "", None)
            self._write(flow, state, Ending(EndKind.COMPLETE, now), close)
            return
        message = flow.error.msg if flow.error is not None else "unknown error"
        reset = upstream_reset(self._readers.get(flow.server_conn.id))
        end = ending_from_error(
            message, now, got_response=state.head is not None, connection_reset=reset
        )
        url = state.settings.redactor.url(flow.request.pretty_url)
        if end.kind is EndKind.NO_RESPONSE and is_tls_verification_failure(message):
            keep = state.settings.tls_failures
            logger.warning(
                "cannot verify the TLS certificate of %s (%s): if it uses a private or test CA, "
                "pass --upstream-ca PEM (or --insecure-upstream); %s",
                url,
                message,
                "recorded as no_response"
                if keep
                else "not recorded (--record-tls-failures keeps such requests)",
            )
            if not keep:
                return
        elif end.kind is EndKind.NO_RESPONSE and "client disconnected" not in message.lower():
            logger.warning("no response from %s: %s", url, message)
        self._write(flow, state, end)

    def http_connect_error(self, flow: http.HTTPFlow) -> None:
        # Forward mode, HTTPS: the tunnel to the upstream failed, so the client got a 502 for
        # its CONNECT and never sent the request itself: there is nothing to record.
        if self.writer is not None or self.sink is not None:
            message = (
                getattr(flow.server_conn, "error", None)
                or (flow.error.msg if flow.error is not None else None)
                or "connection failed"
            )
            where = f"{flow.request.host}:{flow.request.port}"
            logger.warning("cannot connect to %s: %s", where, message)

    def done(self) -> None:
        # Shutdown with responses still streaming: keep what arrived, marked as cut short.
        for flow_id in list(self._flows):
            state = self._flows.pop(flow_id)
            now = self._clock() - state.t0
            message = "recording stopped before the response ended"
            url = state.settings.redactor.url(state.flow.request.pretty_url)
            logger.warning("%s: %s", message, url)
            if state.websocket is not None:  # the session was still open
                end = Ending(EndKind.COMPLETE, now)
                self._write(state.flow, state, end, WsClose(now, WsCloseKind.OPEN))
                continue
            self._write(state.flow, state, Ending(EndKind.ERROR, now, message))
        self._close()

    # -- writing -----------------------------------------------------------------------------

    def _write(
        self, flow: http.HTTPFlow, state: _InFlight, end: Ending, ws_close: WsClose | None = None
    ) -> None:
        interaction = build_interaction(
            state.request,
            state.head,
            state.frames,
            end,
            recorded_at=state.recorded_at,
            redactor=state.settings.redactor,
        )
        if state.websocket is not None and ws_close is not None:
            session = ws_record.session_of(state.websocket, ws_close)
            interaction = dataclasses.replace(interaction, websocket=session)
        if self.sink is not None:
            self.sink.write(flow, interaction)
            with self._lock:
                self.count += 1
            if self.on_record is not None:
                self.on_record(interaction)
            return
        self._append(interaction)

    def _append(self, interaction: Interaction) -> None:
        with self._lock:
            writer = self.writer
            if writer is None:
                return
            failed: CassetteWriteError | None = None
            try:
                writer.append(interaction)
            except CassetteWriteError as e:
                failed = e
            except CassetteError as e:
                # An interaction the format cannot hold (a status outside 100-599, say): one
                # line, and the cassette stays loadable.
                logger.error("not recorded: %s", e)
                return
            else:
                self.count += 1
        if failed is not None:
            self._stop(str(failed))
            return
        if self.on_record is not None:
            self.on_record(interaction)
