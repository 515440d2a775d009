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
  it cannot be compared;
- with ``equivalence`` (the default), bodies the provider documents as the same request are
  equal (:mod:`replayproxy.core.matching.equivalence`: one text part vs a string, ``tool_choice:
  "auto"`` with tools vs absent, ...).

Identical requests take identical recorded interactions in recorded order. When they are used
up, the next one is a miss unless ``allow_repeats`` (then the last one is served again).

A miss carries the nearest recorded interaction and **every** difference from it, ranked (host,
method, path, query, then each differing body member by JSON pointer), with the options that
would make it match, so one run says everything that has to change.

The :class:`Matcher` keeps the "used" counts; it is not thread-safe (callers hold a lock).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from replayproxy.core.cassette.model import Interaction, Request
from replayproxy.core.json import limits
from replayproxy.core.json.pointer import drop_member, format_pointer, parse_pointer, pointer_order
from replayproxy.core.matching.bodycache import BodyCache
from replayproxy.core.matching.equivalence import canonical
from replayproxy.core.matching.explanation import Difference, Miss
from replayproxy.core.redaction.secrets import (
    DEFAULT_QUERY_PARAMS,
    REDACTED_TEXT,
    is_redacted,
    redact_url,
)
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
    "explain_differences",
    "parse_pointer",
]

REDACTED = REDACTED_TEXT
"""The marker the recorder writes in place of a secret; matching treats it as a wildcard."""


