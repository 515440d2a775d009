"""The chat endpoint: a Starlette app that streams one chat turn as typed SSE events.

Routes:

* ``POST /chat`` ``{"turn_id": "...", "message": "..."}``: starts the turn and streams it:
  ``started``, one ``delta`` per piece of text, then ``committed`` (the turn is stored: its
  ``message_id``, ``record_version``, ``finish_reason``, ``truncated``, ``chars``) or
  ``rejected`` (``reason``: ``upstream_incomplete``, ``upstream_error``, ``cancelled``). Every
  event has ``id: TURN:SEQ``. A turn id that exists already is a 409, and nothing changes.
* ``GET /chat/{turn_id}/events`` with ``Last-Event-ID: TURN:SEQ``: the events after that one
  (a client that lost its connection resumes; the turn runs on without it).
* ``POST /chat/{turn_id}/cancel``: stop the turn; its stream ends with ``rejected``.
* ``GET /turns/{turn_id}``: the stored turn (JSON).

A turn is committed only when the upstream stream ended with ``[DONE]`` after a finish
reason; ``finish_reason: length`` is committed with ``truncated: true``. An upstream stream
that was cut (closed, reset, timed out, or ended without ``[DONE]``) is rejected.

``CHAT_EXAMPLE_BUG`` plants one bug, for the example's tests to catch: ``gzip`` (a
compression middleware that buffers the whole stream), ``reframe`` (upstream events cut by a
read boundary are lost), ``commit-on-close`` (an upstream stream that ended is committed,
whether or not it was complete).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chat_endpoint.turns import DuplicateTurn, TurnStore
from chat_endpoint.upstream import ReadByReadReassembler, Reassembler, request_body

BUGS = ("gzip", "reframe", "commit-on-close")
STREAM_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class UpstreamError(Exception):
    """The provider answered with an error status instead of a stream."""


@dataclass(frozen=True)
class Settings:
    """Where the provider is and where turns go; :meth:`from_env` reads ``CHAT_*``."""

    base_url: str  # the OpenAI-style API base, e.g. https://api.openai.com/v1
    db_path: Path
    api_key: str = "sk-unset"
    upstream_timeout: float = 30.0  # seconds without a byte before the upstream is cut
    bug: str | None = None

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            base_url=os.environ.get("CHAT_UPSTREAM_BASE_URL", "https://api.openai.com/v1"),
            db_path=Path(os.environ.get("CHAT_DB", "turns.sqlite3")),
            api_key=os.environ.get("OPENAI_API_KEY", "sk-unset"),
            bug=os.environ.get("CHAT_EXAMPLE_BUG") or None,
        )


@dataclass
class Turn:
    """One turn's events as sent so far, for every stream that follows it."""

    turn_id: str
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ended: bool = False
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    task: asyncio.Task[None] | None = None

    async def emit(self, name: str, **data: Any) -> None:
        async with self.changed:
            self.events.append((name, {"turn_id": self.turn_id, **data}))
            self.ended = name in ("committed", "rejected")
            self.changed.notify_all()

    async def follow(self, after: int) -> AsyncIterator[bytes]:
        """The SSE bytes of the events after number ``after``, until the terminal event."""
        seq = after + 1
        while True:
            async with self.changed:
                while len(self.events) <= seq and not self.ended:
                    await self.changed.wait()
                pending = self.events[seq:]
            for name, data in pending:
                text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
                yield f"id: {self.turn_id}:{seq}\nevent: {name}\ndata: {text}\n\n".encode()
                seq += 1
            if self.ended and seq >= len(self.events):
                return


