"""A local WebSocket simulator of OpenAI's Realtime API (text modality), for tests.

``with RealtimeSimulator() as sim:`` serves ``ws://127.0.0.1:PORT/v1/realtime?model=...`` on
its own thread and event loop. It speaks enough of the Realtime event grammar for real clients
(the ``websockets`` library, the openai SDK's ``client.realtime.connect``):

- on connect: ``session.created``;
- ``session.update`` -> ``session.updated``;
- ``conversation.item.create`` -> ``conversation.item.added``, ``conversation.item.done``;
- ``response.create`` -> after ``ttfb_ms``: ``response.created``, ``response.output_item.added``,
  ``response.content_part.added``, one ``response.output_text.delta`` per piece of
  :data:`REPLY` (``gap_ms`` apart), ``response.output_text.done``, ``response.content_part.done``,
  ``response.output_item.done``, ``response.done``;
- ``input_audio_buffer.append`` -> nothing; ``input_audio_buffer.commit`` -> ``...committed``;
- a binary message -> the same bytes back (binary); anything else -> an ``error`` event.

How the session ends is a knob, the ``sim-end`` query parameter, applied after the first
``response.done``: ``close:CODE`` (a close frame, e.g. ``close:1011``) or ``drop`` (the TCP
connection closes without a close frame). Without it the client closes.

Ids are deterministic (``event_0001``, ``resp_sim_0001``, ...), so two runs send the same bytes.
``sim.received`` lists the client messages (text decoded) in arrival order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

import wsproto.events as wse
from wsproto.connection import Connection, ConnectionState, ConnectionType
from wsproto.utilities import generate_accept_token

from replayproxy._engine.websocket import encode_frames

__all__ = ["REPLY", "RealtimeSimulator", "reply_text"]

REPLY = ("Hello", " from", " the", " Realtime", " simulator", ": caf", "\u00e9", " \u2615", ".")
"""The pieces of the assistant's reply, one ``response.output_text.delta`` each."""


def reply_text() -> str:
    """The whole reply text a client reassembles from the deltas."""
    return "".join(REPLY)


@dataclass
class _Session:
    """Per-connection state: ids and the session config a client updated."""

    model: str
    end: str | None
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    config: dict[str, Any] = field(default_factory=dict)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):04d}"


