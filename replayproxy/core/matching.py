"""Request matching: which recorded interaction answers an incoming request (pure).

A request matches a recorded interaction when its **method**, **path**, **query** and **body**
are equal, where:

- the host, scheme and port are ignored by default (``match_host=False``), so a cassette recorded
  through a forward proxy replays behind a base URL and the other way round;
- query parameters are compared as a multiset (order ignored); names in ``ignore_query`` and
  credential parameters (``key``) are dropped from both sides;
- bodies that parse as JSON (both sides) are compared as JSON values (key order and whitespace
  ignored); fields named by JSON pointer in ``ignore_body_fields`` are dropped from both sides;
  other bodies are compared byte for byte;
- a value the recorder redacted (see :data:`REDACTED`) matches anything: the secret is gone, so
  it cannot be compared.

Identical requests take identical recorded interactions in recorded order. When they are used
up, the next one is a miss unless ``allow_repeats`` (then the last one is served again).

A miss carries the nearest recorded interaction and the differences, including the first
differing JSON pointer, so the report can say *why* nothing matched.

The :class:`Matcher` keeps the "used" counts; it is not thread-safe (callers hold a lock).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from replayproxy.core.model import Interaction, Request
from replayproxy.core.redact import DEFAULT_QUERY_PARAMS, REDACTED_TEXT, is_redacted, redact_url
from replayproxy.errors import UsageError

__all__ = [
    "REDACTED",
    "Difference",
    "Hit",
    "MatchOptions",
    "Matcher",
    "Miss",
    "describe_request",
    "diff_requests",
    "parse_pointer",
]

REDACTED = REDACTED_TEXT
"""The marker the recorder writes in place of a secret; matching treats it as a wildcard."""


def _is_redacted(value: object) -> bool:
    return isinstance(value, str) and is_redacted(value)


# RFC 6901: "~" only escapes ("~0", "~1"); an array index is decimal without leading zeros.
_BAD_TILDE = re.compile(r"~(?![01])")
_INDEX = re.compile(r"0|[1-9][0-9]*")


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Split an RFC 6901 JSON pointer (``/a/b~1c``) into its reference tokens."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise UsageError(f"JSON pointer must start with '/': {pointer!r}")
    if _BAD_TILDE.search(pointer):
        raise UsageError(f"JSON pointer has '~' not followed by 0 or 1: {pointer!r}")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def _format_pointer(tokens: Sequence[str]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """How requests are compared. ``ignore_body_fields`` are JSON pointers (``/stream_options``)."""

    ignore_query: frozenset[str] = frozenset()
    ignore_body_fields: tuple[str, ...] = ()
    match_host: bool = False
    allow_repeats: bool = False
    _pointers: tuple[tuple[str, ...], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        pointers = tuple(parse_pointer(p) for p in self.ignore_body_fields)
        if any(p == () for p in pointers):
            raise UsageError("--ignore-body-field '' would ignore the whole body")
        object.__setattr__(self, "_pointers", pointers)


@dataclass(frozen=True, slots=True)
class Difference:
    """One way a request differs from a recorded one (``part`` is method/host/path/query/body)."""

    part: str
    recorded: str
    requested: str
    pointer: str | None = None

    def __str__(self) -> str:
        where = self.part if self.pointer is None else f"body at {self.pointer or '/'}"
        return f"{where}: recorded {self.recorded}, requested {self.requested}"


@dataclass(frozen=True, slots=True)
class Hit:
    """The request is answered by ``interactions[index]``, served ``replay_count`` times before."""

    index: int
    replay_count: int


@dataclass(frozen=True, slots=True)
class Miss:
    """No recorded interaction is available; ``nearest`` and ``differences`` say why."""

    request: str
    nearest: int | None
    differences: tuple[Difference, ...]
    used_up: bool = False
    reason: str = ""
    """Set when the request matched but could not be served (e.g. a fault that cannot apply)."""

    def explain(self) -> str:
        """A multi-line, human-readable explanation (the unmatched response body)."""
        lines = [f"replayproxy: no recorded interaction matches {self.request}"]
        if self.reason:
            lines[0] = f"replayproxy: cannot serve {self.request} (recorded #{self.nearest})"
            lines.append(self.reason)
        elif self.nearest is None:
            lines.append("the cassette holds no interactions")
        elif self.used_up:
            lines.append(
                f"it matches recorded interaction #{self.nearest}, but every matching "
                "interaction was already replayed (pass --allow-repeats to serve the last again)"
            )
        else:
            lines.append(f"closest recorded interaction: #{self.nearest}, which differs in")
            lines.extend(f"  {d}" for d in self.differences)
        return "\n".join(lines)

    def one_line(self) -> str:
        """A one-line summary, for stderr."""
        if self.reason:
            return f"cannot serve {self.request} (#{self.nearest}): {self.reason}"
        if self.nearest is None:
            return f"unmatched {self.request}: the cassette is empty"
        if self.used_up:
            return f"unmatched {self.request}: #{self.nearest} matches but was used up"
        diffs = "; ".join(str(d) for d in self.differences)
        return f"unmatched {self.request}: nearest #{self.nearest} differs in {diffs}"


def describe_request(request: Request) -> str:
    """``POST /v1/chat/completions?x=1`` (host left out: it does not take part in matching).

    Credential query parameters (``key``) are shown redacted: this text goes to logs.
    """
    parts = urlsplit(redact_url(request.url, DEFAULT_QUERY_PARAMS))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{request.method} {target}"


# -- comparison ---------------------------------------------------------------------------------

_MISSING: Any = object()


def _short(value: object, limit: int = 80) -> str:
    text = "(absent)" if value is _MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _drop(doc: Any, tokens: tuple[str, ...]) -> Any:
    """``doc`` without the member at ``tokens`` (a copy along the path; absent paths are fine)."""
    if not tokens:
        return doc
    head, rest = tokens[0], tokens[1:]
    if isinstance(doc, dict) and head in doc:
        out = dict(doc)
        if rest:
            out[head] = _drop(doc[head], rest)
        else:
            del out[head]
        return out
    if isinstance(doc, list) and _INDEX.fullmatch(head) and int(head) < len(doc):
        items = list(doc)
        if rest:
            items[int(head)] = _drop(items[int(head)], rest)
        else:
            del items[int(head)]
        return items
    return doc


def _first_json_difference(
    recorded: Any, requested: Any, path: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], Any, Any] | None:
    """The first place (in document order) where two JSON values differ, or ``None``."""
    if _is_redacted(recorded):
        return None
    if isinstance(recorded, dict) and isinstance(requested, dict):
        for key in list(recorded) + [k for k in requested if k not in recorded]:
            found = _first_json_difference(
                recorded.get(key, _MISSING), requested.get(key, _MISSING), (*path, key)
            )
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(requested, list):
        for i in range(max(len(recorded), len(requested))):
            a = recorded[i] if i < len(recorded) else _MISSING
            b = requested[i] if i < len(requested) else _MISSING
            found = _first_json_difference(a, b, (*path, str(i)))
            if found is not None:
                return found
        return None
    # bool is an int in Python: keep `true` and `1` apart.
    if type(recorded) is not type(requested) or recorded != requested:
        return (path, recorded, requested)
    return None


@functools.lru_cache(maxsize=1024)
def _parse_json(body: bytes) -> Any:
    # Cached: every request is compared with every recorded body. Results are never mutated
    # (_drop copies along the path it changes).
    if not body.strip():
        return _MISSING
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _MISSING


def _body_difference(recorded: bytes, requested: bytes, options: MatchOptions) -> Difference | None:
    a, b = _parse_json(recorded), _parse_json(requested)
    if a is _MISSING or b is _MISSING:
        if recorded == requested:
            return None
        return Difference("body", f"{len(recorded)} bytes", f"{len(requested)} bytes (not equal)")
    for pointer in options._pointers:
        a, b = _drop(a, pointer), _drop(b, pointer)
    found = _first_json_difference(a, b)
    if found is None:
        return None
    path, x, y = found
    return Difference("body", _short(x), _short(y), pointer=_format_pointer(path))


def _query(url: str, options: MatchOptions) -> list[tuple[str, str]]:
    # Credential parameters (``key``) never take part: the recorder redacts them, and a client
    # may pass its key in the query or in a header.
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return sorted(
        (k, v)
        for k, v in pairs
        if k not in options.ignore_query and k.lower() not in DEFAULT_QUERY_PARAMS
    )


def _query_difference(recorded: str, requested: str, options: MatchOptions) -> Difference | None:
    a, b = _query(recorded, options), _query(requested, options)
    redacted = {k for k, v in a if _is_redacted(v)}
    a = [(k, v) for k, v in a if k not in redacted]
    b = [(k, v) for k, v in b if k not in redacted]
    if a == b:
        return None

    def show(pairs: list[tuple[str, str]]) -> str:
        return "&".join(f"{k}={v}" for k, v in pairs) or "(none)"

    return Difference("query", show(a), show(b))


def diff_requests(
    recorded: Request, requested: Request, options: MatchOptions = MatchOptions()
) -> tuple[Difference, ...]:
    """Every part in which ``requested`` differs from ``recorded``; empty means they match."""
    diffs: list[Difference] = []
    if recorded.method.upper() != requested.method.upper():
        diffs.append(Difference("method", recorded.method, requested.method))
    if options.match_host:
        a, b = urlsplit(recorded.url).netloc.lower(), urlsplit(requested.url).netloc.lower()
        if a != b:
            diffs.append(Difference("host", a, b))
    if recorded.path != requested.path:
        diffs.append(Difference("path", recorded.path, requested.path))
    query = _query_difference(recorded.url, requested.url, options)
    if query is not None:
        diffs.append(query)
    body = _body_difference(recorded.body, requested.body, options)
    if body is not None:
        diffs.append(body)
    return tuple(diffs)


# A miss is explained against the recorded interaction that differs least; a different method
# or path says more about "which one did you mean" than a different body does.
_WEIGHT = {"method": 4, "path": 8, "host": 2, "query": 2, "body": 1}


@dataclass(frozen=True, slots=True)
class _Key:
    """The parts of a request that matching compares, computed once per request.

    ``query`` is the filtered, sorted query (:func:`_query`); ``redacted`` the recorded query
    names whose value was redacted (wildcards); ``doc`` the parsed JSON body with the ignored
    fields dropped (``_MISSING`` when the body is not JSON).
    """

    method: str
    netloc: str
    path: str
    query: tuple[tuple[str, str], ...]
    redacted: frozenset[str]
    body: bytes
    doc: Any


def _key(request: Request, options: MatchOptions) -> _Key:
    parts = urlsplit(request.url)
    query = _query(request.url, options)
    doc = _parse_json(request.body)
    if doc is not _MISSING:
        for pointer in options._pointers:
            doc = _drop(doc, pointer)
    return _Key(
        request.method.upper(),
        parts.netloc.lower() if options.match_host else "",
        request.path,
        tuple(query),
        frozenset(k for k, v in query if _is_redacted(v)),
        request.body,
        doc,
    )


def _same(recorded: _Key, requested: _Key) -> bool:
    """``not diff_requests(recorded, requested)``, from precomputed keys (method, host and
    path are compared by the caller's index)."""
    a, b = recorded.query, requested.query
    if recorded.redacted:
        a = tuple((k, v) for k, v in a if k not in recorded.redacted)
        b = tuple((k, v) for k, v in b if k not in recorded.redacted)
    if a != b:
        return False
    if recorded.doc is _MISSING or requested.doc is _MISSING:
        return recorded.body == requested.body
    return _first_json_difference(recorded.doc, requested.doc) is None


class Matcher:
    """Picks recorded interactions for requests, in recorded order, and counts their use.

    The comparable parts of every recorded request are computed once, and indexed by method,
    host (only with ``match_host``) and path, so a request is compared only with the recorded
    requests that can match it; a miss is explained with :func:`diff_requests` as before.
    """

    def __init__(
        self, interactions: Sequence[Interaction], options: MatchOptions = MatchOptions()
    ) -> None:
        self.interactions = tuple(interactions)
        self.options = options
        self.uses = [0] * len(self.interactions)
        self._keys = [_key(i.request, options) for i in self.interactions]
        self._index: dict[tuple[str, str, str], list[int]] = {}
        for n, k in enumerate(self._keys):
            self._index.setdefault((k.method, k.netloc, k.path), []).append(n)

    def match(self, request: Request) -> Hit | Miss:
        """Choose the interaction for ``request`` and count it as used (a :class:`Hit`)."""
        key = _key(request, self.options)
        same = self._index.get((key.method, key.netloc, key.path), [])
        candidates = [n for n in same if _same(self._keys[n], key)]
        for n in candidates:
            if self.uses[n] == 0:
                return self._use(n)
        if candidates and self.options.allow_repeats:
            return self._use(candidates[-1])
        if candidates:
            return Miss(describe_request(request), candidates[-1], (), used_up=True)
        diffs = [diff_requests(i.request, request, self.options) for i in self.interactions]
        if not diffs:
            return Miss(describe_request(request), None, ())
        nearest = min(
            range(len(diffs)),
            key=lambda n: (sum(_WEIGHT[d.part] for d in diffs[n]), self.uses[n] > 0, n),
        )
        return Miss(describe_request(request), nearest, diffs[nearest])

    def _use(self, n: int) -> Hit:
        hit = Hit(n, self.uses[n])
        self.uses[n] += 1
        return hit

    def unused(self) -> tuple[int, ...]:
        """Indexes of recorded interactions never served."""
        return tuple(n for n, u in enumerate(self.uses) if u == 0)
