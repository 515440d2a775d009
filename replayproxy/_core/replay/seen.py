"""The requests a replay session received, as tests read them (pure).

A :class:`SeenRequest` is one request as the client sent it, redacted as the recorder redacts
a cassette (the session's record settings: the default credential headers and query
parameters, plus any configured; JSON body fields by pointer), with what answered it: the
recorded interaction, which serving of it this was (``attempt``), and the faults that acted
on that serving. Retry policies are tested on these ("one retry, with the same
``Idempotency-Key``").

:class:`SeenLog` keeps them in order for one session. A request forwarded upstream in a record
mode (a passthrough) shows ``interaction=None`` until it is recorded; then it shows the index
it was recorded at, with ``attempt=1`` (its live serving).

Bounded, so that a long-running replay server does not keep what it was sent: a body is kept
up to :data:`SEEN_MAX_BODY` bytes (a longer one is cut there; the 20 MB upload a test sends
is not held for the rest of the run), and the log keeps at most :data:`SEEN_MAX` requests and
:data:`SEEN_MAX_BYTES` of URLs, headers and bodies: past that the oldest are dropped and
counted (:attr:`SeenLog.dropped`). Not thread-safe: the session holds its lock around every
call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import chain
from urllib.parse import urlsplit

from replayproxy._core.cassette.model import Header, Interaction, Request
from replayproxy._core.redaction.secrets import Redactor

__all__ = [
    "SEEN_MAX",
    "SEEN_MAX_BODY",
    "SEEN_MAX_BYTES",
    "Headers",
    "SeenLog",
    "SeenRequest",
    "seen_request",
]

SEEN_MAX = 10_000
"""The most requests a session keeps (a test sends far fewer; a server left running more)."""

SEEN_MAX_BODY = 1024 * 1024
"""The most bytes of one request body kept (LLM requests are kilobytes; uploads are not)."""

SEEN_MAX_BYTES = 16 * 1024 * 1024
"""The most bytes of URLs, header names and values, and bodies a session keeps."""


class Headers(Mapping[str, str]):
    """Request headers as a read-only, case-insensitive mapping of ``str`` to ``str``.

    Names iterate as the client spelled them (first occurrence); a header sent more than once
    reads as its values joined with ``", "`` (RFC 9110 §5.3). ``fields`` keeps every
    ``(name, value)`` pair in wire order. Decoded as latin-1, as HTTP/1.1 heads are. The
    lookup tables are built on first use: most requests a session keeps are never read.
    """

    __slots__ = ("_fields", "_names", "_raw", "_values", "nbytes")

    def __init__(self, fields: Iterable[Header] = ()) -> None:
        self._raw = tuple(fields)
        self._fields: tuple[tuple[str, str], ...] | None = None
        self._values: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self.nbytes = sum(map(len, chain.from_iterable(self._raw)))
        """The bytes of every name and value (what the log counts against its budget)."""

    def _tables(self) -> dict[str, str]:
        if self._fields is None:
            pairs = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in self._raw)
            values: dict[str, list[str]] = {}
            names: dict[str, str] = {}
            for name, value in pairs:
                values.setdefault(name.lower(), []).append(value)
                names.setdefault(name.lower(), name)
            self._values = {k: ", ".join(v) for k, v in values.items()}
            self._names = names
            self._fields = pairs  # last: another thread reading sees complete tables
        return self._values

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        self._tables()
        assert self._fields is not None
        return self._fields

    def __getitem__(self, name: str) -> str:
        if not isinstance(name, str):
            raise KeyError(name)
        return self._tables()[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._tables()

    def __iter__(self) -> Iterator[str]:
        self._tables()
        return iter(self._names.values())

    def __len__(self) -> int:
        return len(self._tables())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._tables() == other._tables()
        if isinstance(other, Mapping):
            return self._tables() == {str(k).lower(): v for k, v in other.items()}
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._tables().items())))

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


@dataclass(frozen=True, slots=True)
class SeenRequest:
    """One request a replay received, and what answered it.

    ``url`` is the full URL (the one matched: in base-URL mode, on the upstream stood in for);
    ``headers``, ``url`` and ``body`` are redacted as a cassette is; ``body`` is cut at
    :data:`SEEN_MAX_BODY` bytes. ``interaction`` is the
    index of the recorded interaction that answered (``None``: a miss, a failure, or a
    passthrough not yet recorded); ``attempt`` which serving of it this was in the session
    (1 = the first; ``None`` when ``interaction`` is); ``faults`` the spec strings that acted
    on this serving (stored ones first), after the selectors.
    """

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes
    interaction: int | None = None
    attempt: int | None = None
    faults: tuple[str, ...] = ()


def seen_request(
    request: Request,
    redactor: Redactor,
    interaction: int | None = None,
    attempt: int | None = None,
    faults: tuple[str, ...] = (),
) -> SeenRequest:
    """``request`` as a :class:`SeenRequest`, redacted by ``redactor``."""
    clean = redactor.request(request)
    return SeenRequest(
        clean.method,
        clean.url,
        Headers(clean.headers),
        clean.body[:SEEN_MAX_BODY],  # a copy only when cut: the big original is let go
        interaction,
        None if interaction is None else attempt,
        faults,
    )


class SeenLog:
    """The requests of one session in the order they were resolved (bounded; see above)."""

    def __init__(self, max_requests: int = SEEN_MAX, max_bytes: int = SEEN_MAX_BYTES) -> None:
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.dropped = 0
        """How many of the oldest requests were dropped to stay within the bounds."""
        self._seen: deque[SeenRequest] = deque()
        self._bytes = 0
        self._pending: list[SeenRequest] = []  # passthroughs waiting for their recording

    def add(self, seen: SeenRequest, *, passthrough: bool = False) -> None:
        self._seen.append(seen)
        self._bytes += _size(seen)
        if passthrough:
            self._pending.append(seen)
        while len(self._seen) > 1 and (
            len(self._seen) > self.max_requests or self._bytes > self.max_bytes
        ):
            old = self._seen.popleft()
            self._bytes -= _size(old)
            self.dropped += 1
            if any(p is old for p in self._pending):
                self._pending = [p for p in self._pending if p is not old]

    def recorded(self, interaction: Interaction, index: int) -> None:
        """A passthrough was recorded as interaction ``index``: the oldest waiting one with the
        same method and path shows it from now on (attempt 1: its live serving)."""
        req = interaction.request
        for n, pending in enumerate(self._pending):
            if pending.method.upper() == req.method.upper() and _path(pending.url) == req.path:
                del self._pending[n]
                for i, seen in enumerate(self._seen):
                    if seen is pending:
                        self._seen[i] = replace(seen, interaction=index, attempt=1)  # same size
                        break
                return

    @property
    def requests(self) -> tuple[SeenRequest, ...]:
        return tuple(self._seen)


def _size(seen: SeenRequest) -> int:
    """What a kept request counts against :data:`SEEN_MAX_BYTES`."""
    headers = seen.headers
    if isinstance(headers, Headers):
        size = headers.nbytes
    else:  # built by hand
        size = sum(len(k) + len(v) for k, v in headers.items())
    return len(seen.url) + len(seen.body) + size


def _path(url: str) -> str:
    return urlsplit(url).path or "/"
