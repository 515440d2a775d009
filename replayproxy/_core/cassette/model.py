"""The cassette data model: frozen dataclasses, no behaviour beyond small accessors.

A :class:`Cassette` is an ordered tuple of :class:`Interaction` s. Each interaction holds the
:class:`Request` as sent upstream, the :class:`Response` head (or ``None`` if none came), the
response body as recorded :class:`Frame` s, and the :class:`Ending` that says how it stopped.

All times are integer nanoseconds measured from the moment the request was sent upstream
(``t = 0``). Headers are ``(name, value)`` byte pairs in wire order with duplicates kept,
because that is what a client saw and what mitmproxy hands over (``headers.fields``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from replayproxy._core.cassette.websocket import WebSocketSession

__all__ = [
    "Cassette",
    "EndKind",
    "Ending",
    "Frame",
    "Header",
    "Interaction",
    "Request",
    "Response",
    "header_value",
]

Header = tuple[bytes, bytes]


def header_value(headers: Iterable[Header], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), decoded as latin-1, or ``None``."""
    wanted = name.lower().encode("latin-1")
    for key, value in headers:
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


class EndKind(enum.StrEnum):
    """How a recorded response stopped. The values are the on-disk strings (format v1)."""

    COMPLETE = "complete"
    """The body ended with its proper framing (chunked terminator, full Content-Length)."""
    RESET = "reset"
    """The connection was reset (TCP RST, HTTP/2 RST_STREAM) before the body was complete."""
    INCOMPLETE = "incomplete"
    """The connection was closed (FIN) before the body was complete."""
    HANG = "hang"
    """The sender stopped sending and kept the connection open (made by edits and faults)."""
    CLIENT_GONE = "client_gone"
    """The client disconnected while recording; the upstream's own end is unknown."""
    NO_RESPONSE = "no_response"
    """No response head arrived at all (refused, reset before the head, timeout, ...)."""
    ERROR = "error"
    """Any other failure mitmproxy reported; ``Ending.message`` has its text."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How and when (``offset_ns``) the response stopped, with mitmproxy's message if any."""

    kind: EndKind
    offset_ns: int
    message: str = ""


@dataclass(frozen=True, slots=True)
class Frame:
    """One body chunk exactly as it arrived (de-chunked, content-encoding untouched)."""

    offset_ns: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Request:
    """The request as sent upstream, after redaction."""

    method: str
    url: str
    http_version: str = "HTTP/1.1"
    headers: tuple[Header, ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    @property
    def path(self) -> str:
        """The URL path without the query (``/v1/chat/completions``)."""
        return urlsplit(self.url).path or "/"

    @property
    def query(self) -> str:
        return urlsplit(self.url).query


@dataclass(frozen=True, slots=True)
class Response:
    """The response head and its body frames."""

    status: int
    reason: str = ""
    http_version: str = "HTTP/1.1"
    headers: tuple[Header, ...] = ()
    head_offset_ns: int = 0
    frames: tuple[Frame, ...] = ()

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    @property
    def body(self) -> bytes:
        """All frames joined: the body bytes the client received."""
        return b"".join(f.data for f in self.frames)


@dataclass(frozen=True, slots=True)
class Interaction:
    """One request and what came back.

    ``faults`` holds fault specs (``NAME:PARAM=VALUE,...``) applied on every replay of this
    interaction; they are kept as strings so the format does not depend on the fault module.
    ``recorded_at`` is the wall-clock time (Unix seconds) the request was sent, for people.
    ``websocket`` holds the messages and the close of a WebSocket session, whose ``response``
    is the 101 upgrade (see :mod:`replayproxy._core.cassette.websocket`); ``None`` for plain HTTP.
    """

    request: Request
    response: Response | None
    end: Ending
    faults: tuple[str, ...] = ()
    recorded_at: float | None = None
    websocket: WebSocketSession | None = None

    @property
    def frames(self) -> tuple[Frame, ...]:
        return () if self.response is None else self.response.frames


@dataclass(frozen=True, slots=True)
class Cassette:
    """An ordered session of interactions, plus free-form string metadata."""

    interactions: tuple[Interaction, ...] = ()
    meta: tuple[tuple[str, str], ...] = field(default=())

    def with_interactions(self, interactions: Iterable[Interaction]) -> Cassette:
        return replace(self, interactions=tuple(interactions))
