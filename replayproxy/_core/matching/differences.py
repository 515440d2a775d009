"""Comparing a request with a recorded one: the rules, and every difference, ranked (pure).

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
  equal (:mod:`replayproxy._core.matching.equivalence`: one text part vs a string, ``tool_choice:
  "auto"`` with tools vs absent, ...).

:class:`MatchOptions` holds those choices. :func:`diff_requests` lists **every** difference
(host, method, path, query, then each differing body member by JSON pointer), each with the
option that would let it pass; :func:`explain_differences` adds a different host even when it
is not compared. The comparable forms (:func:`query_pairs`, :func:`comparable`) are shared with
:mod:`replayproxy._core.matching.matcher`, which compares precomputed keys of them on the hit
path; how a miss is worded is :mod:`replayproxy._core.matching.explanation`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from replayproxy._core.cassette.model import Request
from replayproxy._core.json import limits
from replayproxy._core.json.pointer import drop_member, format_pointer, parse_pointer, pointer_order
from replayproxy._core.matching.equivalence import canonical
from replayproxy._core.matching.explanation import Difference
from replayproxy._core.redaction.secrets import (
    DEFAULT_QUERY_PARAMS,
    REDACTED_TEXT,
    is_redacted,
    redact_url,
)
from replayproxy._errors import UsageError

__all__ = [
    "MAX_LISTED",
    "MISSING",
    "REDACTED",
    "MatchOptions",
    "Parse",
    "comparable",
    "describe_request",
    "diff_requests",
    "explain_differences",
    "first_json_difference",
    "host_of",
    "is_wildcard",
    "parse_body",
    "query_pairs",
]

REDACTED = REDACTED_TEXT
"""The marker the recorder writes in place of a secret; matching treats it as a wildcard."""


def is_wildcard(value: object) -> bool:
    """Whether a recorded value was redacted: it then matches any value."""
    return isinstance(value, str) and is_redacted(value)


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """How requests are compared. ``ignore_body_fields`` are JSON pointers (``/stream_options``)."""

    ignore_query: frozenset[str] = frozenset()
    ignore_body_fields: tuple[str, ...] = ()
    match_host: bool = False
    allow_repeats: bool = False
    equivalence: bool = True
    """Treat requests the provider documents as identical as equal (see the module docstring)."""
    _pointers: tuple[tuple[str, ...], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        pointers = tuple(parse_pointer(p) for p in self.ignore_body_fields)
        if any(p == () for p in pointers):
            raise UsageError("--ignore-body-field '' would ignore the whole body")
        # Later array items first: "/x/0 /x/1" then name the items as they were in the request
        # (dropping /x/0 first would shift /x/1 out of reach).
        pointers = tuple(sorted(pointers, key=pointer_order, reverse=True))
        object.__setattr__(self, "_pointers", pointers)


def describe_request(request: Request) -> str:
    """``POST /v1/chat/completions?x=1`` (host left out: it does not take part in matching).

    Credential query parameters (``key``) are shown redacted: this text goes to logs.
    """
    parts = urlsplit(redact_url(request.url, DEFAULT_QUERY_PARAMS))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{request.method} {target}"


# -- comparison ---------------------------------------------------------------------------------

MISSING: Any = object()
"""Stands for an absent member, and for a body that is not JSON (compared as bytes)."""


def _short(value: object, limit: int = 80) -> str:
    text = "(absent)" if value is MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_differences(
    recorded: Any, requested: Any, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    """Every place (in document order) where two JSON values differ: the leaves that differ,
    and the members or items only one side has."""
    if is_wildcard(recorded):
        return
    if isinstance(recorded, dict) and isinstance(requested, dict):
        for key in list(recorded) + [k for k in requested if k not in recorded]:
            yield from _json_differences(
                recorded.get(key, MISSING), requested.get(key, MISSING), (*path, key)
            )
        return
    if isinstance(recorded, list) and isinstance(requested, list):
        for i in range(max(len(recorded), len(requested))):
            a = recorded[i] if i < len(recorded) else MISSING
            b = requested[i] if i < len(requested) else MISSING
            yield from _json_differences(a, b, (*path, str(i)))
        return
    # bool is an int in Python: keep `true` and `1` apart.
    if type(recorded) is not type(requested) or recorded != requested:
        yield (path, recorded, requested)


def first_json_difference(recorded: Any, requested: Any) -> tuple[tuple[str, ...], Any, Any] | None:
    """The first place where two JSON values differ, or ``None`` (stops there: the fast path)."""
    return next(_json_differences(recorded, requested), None)


def parse_body(body: bytes) -> Any:
    # Results may be cached (BodyCache) and are never mutated: _drop copies along its path.
    # A document nested deeper than MAX_JSON_DEPTH is compared as bytes, like any non-JSON.
    if not body.strip():
        return MISSING
    try:
        return limits.loads(body)
    except (ValueError, UnicodeDecodeError):
        return MISSING


def comparable(doc: Any, path: str, options: MatchOptions) -> Any:
    """A parsed body as matching compares it: in canonical form (with ``equivalence``), then
    without the ignored fields. The explanation's pointers refer to this form, so the options
    it suggests act on what it showed."""
    if doc is MISSING:
        return doc
    if options.equivalence:
        doc = canonical(path, doc)
    for pointer in options._pointers:
        doc = drop_member(doc, pointer)
    return doc


Parse = Callable[[bytes], Any]


def _body_differences(
    recorded: Request, requested: Request, options: MatchOptions, parse: Parse = parse_body
) -> list[Difference]:
    a, b = parse(recorded.body), parse(requested.body)
    if a is MISSING or b is MISSING:
        if recorded.body == requested.body:
            return []
        return [
            Difference(
                "body", f"{len(recorded.body)} bytes", f"{len(requested.body)} bytes (not equal)"
            )
        ]
    a, b = comparable(a, recorded.path, options), comparable(b, requested.path, options)
    out: list[Difference] = []
    unlisted = 0
    for path, x, y in _json_differences(a, b):
        if len(out) == MAX_LISTED:
            unlisted += 1
            continue
        pointer = format_pointer(path)
        option = "ignore_body_field" if path else None
        value = pointer if path else None
        out.append(
            Difference("body", _short(x), _short(y), pointer=pointer, option=option, value=value)
        )
    if unlisted:
        out.append(Difference("body", f"{unlisted} more members", f"{unlisted} more differ"))
    return out


def query_pairs(url: str, options: MatchOptions) -> list[tuple[str, str]]:
    # Credential parameters (``key``) never take part: the recorder redacts them, and a client
    # may pass its key in the query or in a header.
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return sorted(
        (k, v)
        for k, v in pairs
        if k not in options.ignore_query and k.lower() not in DEFAULT_QUERY_PARAMS
    )


MAX_LISTED = 100
"""Query parameter names, and body members, listed one by one in a miss; the others that
differ are counted in one last :class:`Difference` per part (20,000 differing names once made
a 688 KB explanation, read by nobody)."""

QueryPairs = Sequence[tuple[str, str]]
"""A query as :func:`query_pairs` gives it (filtered, sorted)."""


def _query_differences(a: QueryPairs, b: QueryPairs) -> list[Difference]:
    redacted = {k for k, v in a if is_wildcard(v)}
    a = [(k, v) for k, v in a if k not in redacted]
    b = [(k, v) for k, v in b if k not in redacted]
    if a == b:
        return []

    def show(pairs: QueryPairs) -> str:
        return "&".join(f"{k}={v}" for k, v in pairs) or "(none)"

    # One pass per side, grouped by name (each group keeps the sorted order): comparing the
    # groups is linear in the pairs. Scanning both lists once per name was quadratic: 12,000
    # parameters took 10.9 s on the event loop (issue 28).
    x_by = _by_name(a)
    y_by = _by_name(b)
    out: list[Difference] = []
    unlisted = 0
    for name in dict.fromkeys(k for k, _ in a + b):
        x, y = x_by.get(name, []), y_by.get(name, [])
        if x == y:
            continue
        if len(out) == MAX_LISTED:
            unlisted += 1
            continue
        out.append(Difference("query", show(x), show(y), option="ignore_query", value=quote(name)))
    if unlisted:
        out.append(Difference("query", f"{unlisted} more names", f"{unlisted} more names differ"))
    return out


def _by_name(pairs: QueryPairs) -> dict[str, list[tuple[str, str]]]:
    groups: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
        groups.setdefault(pair[0], []).append(pair)
    return groups


def host_of(url: str) -> str:
    return urlsplit(url).netloc.lower()


def diff_requests(
    recorded: Request,
    requested: Request,
    options: MatchOptions = MatchOptions(),
    *,
    parse: Parse = parse_body,
    queries: tuple[QueryPairs, QueryPairs] | None = None,
) -> tuple[Difference, ...]:
    """Every part in which ``requested`` differs from ``recorded``; empty means they match.

    Ranked: host (with ``match_host``), method, path, each query parameter, each body member.
    ``parse`` turns a body into its JSON value (a :class:`Matcher` passes its cache);
    ``queries``: both queries as :func:`query_pairs` gives them, when the caller has them
    already (parsing a 20,000-parameter query takes some 70 ms).
    """
    diffs: list[Difference] = []
    if options.match_host and host_of(recorded.url) != host_of(requested.url):
        diffs.append(Difference("host", host_of(recorded.url), host_of(requested.url)))
    if recorded.method.upper() != requested.method.upper():
        diffs.append(Difference("method", recorded.method, requested.method))
    if recorded.path != requested.path:
        diffs.append(Difference("path", recorded.path, requested.path))
    if queries is None:
        queries = query_pairs(recorded.url, options), query_pairs(requested.url, options)
    diffs.extend(_query_differences(*queries))
    diffs.extend(_body_differences(recorded, requested, options, parse))
    return tuple(diffs)


def explain_differences(
    recorded: Request,
    requested: Request,
    options: MatchOptions = MatchOptions(),
    *,
    parse: Parse = parse_body,
    diffs: tuple[Difference, ...] | None = None,
) -> tuple[Difference, ...]:
    """:func:`diff_requests`, plus a different host shown first even when it is not compared:
    a request to another host (a cost map, a telemetry endpoint) is told apart at a glance.
    ``diffs``: what :func:`diff_requests` gave for these two requests, if the caller has it."""
    if diffs is None:
        diffs = diff_requests(recorded, requested, options, parse=parse)
    a, b = host_of(recorded.url), host_of(requested.url)
    if not options.match_host and a and b and a != b:
        diffs = (Difference("host", a, b, compared=False), *diffs)
    return diffs
