"""Memory stays bounded: the matcher's parsed-body cache, slow readers, big request bodies.

The figures (RSS under load) are measured by ``benchmarks/bench_memory.py``; these tests check
the mechanisms that bound them, with sizes counted in bytes rather than timed.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from replayproxy.core.bodycache import DEFAULT_MAX_BYTES, BodyCache
from replayproxy.core.matching import Matcher, Miss
from replayproxy.core.model import Request
from tests.replay.helpers import CHAT_URL, interaction


@given(
    st.lists(st.binary(max_size=64), max_size=60),
    st.integers(1, 200),
    st.integers(1, 100),
)
def test_the_body_cache_never_keeps_more_than_its_byte_budget(
    bodies: list[bytes], max_bytes: int, max_item: int
) -> None:
    """Whatever is asked, the bodies kept total at most max_bytes, none above max_item, and
    get() always returns what parse() would."""
    calls: list[bytes] = []

    def parse(body: bytes) -> int:
        calls.append(body)
        return len(body) * 7

    cache = BodyCache(parse, max_bytes=max_bytes, max_item=max_item)
    for body in bodies:
        assert cache.get(body) == len(body) * 7
        assert cache.size <= max_bytes
        assert cache.size == sum(len(b) for b in cache._items)
        assert all(len(b) <= min(max_item, max_bytes) for b in cache._items)


def test_the_body_cache_parses_a_recent_body_once_and_forgets_the_oldest() -> None:
    """A body used again is not parsed again; the least recently used one goes first."""
    calls: list[bytes] = []

    def parse(body: bytes) -> bytes:
        calls.append(body)
        return body

    cache = BodyCache(parse, max_bytes=10, max_item=10)
    for body in (b"aaaa", b"bbbb", b"aaaa", b"cccc", b"aaaa", b"bbbb"):
        cache.get(body)
    assert calls == [b"aaaa", b"bbbb", b"cccc", b"bbbb"]


def test_unmatched_big_requests_keep_the_matchers_cache_within_budget() -> None:
    """500 unmatched requests of 100 KB each leave at most DEFAULT_MAX_BYTES of bodies cached
    (the old process-wide lru_cache kept 1024 bodies whatever their size)."""
    matcher = Matcher([interaction([b"data: 1\n\n"])])
    for n in range(500):
        body = json.dumps({"model": "m", "n": n, "pad": "x" * 100_000}).encode()
        assert isinstance(matcher.match(Request("POST", CHAT_URL, body=body)), Miss)
    assert matcher._bodies.size <= DEFAULT_MAX_BYTES
    assert len(matcher._bodies) < 100


def test_each_matcher_has_its_own_cache() -> None:
    """The cache belongs to a matcher (a session), not to the process."""
    a, b = Matcher([interaction([b"1"])]), Matcher([interaction([b"1"])])
    a.match(Request("POST", CHAT_URL, body=b'{"x": 1}'))
    assert b'{"x": 1}' in a._bodies._items
    assert b'{"x": 1}' not in b._bodies._items
