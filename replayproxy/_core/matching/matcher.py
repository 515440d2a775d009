"""Request matching: which recorded interaction answers an incoming request (pure).

Two requests are compared as :mod:`replayproxy._core.matching.differences` says (method, path,
query as a multiset, bodies as JSON values, redacted values as wildcards, the provider's
documented equivalences); this module picks among the recorded interactions.

Identical requests take identical recorded interactions in recorded order. When they are used
up, one whose ``servings`` allowance is not spent yet is served again (an interaction a fault
selects with ``attempt=N`` may be served N + 1 times: the retry after the failing attempt,
:func:`replayproxy._core.faults.servings`); after that the next one is a miss unless
``allow_repeats`` (then the last one is served again).

A miss carries the nearest recorded interaction and **every** difference from it, ranked (host,
method, path, query, then each differing body member by JSON pointer), with the options that
would make it match, so one run says everything that has to change.

The :class:`Matcher` keeps the "used" counts; it is not thread-safe (callers hold a lock).
The comparison's public names (:class:`MatchOptions`, :func:`diff_requests`, ...) and the miss
(:class:`Miss`, :class:`Difference`) are re-exported here, where users import them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from replayproxy._core.cassette.model import Interaction, Request
from replayproxy._core.json.pointer import parse_pointer
from replayproxy._core.matching.bodycache import BodyCache
from replayproxy._core.matching.differences import (
    MISSING,
    REDACTED,
    MatchOptions,
    Parse,
    comparable,
    describe_request,
    diff_requests,
    explain_differences,
    first_json_difference,
    host_of,
    is_wildcard,
    parse_body,
    query_pairs,
)
from replayproxy._core.matching.explanation import Difference, Miss

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


@dataclass(frozen=True, slots=True)
class Hit:
    """The request is answered by ``interactions[index]``, served ``replay_count`` times before."""

    index: int
    replay_count: int


# A miss is explained against the recorded interaction that differs least; a different method
# or path says more about "which one did you mean" than a different body does.
# Ties go to the interaction with fewer differences, then to one recorded for the same host.
_WEIGHT = {"method": 4, "path": 8, "host": 2, "query": 2, "body": 1}


def _weight(diffs: Sequence[Difference]) -> int:
    return sum(_WEIGHT[part] for part in {d.part for d in diffs})


@dataclass(frozen=True, slots=True)
class _Key:
    """The parts of a request that matching compares, computed once per request.

    ``query`` is the filtered, sorted query (:func:`.differences.query_pairs`); ``redacted``
    the recorded query names whose value was redacted (wildcards); ``doc`` the parsed JSON
    body with the ignored fields dropped (``MISSING`` when the body is not JSON).
    """

    method: str
    netloc: str
    path: str
    query: tuple[tuple[str, str], ...]
    redacted: frozenset[str]
    body: bytes
    doc: Any


def _key(request: Request, options: MatchOptions, parse: Parse = parse_body) -> _Key:
    parts = urlsplit(request.url)
    query = query_pairs(request.url, options)
    doc = comparable(parse(request.body), request.path, options)
    return _Key(
        request.method.upper(),
        parts.netloc.lower() if options.match_host else "",
        request.path,
        tuple(query),
        frozenset(k for k, v in query if is_wildcard(v)),
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
    if recorded.doc is MISSING or requested.doc is MISSING:
        return recorded.body == requested.body
    return first_json_difference(recorded.doc, requested.doc) is None


_DEFAULT_OPTIONS = MatchOptions()

Servings = Callable[[Interaction, int], int]
"""How many times interaction (at index) may be served without ``allow_repeats``."""


def _once(interaction: Interaction, index: int) -> int:
    return 1


class Matcher:
    """Picks recorded interactions for requests, in recorded order, and counts their use.

    The comparable parts of every recorded request are computed once, and indexed by method,
    host (only with ``match_host``) and path, so a request is compared only with the recorded
    requests that can match it; a miss is explained with :func:`diff_requests` as before.
    :meth:`add` grows it by an interaction recorded while replaying (record modes).
    ``servings`` says how many times each may be served before it is used up (default once).
    """

    def __init__(
        self,
        interactions: Sequence[Interaction],
        options: MatchOptions = _DEFAULT_OPTIONS,
        servings: Servings = _once,
    ) -> None:
        self.interactions = tuple(interactions)
        self.options = options
        self.uses = [0] * len(self.interactions)
        self._servings = servings
        self.allowed = [servings(it, n) for n, it in enumerate(self.interactions)]
        # Per matcher (not per process), bounded by bytes: see core/matching/bodycache.py.
        self._bodies = BodyCache(parse_body)
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
        self.allowed.append(self._servings(interaction, n))
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
        for n in candidates:  # a retry the faults' attempt= values allow for
            if self.uses[n] < self.allowed[n]:
                return self._use(n)
        if candidates and self.options.allow_repeats:
            return self._use(candidates[-1])
        if candidates:
            return Miss(
                describe_request(request),
                candidates[-1],
                (),
                used_up=True,
                host=host_of(request.url),
            )
        # Each query parsed once (the keys hold them), not once per pair compared.
        diffs = [
            diff_requests(
                i.request,
                request,
                self.options,
                parse=self._bodies.get,
                queries=(self._keys[n].query, key.query),
            )
            for n, i in enumerate(self.interactions)
        ]
        if not diffs:
            return Miss(describe_request(request), None, (), host=host_of(request.url))
        host = host_of(request.url)
        nearest = min(
            range(len(diffs)),
            key=lambda n: (
                _weight(diffs[n]),
                len(diffs[n]),
                host_of(self.interactions[n].request.url) != host,
                self.uses[n] > 0,
                n,
            ),
        )
        explained = explain_differences(
            self.interactions[nearest].request,
            request,
            self.options,
            parse=self._bodies.get,
            diffs=diffs[nearest],
        )
        return Miss(describe_request(request), nearest, explained, host=host)

    def _use(self, n: int) -> Hit:
        hit = Hit(n, self.uses[n])
        self.uses[n] += 1
        return hit

    def unused(self) -> tuple[int, ...]:
        """Indexes of recorded interactions never served."""
        return tuple(n for n, u in enumerate(self.uses) if u == 0)
