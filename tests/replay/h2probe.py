"""A raw-socket HTTP/2 client (prior knowledge, on ``h2``) that reports frames as they came:
each DATA frame's payload, END_STREAM or RST_STREAM and its code, per stream, with arrival
times. For tests of the h2c origin; HTTP clients (curl, httpx) hide frames behind a body."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings


@dataclass
class Reply:
    """What one stream received."""

    status: int | None = None
    headers: dict[bytes, bytes] = field(default_factory=dict)
    frames: list[bytes] = field(default_factory=list)  # non-empty DATA frame payloads, in order
    times: list[float] = field(default_factory=list)  # monotonic arrival of each frame
    ended: bool = False  # END_STREAM received
    reset: int | None = None  # RST_STREAM error code received

    @property
    def body(self) -> bytes:
        return b"".join(self.frames)

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None


class H2Probe:
    """One h2c connection to ``127.0.0.1:port``. ``window``: the stream window announced
    (default h2's 65,535); ``auto_ack=False`` leaves closed windows closed until :meth:`open`."""

    def __init__(self, port: int, *, window: int | None = None, auto_ack: bool = True) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        if window is not None:
            self.conn.local_settings = h2.settings.Settings(
                client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window}
            )
        self.auto_ack = auto_ack
        self.replies: dict[int, Reply] = {}
        self.goaway: int | None = None
        self.conn.initiate_connection()
        self._send()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> H2Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(
        self,
        path: str,
        body: bytes = b"",
        *,
        method: str = "POST",
        headers: Iterable[tuple[str, str]] = (),
    ) -> int:
        """Send one request; its stream id."""
        stream_id: int = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":path", path), (":scheme", "http"),
                  (":authority", "127.0.0.1"), *headers]  # fmt: skip
        self.conn.send_headers(stream_id, fields, end_stream=not body)
        if body:
            self.conn.send_data(stream_id, body, end_stream=True)
        self.replies[stream_id] = Reply()
        self._send()
        return stream_id

    def reset(self, stream_id: int) -> None:
        self.conn.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
        self._send()

    def open(self, stream_id: int, n: int) -> None:
        """Open the stream's and the connection's window by ``n`` bytes."""
        self.conn.increment_flow_control_window(n, stream_id=stream_id)
        self.conn.increment_flow_control_window(n)
        self._send()

    def read(self, *, until: float = 10.0, idle: float | None = None) -> dict[int, Reply]:
        """Read frames until every stream is done, ``until`` seconds have passed, or (with
        ``idle``) nothing arrived for ``idle`` seconds; the replies so far."""
        deadline = time.monotonic() + until
        while not all(r.done for r in self.replies.values()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(min(left, idle) if idle else left)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                break
            if not data:
                break
            self._feed(data)
        return self.replies

    def _feed(self, data: bytes) -> None:
        now = time.monotonic()
        for event in self.conn.receive_data(data):
            reply = self.replies.get(getattr(event, "stream_id", 0))
            if isinstance(event, h2.events.ResponseReceived) and reply is not None:
                fields = dict(event.headers)
                reply.status = int(fields.pop(b":status"))
                reply.headers = fields
            elif isinstance(event, h2.events.DataReceived) and reply is not None:
                if event.data:
                    reply.frames.append(event.data)
                    reply.times.append(now)
                if self.auto_ack:
                    self.conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
            elif isinstance(event, h2.events.StreamEnded) and reply is not None:
                reply.ended = True
            elif isinstance(event, h2.events.StreamReset) and reply is not None:
                reply.reset = event.error_code
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = event.error_code
        self._send()