class Chat:
    """The endpoint's state: settings, the store and the turns in flight."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = TurnStore(settings.db_path)
        self.turns: dict[str, Turn] = {}

    async def run(self, turn: Turn, message: str) -> None:
        """Stream the upstream completion into ``turn``'s events, then commit or reject it."""
        s = self.settings
        framer = ReadByReadReassembler() if s.bug == "reframe" else Reassembler()
        text: list[str] = []
        finish: str | None = None
        done = False
        await turn.emit("started", model=request_body(message)["model"])
        try:
            async with (
                httpx.AsyncClient(timeout=s.upstream_timeout) as client,
                client.stream(
                    "POST",
                    s.base_url + "/chat/completions",
                    json=request_body(message),
                    headers={"authorization": f"Bearer {s.api_key}"},
                ) as response,
            ):
                if response.status_code != 200:
                    raise UpstreamError(response.status_code)
                async for data in response.aiter_bytes():
                    for chunk in framer.feed(data):
                        if chunk.text:
                            text.append(chunk.text)
                            await turn.emit("delta", text=chunk.text)
                        finish = chunk.finish_reason or finish
                        done = done or chunk.done
        except asyncio.CancelledError:
            self.store.reject(turn.turn_id, "cancelled", "".join(text))
            await turn.emit("rejected", reason="cancelled")
            return
        except UpstreamError:
            self.store.reject(turn.turn_id, "upstream_error", "".join(text))
            await turn.emit("rejected", reason="upstream_error")
            return
        except httpx.TransportError:
            pass  # a cut stream: not done, so rejected below (unless the bug commits it)
        if (done and finish) or s.bug == "commit-on-close":
            row = self.store.commit(turn.turn_id, "".join(text), finish or "stop")
            await turn.emit(
                "committed",
                message_id=row["message_id"],
                record_version=row["record_version"],
                finish_reason=row["finish_reason"],
                truncated=row["truncated"],
                chars=len(row["text"]),
            )
        else:
            self.store.reject(turn.turn_id, "upstream_incomplete", "".join(text))
            await turn.emit("rejected", reason="upstream_incomplete")

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        turn_id, message = str(body["turn_id"]), str(body["message"])
        try:
            self.store.start(turn_id)
        except DuplicateTurn:
            return JSONResponse({"error": f"duplicate turn id {turn_id!r}"}, status_code=409)
        turn = self.turns[turn_id] = Turn(turn_id)
        turn.task = asyncio.create_task(self.run(turn, message))
        return _stream(turn.follow(-1))

    async def events(self, request: Request) -> Response:
        turn = self.turns.get(request.path_params["turn_id"])
        if turn is None:
            return JSONResponse({"error": "unknown turn"}, status_code=404)
        last = request.headers.get("last-event-id", "")
        after = int(last.rpartition(":")[2]) if last.startswith(turn.turn_id + ":") else -1
        return _stream(turn.follow(after))

    async def cancel(self, request: Request) -> Response:
        turn = self.turns.get(request.path_params["turn_id"])
        if turn is None or turn.task is None:
            return JSONResponse({"error": "unknown turn"}, status_code=404)
        if turn.ended:
            return JSONResponse({"error": "the turn has ended"}, status_code=409)
        turn.task.cancel()
        return Response(status_code=204)

    async def get_turn(self, request: Request) -> Response:
        row = self.store.get(request.path_params["turn_id"])
        return JSONResponse(row) if row else JSONResponse({"error": "unknown"}, status_code=404)


def _stream(body: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(body, media_type="text/event-stream", headers=STREAM_HEADERS)


class BufferingGzip:
    """BUG (``CHAT_EXAMPLE_BUG=gzip``): a compression middleware that collects the whole body,
    gzips it and sends it at the end, so nothing streams."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message = {}
        body = bytearray()

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                packed = gzip.compress(bytes(body))
                headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
                headers += [(b"content-encoding", b"gzip")]
                headers += [(b"content-length", str(len(packed)).encode())]
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": packed})

        await self.app(scope, receive, buffered)


def create_app(settings: Settings | None = None) -> Starlette:
    """The endpoint; ``settings`` default to :meth:`Settings.from_env`."""
    settings = settings or Settings.from_env()
    if settings.bug is not None and settings.bug not in BUGS:
        raise ValueError(f"CHAT_EXAMPLE_BUG={settings.bug!r}: expected one of {', '.join(BUGS)}")
    chat = Chat(settings)
    app = Starlette(
        routes=[
            Route("/chat", chat.chat, methods=["POST"]),
            Route("/chat/{turn_id}/events", chat.events, methods=["GET"]),
            Route("/chat/{turn_id}/cancel", chat.cancel, methods=["POST"]),
            Route("/turns/{turn_id}", chat.get_turn, methods=["GET"]),
        ]
    )
    app.state.chat = chat
    if settings.bug == "gzip":
        app.add_middleware(BufferingGzip)
    return app
