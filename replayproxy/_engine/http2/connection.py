"""One HTTP/2 connection with prior knowledge (h2c) on the replay origin: requests read, each
stream answered by its schedule, concurrently, over ``h2``'s sans-IO state machine.

Each request stream is answered as the HTTP/1.1 origin answers a request: the origin's
:meth:`~replayproxy._engine.origin.Origin.job` (the same session, matching, explained miss and
fail-closed 500 as over HTTP/1.1), then the schedule sent against the origin's clock
(:mod:`replayproxy._engine.pacing`: offsets count from the read that delivered the request's
END_STREAM). Every recorded write is its own DATA frame, split only where the peer's
flow-control window or maximum frame size forces it (:func:`~.frames.send_some`); a stream
whose window is closed waits for the peer's WINDOW_UPDATE, the others go on.

How a schedule ends on its stream, as mitmproxy's HTTP/2 layer ends a client's stream in
forward mode when the origin behind it does the same (docs/guides/replay.md, "HTTP/2 in base-URL
mode"): COMPLETE sends END_STREAM; CLOSE (a truncation) and RESET send RST_STREAM with
INTERNAL_ERROR; HANG sends nothing more until the client resets the stream or leaves. No
response at all is an RST_STREAM INTERNAL_ERROR too (over HTTP/1.1 the origin closes the
connection; here the other streams go on). The connection stays up in every case.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

from replayproxy._core.cassette.model import Header, Request
from replayproxy._core.schedule.model import FinishKind
from replayproxy._engine.http1_reader import StampedReader
from replayproxy._engine.http1_writer import JOIN_MAX, has_body
from replayproxy._engine.http2.frames import request_of, response_headers, send_some
from replayproxy._engine.pacing import clock_start, late_start, sleep_until
from replayproxy._engine.sockets import until_sent

if TYPE_CHECKING:
    from replayproxy._engine.http1_writer import Whole
    from replayproxy._engine.origin import Origin, Planned

__all__ = ["MAX_CONCURRENT_STREAMS", "RECEIVE_WINDOW", "serve_h2"]

log = logging.getLogger(__name__)

MAX_CONCURRENT_STREAMS = 1000
"""Streams a client may have open at once (h2's default is 100; replays run hundreds)."""

RECEIVE_WINDOW = 1 << 24
"""The flow-control window the origin gives clients for request bodies (each stream and the
connection): a request body is read whole before it is matched, so holding it back by
65,535-byte round trips (the protocol's default) would only delay the match."""

READ_SIZE = 65536


class WebSocketOverHttp2(Exception):
    """A WebSocket upgrade matched over HTTP/2, which the origin does not replay (RFC 8441)."""


@dataclass
class _Incoming:
    """A request stream being read: its header fields, body pieces so far."""

    fields: list[Header]
    body: list[bytes] = field(default_factory=list)


class _Connection:
    """The state of one h2c connection: the ``h2`` machine, streams being read and served."""

    def __init__(
        self,
        origin: Origin,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        base: tuple[str, str] | None,
    ) -> None:
        self.origin = origin
        self.base = base  # where requests are matched as if sent (the origin's job)
        self.reader = reader
        self.writer = writer
        # h2's header validation and normalisation are off: on 200 requests arriving at once
        # they took 40 % of the parse (46 ms against 28 ms here), before any stream could
        # start. The response fields are clean by construction (frames.response_headers);
        # request fields go to matching as they came, as over HTTP/1.1.
        config = h2.config.H2Configuration(
            client_side=False,
            header_encoding=None,
            validate_inbound_headers=False,
            normalize_inbound_headers=False,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
        )
        self.h2: Any = h2.connection.H2Connection(config=config)
        self.h2.local_settings = h2.settings.Settings(
            client=False,
            initial_values={
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: MAX_CONCURRENT_STREAMS,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: RECEIVE_WINDOW,
            },
        )
        self.incoming: dict[int, _Incoming] = {}
        self.serving: dict[int, asyncio.Task[None]] = {}
        # Set (and replaced) whenever the peer may have opened a flow-control window.
        self.window = asyncio.Event()

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self) -> None:
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(RECEIVE_WINDOW - 65535)
        self.flush()
        clock = self.origin.clock
        try:
            while True:
                data = await self.reader.read(READ_SIZE)
                if not data:
                    return
                received = (
                    self.reader.received_at
                    if isinstance(self.reader, StampedReader)
                    else clock.time()
                )
                try:
                    events = self.h2.receive_data(data)
                except h2.exceptions.ProtocolError as e:
                    # h2 has queued the GOAWAY with the error's code: send it and leave.
                    log.warning("replayproxy: HTTP/2 protocol error from the client: %s", e)
                    self.flush()
                    return
                for event in events:
                    if not self.on_event(event, received):
                        self.flush()
                        return
                self.flush()
        finally:
            for task in self.serving.values():
                task.cancel()
            if self.serving:
                await asyncio.gather(*self.serving.values(), return_exceptions=True)

    def on_event(self, event: object, received: float) -> bool:
        """Handle one ``h2`` event; False once the peer ended the connection (GOAWAY)."""
        if isinstance(event, h2.events.RequestReceived):
            self.incoming[event.stream_id] = _Incoming(list(event.headers))
        elif isinstance(event, h2.events.DataReceived):
            incoming = self.incoming.get(event.stream_id)
            if incoming is not None:
                incoming.body.append(event.data)
            # The body is held here, not in the window: give it back at once.
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            incoming = self.incoming.pop(event.stream_id, None)
            if incoming is not None:
                request = request_of(incoming.fields, b"".join(incoming.body))
                self.serving[event.stream_id] = asyncio.create_task(
                    self.serve(event.stream_id, request, received)
                )
        elif isinstance(event, h2.events.StreamReset):
            self.incoming.pop(event.stream_id, None)
            task = self.serving.get(event.stream_id)
            if task is not None:
                task.cancel()
        elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
            self.window = asyncio.Event()
        elif isinstance(event, h2.events.ConnectionTerminated):
            return False
        return True

    async def serve(self, stream_id: int, request: Request, t0: float) -> None:
        """Answer one request stream (the task is cancelled if the client resets it)."""
        try:
            try:
                job = await self.origin.job(request, self.base)
                if not isinstance(job, tuple) and job.websocket is not None:
                    raise WebSocketOverHttp2(
                        "a WebSocket upgrade over HTTP/2 is not replayed; connect over HTTP/1.1"
                    )
            except Exception as e:  # fail closed: the explained 500, as over HTTP/1.1
                job = self.origin.failure(request, e)
            if isinstance(job, tuple):
                await self.send_whole(stream_id, job)
            else:
                await self.send_planned(stream_id, job, clock_start(t0, job.arrived))
        except (h2.exceptions.StreamClosedError, ConnectionError):
            pass  # the client reset the stream or left
        except Exception:  # a bug after the response began: cut the stream visibly
            with contextlib.suppress(Exception):
                self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
                self.flush()
        finally:
            self.serving.pop(stream_id, None)

    async def send_whole(self, stream_id: int, whole: Whole) -> None:
        status, headers, body = whole
        fields = response_headers(status, headers, keep_length=True)
        self.h2.send_headers(stream_id, fields, end_stream=not body)
        await self.send_data(stream_id, body)
        if body:
            self.h2.end_stream(stream_id)
        self.flush()
        await self.writer.drain()

    async def send_planned(self, stream_id: int, job: Planned, t0: float) -> None:
        schedule = job.schedule
        head = schedule.head
        clock = self.origin.clock
        if head is None:  # no response: the stream ends unanswered
            await sleep_until(t0, schedule.finish.at_ns, clock)
            await self.reset(stream_id)
            self.flush()
            return
        fields = response_headers(head.status, head.headers)
        t0 = late_start(t0, head.at_ns, clock)
        await sleep_until(t0, head.at_ns, clock)
        self.h2.send_headers(stream_id, fields)
        self.flush()
        if has_body(job.method, head.status):
            for write in schedule.writes:
                if write.data:
                    await sleep_until(t0, write.at_ns, clock)
                    await self.send_data(stream_id, write.data)
        finish = schedule.finish
        await sleep_until(t0, finish.at_ns, clock)
        if finish.kind is FinishKind.COMPLETE:
            self.h2.end_stream(stream_id)
        elif finish.kind is FinishKind.HANG:
            await asyncio.Future()  # until the client resets the stream or leaves
        else:  # CLOSE, RESET: what mitmproxy sends an HTTP/2 client for either
            await self.reset(stream_id)
        self.flush()
        await self.writer.drain()

    async def reset(self, stream_id: int) -> None:
        """RST_STREAM INTERNAL_ERROR, once the frames sent before it have reached the client:
        one that reads them together with the reset may drop them (curl 7.88 does: at
        ``--speed 0`` it printed none of the body), as an HTTP/1.1 client may drop the bytes
        before a TCP RST (:func:`~replayproxy._engine.sockets.until_sent`)."""
        self.flush()
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            await until_sent(self.writer.transport, sock)
        self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)

    async def send_data(self, stream_id: int, data: bytes) -> None:
        """``data`` as DATA frames on the stream, waiting for window updates as needed."""
        view = memoryview(data)
        while view:
            sent = send_some(self.h2, stream_id, view, JOIN_MAX)
            if sent:
                view = view[sent:]
                self.flush()
                await self.writer.drain()
            else:
                await self.window.wait()


async def serve_h2(
    origin: Origin,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    base: tuple[str, str] | None = None,
) -> None:
    """Serve one HTTP/2 connection (its preface not read yet) until the client leaves; its
    requests are matched as if sent to ``base`` (``None``: as their URLs say)."""
    await _Connection(origin, reader, writer, base).run()