class RealtimeSimulator:
    """Serve Realtime-shaped WebSocket sessions on ``127.0.0.1`` (see module doc)."""

    def __init__(self, *, ttfb_ms: float = 30, gap_ms: float = 15, port: int = 0) -> None:
        self.ttfb_ms = ttfb_ms
        self.gap_ms = gap_ms
        self.received: list[Any] = []
        self.connections = 0
        self._port = port
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (an SDK base URL is ``url + "/v1"``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    def start(self, timeout: float = 10.0) -> Self:
        self._thread = threading.Thread(target=self._main, name="realtime-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the Realtime simulator did not start")
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._loop is not None and self._stopped is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _main(self) -> None:
        asyncio.run(self._amain())

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self._port)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            writer.transport.abort()
        finally:
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        target = lines[0].split(" ")[1]
        headers = {
            k.strip().lower(): v.strip()
            for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)
        }
        parts = urlsplit(target)
        key = headers.get("sec-websocket-key")
        if headers.get("upgrade", "").lower() != "websocket" or key is None:
            writer.write(b"HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            return
        self.connections += 1
        query = dict(parse_qsl(parts.query))
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
            b"sec-websocket-accept: " + generate_accept_token(key.encode()) + b"\r\n"
            b"x-request-id: req_sim_realtime\r\n\r\n"
        )
        session = _Session(query.get("model", "gpt-realtime"), query.get("sim-end"))
        conn = Connection(ConnectionType.SERVER)
        await self._send(writer, self._session_event(session, "session.created"))
        parts_buf: list[bytes] = []
        while True:
            data = await reader.read(65536)
            conn.receive_data(data or None)
            for event in conn.events():
                if isinstance(event, wse.Message):
                    raw = event.data.encode() if isinstance(event.data, str) else bytes(event.data)
                    parts_buf.append(raw)
                    if not event.message_finished:
                        continue
                    message, parts_buf = b"".join(parts_buf), []
                    if isinstance(event.data, str):
                        if not await self._on_text(session, message, writer):
                            return
                    else:
                        self.received.append(message)
                        writer.write(encode_frames(False, message))
                        await writer.drain()
                elif isinstance(event, wse.Ping):
                    writer.write(conn.send(event.response()))
                elif isinstance(event, wse.CloseConnection):
                    if conn.state is ConnectionState.REMOTE_CLOSING:
                        writer.write(conn.send(event.response()))
                        await writer.drain()
                    return
            if not data:
                return

    async def _send(self, writer: asyncio.StreamWriter, event: dict[str, Any]) -> None:
        writer.write(encode_frames(True, json.dumps(event, ensure_ascii=False).encode()))
        await writer.drain()

    def _session_event(self, session: _Session, kind: str) -> dict[str, Any]:
        body = {
            "id": "sess_sim_0001",
            "object": "realtime.session",
            "type": "realtime",
            "model": session.model,
            "output_modalities": ["text"],
            **session.config,
        }
        return {"type": kind, "event_id": session.next_id("event"), "session": body}

    async def _on_text(
        self, session: _Session, message: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one client event; ``False`` when the session ended here."""
        try:
            event = json.loads(message)
            kind = event["type"]
        except (ValueError, KeyError, TypeError):
            event, kind = message.decode("utf-8", "replace"), None
        self.received.append(event)
        if kind == "session.update":
            session.config.update(event.get("session") or {})
            await self._send(writer, self._session_event(session, "session.updated"))
        elif kind == "conversation.item.create":
            item = {**event.get("item", {}), "id": session.next_id("item"), "status": "completed"}
            for name in ("conversation.item.added", "conversation.item.done"):
                await self._send(
                    writer,
                    {
                        "type": name,
                        "event_id": session.next_id("event"),
                        "previous_item_id": None,
                        "item": item,
                    },
                )
        elif kind == "input_audio_buffer.append":
            pass
        elif kind == "input_audio_buffer.commit":
            await self._send(
                writer,
                {"type": "input_audio_buffer.committed", "event_id": session.next_id("event"),
                 "previous_item_id": None, "item_id": session.next_id("item")},
            )  # fmt: skip
        elif kind == "response.create":
            await self._respond(session, writer)
            return await self._end(session, writer)
        else:
            await self._send(
                writer,
                {"type": "error", "event_id": session.next_id("event"),
                 "error": {"type": "invalid_request_error", "code": "unknown_event",
                           "message": f"unknown client event type {kind!r}", "param": None,
                           "event_id": None}},
            )  # fmt: skip
        return True

    async def _respond(self, session: _Session, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(self.ttfb_ms / 1000)
        rid, iid = session.next_id("resp_sim"), session.next_id("item_sim")
        response: dict[str, Any] = {
            "id": rid, "object": "realtime.response", "status": "in_progress",
            "output": [], "output_modalities": ["text"], "usage": None,
        }  # fmt: skip
        item: dict[str, Any] = {
            "id": iid, "object": "realtime.item", "type": "message", "role": "assistant",
            "status": "in_progress", "content": [],
        }  # fmt: skip
        where = {"response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0}
        text = reply_text()
        part_empty = {"type": "text", "text": ""}
        part_full = {"type": "text", "text": text}
        done_item = {**item, "status": "completed", "content": [part_full]}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "response_id": rid, "output_index": 0,
             "item": item},
            {"type": "response.content_part.added", **where, "part": part_empty},
            *({"type": "response.output_text.delta", **where, "delta": d} for d in REPLY),
            {"type": "response.output_text.done", **where, "text": text},
            {"type": "response.content_part.done", **where, "part": part_full},
            {"type": "response.output_item.done", "response_id": rid, "output_index": 0,
             "item": done_item},
            {"type": "response.done",
             "response": {**response, "status": "completed", "output": [done_item],
                          "usage": {"total_tokens": 21, "input_tokens": 12, "output_tokens": 9}}},
        ]  # fmt: skip
        for n, event in enumerate(events):
            if n > 0:
                await asyncio.sleep(self.gap_ms / 1000)
            await self._send(writer, {"event_id": session.next_id("event"), **event})

    async def _end(self, session: _Session, writer: asyncio.StreamWriter) -> bool:
        end = session.end
        if end is None:
            return True
        if end == "drop":
            writer.close()
            return False
        code = int(end.split(":", 1)[1]) if end.startswith("close:") else 1000
        payload = code.to_bytes(2, "big") + b"simulated close"
        writer.write(bytes([0x88, len(payload)]) + payload)
        await writer.drain()
        await asyncio.sleep(0.05)  # let the client answer the close before the FIN
        writer.close()
        return False