def _is_redacted(value: object) -> bool:
    return isinstance(value, str) and is_redacted(value)


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """How requests are compared. ``ignore_body_fields`` are JSON pointers (``/stream_options``)."""

    ignore_query: frozenset[str] = frozenset()
    ignore_body_fields: tuple[str, ...] = ()
    match_host: bool = False
    allow_repeats: bool = False
    equivalence: bool = True
    """Treat requests the provider documents as identical as equal (see module docstring)."""
    _pointers: tuple[tuple[str, ...], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        pointers = tuple(parse_pointer(p) for p in self.ignore_body_fields)
        if any(p == () for p in pointers):
            raise UsageError("--ignore-body-field '' would ignore the whole body")
        # Later array items first: "/x/0 /x/1" then name the items as they were in the request
        # (dropping /x/0 first would shift /x/1 out of reach).
        pointers = tuple(sorted(pointers, key=pointer_order, reverse=True))
        object.__setattr__(self, "_pointers", pointers)


@dataclass(frozen=True, slots=True)
class Hit:
    """The request is answered by ``interactions[index]``, served ``replay_count`` times before."""

    index: int
    replay_count: int


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


def _json_differences(
    recorded: Any, requested: Any, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    """Every place (in document order) where two JSON values differ: the leaves that differ,
    and the members or items only one side has."""
    if _is_redacted(recorded):
        return
    if isinstance(recorded, dict) and isinstance(requested, dict):
        for key in list(recorded) + [k for k in requested if k not in recorded]:
            yield from _json_differences(
                recorded.get(key, _MISSING), requested.get(key, _MISSING), (*path, key)
            )
        return
    if isinstance(recorded, list) and isinstance(requested, list):
        for i in range(max(len(recorded), len(requested))):
            a = recorded[i] if i < len(recorded) else _MISSING
            b = requested[i] if i < len(requested) else _MISSING
            yield from _json_differences(a, b, (*path, str(i)))
        return
    # bool is an int in Python: keep `true` and `1` apart.
    if type(recorded) is not type(requested) or recorded != requested:
        yield (path, recorded, requested)


def _first_json_difference(
    recorded: Any, requested: Any
) -> tuple[tuple[str, ...], Any, Any] | None:
    """The first place where two JSON values differ, or ``None`` (stops there: the fast path)."""
    return next(_json_differences(recorded, requested), None)


def _parse_json(body: bytes) -> Any:
    # Results may be cached (BodyCache) and are never mutated: _drop copies along its path.
    # A document nested deeper than MAX_JSON_DEPTH is compared as bytes, like any non-JSON.
    if not body.strip():
        return _MISSING
    try:
        return limits.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _MISSING


def _comparable(doc: Any, path: str, options: MatchOptions) -> Any:
    """A parsed body as matching compares it: in canonical form (with ``equivalence``), then
    without the ignored fields. The explanation's pointers refer to this form, so the options
    it suggests act on what it showed."""
    if doc is _MISSING:
        return doc
    if options.equivalence:
        doc = canonical(path, doc)
    for pointer in options._pointers:
        doc = drop_member(doc, pointer)
    return doc


_Parse = Callable[[bytes], Any]


def _body_differences(
    recorded: Request, requested: Request, options: MatchOptions, parse: _Parse = _parse_json
) -> list[Difference]:
    a, b = parse(recorded.body), parse(requested.body)
    if a is _MISSING or b is _MISSING:
        if recorded.body == requested.body:
            return []
        return [
            Difference(
                "body", f"{len(recorded.body)} bytes", f"{len(requested.body)} bytes (not equal)"
            )
        ]
    a, b = _comparable(a, recorded.path, options), _comparable(b, requested.path, options)
    out = []
    for path, x, y in _json_differences(a, b):
        pointer = format_pointer(path)
        option = f"--ignore-body-field {pointer}" if path else None
        out.append(Difference("body", _short(x), _short(y), pointer=pointer, option=option))
    return out


def _query(url: str, options: MatchOptions) -> list[tuple[str, str]]:
    # Credential parameters (``key``) never take part: the recorder redacts them, and a client
    # may pass its key in the query or in a header.
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return sorted(
        (k, v)
        for k, v in pairs
        if k not in options.ignore_query and k.lower() not in DEFAULT_QUERY_PARAMS
    )


def _query_differences(recorded: str, requested: str, options: MatchOptions) -> list[Difference]:
    a, b = _query(recorded, options), _query(requested, options)
    redacted = {k for k, v in a if _is_redacted(v)}
    a = [(k, v) for k, v in a if k not in redacted]
    b = [(k, v) for k, v in b if k not in redacted]
    if a == b:
        return []

    def show(pairs: list[tuple[str, str]]) -> str:
        return "&".join(f"{k}={v}" for k, v in pairs) or "(none)"

    out = []
    for name in dict.fromkeys(k for k, _ in a + b):
        x = [(k, v) for k, v in a if k == name]
        y = [(k, v) for k, v in b if k == name]
        if x != y:
            out.append(
                Difference("query", show(x), show(y), option=f"--ignore-query {quote(name)}")
            )
    return out


def _host(url: str) -> str:
    return urlsplit(url).netloc.lower()


def diff_requests(
    recorded: Request,
    requested: Request,
    options: MatchOptions = MatchOptions(),
    *,
    parse: _Parse = _parse_json,
) -> tuple[Difference, ...]:
    """Every part in which ``requested`` differs from ``recorded``; empty means they match.

    Ranked: host (with ``match_host``), method, path, each query parameter, each body member.
    ``parse`` turns a body into its JSON value (a :class:`Matcher` passes its cache).
    """
    diffs: list[Difference] = []
    if options.match_host and _host(recorded.url) != _host(requested.url):
        diffs.append(Difference("host", _host(recorded.url), _host(requested.url)))
    if recorded.method.upper() != requested.method.upper():
        diffs.append(Difference("method", recorded.method, requested.method))
    if recorded.path != requested.path:
        diffs.append(Difference("path", recorded.path, requested.path))
    diffs.extend(_query_differences(recorded.url, requested.url, options))
    diffs.extend(_body_differences(recorded, requested, options, parse))
    return tuple(diffs)


def explain_differences(
    recorded: Request,
    requested: Request,
    options: MatchOptions = MatchOptions(),
    *,
    parse: _Parse = _parse_json,
) -> tuple[Difference, ...]:
    """:func:`diff_requests`, plus a different host shown first even when it is not compared:
    a request to another host (a cost map, a telemetry endpoint) is told apart at a glance."""
    diffs = diff_requests(recorded, requested, options, parse=parse)
    a, b = _host(recorded.url), _host(requested.url)
    if not options.match_host and a and b and a != b:
        diffs = (Difference("host", a, b, compared=False), *diffs)
    return diffs


# A miss is explained against the recorded interaction that differs least; a different method
# or path says more about "which one did you mean" than a different body does.
# Ties go to the interaction with fewer differences, then to one recorded for the same host.
_WEIGHT = {"method": 4, "path": 8, "host": 2, "query": 2, "body": 1}


def _weight(diffs: Sequence[Difference]) -> int:
    return sum(_WEIGHT[part] for part in {d.part for d in diffs})


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


def _key(request: Request, options: MatchOptions, parse: _Parse = _parse_json) -> _Key:
    parts = urlsplit(request.url)
    query = _query(request.url, options)
    doc = _comparable(parse(request.body), request.path, options)
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
    :meth:`add` grows it by an interaction recorded while replaying (record modes).
    """

    def __init__(
        self, interactions: Sequence[Interaction], options: MatchOptions = MatchOptions()
    ) -> None:
        self.interactions = tuple(interactions)
        self.options = options
        self.uses = [0] * len(self.interactions)
        # Per matcher (not per process), bounded by bytes: see core/matching/bodycache.py.
        self._bodies = BodyCache(_parse_json)
        self._keys = [_key(i.request, options, self._bodies.get) for i in self.interactions]
        self._index: dict[tuple[str, str, str], list[int]] = {}
        for n, k in enumerate(self._keys):
            self._index.setdefault((k.method, k.netloc, k.path), []).append(n)

    def add(self, interaction: Interaction, *, used: bool = True) -> int:
        """Grow the matcher by one interaction (recorded during this session); its index.

        ``used``: count it as served already (it was, live), so a later identical request is
        answered by it only with ``allow_repeats``, as with any used-up interaction.
        """
        n = len(self.interactions)
        self.interactions = (*self.interactions, interaction)
        self.uses.append(1 if used else 0)
        key = _key(interaction.request, self.options, self._bodies.get)
        self._keys.append(key)
        self._index.setdefault((key.method, key.netloc, key.path), []).append(n)
        return n

    def match(self, request: Request) -> Hit | Miss:
        """Choose the interaction for ``request`` and count it as used (a :class:`Hit`)."""
        key = _key(request, self.options, self._bodies.get)
        same = self._index.get((key.method, key.netloc, key.path), [])
        candidates = [n for n in same if _same(self._keys[n], key)]
        for n in candidates:
            if self.uses[n] == 0:
                return self._use(n)
        if candidates and self.options.allow_repeats:
            return self._use(candidates[-1])
        if candidates:
            return Miss(
                describe_request(request),
                candidates[-1],
                (),
                used_up=True,
                host=_host(request.url),
            )
        diffs = [
            diff_requests(i.request, request, self.options, parse=self._bodies.get)
            for i in self.interactions
        ]
        if not diffs:
            return Miss(describe_request(request), None, (), host=_host(request.url))
        host = _host(request.url)
        nearest = min(
            range(len(diffs)),
            key=lambda n: (
                _weight(diffs[n]),
                len(diffs[n]),
                _host(self.interactions[n].request.url) != host,
                self.uses[n] > 0,
                n,
            ),
        )
        explained = explain_differences(
            self.interactions[nearest].request, request, self.options, parse=self._bodies.get
        )
        return Miss(describe_request(request), nearest, explained, host=host)

    def _use(self, n: int) -> Hit:
        hit = Hit(n, self.uses[n])
        self.uses[n] += 1
        return hit

    def unused(self) -> tuple[int, ...]:
        """Indexes of recorded interactions never served."""
        return tuple(n for n, u in enumerate(self.uses) if u == 0)
