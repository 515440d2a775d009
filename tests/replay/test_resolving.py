"""engine/resolving.py: which requests are resolved on the event loop (cheap) and which on a
worker thread (a fault to plan, a big cassette, a big body). Where it actually runs, through a
real ReplayServer, is tested in tests/reliability/test_fault_bounds.py."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest

from replayproxy._core.cassette.model import Cassette
from replayproxy._engine import resolving
from replayproxy._engine.session import ReplaySession, Served
from replayproxy.testing import interaction

IT = interaction([b"data: 1\n\n"])


def session(
    n: int = 1, *, faults: tuple[str, ...] = (), stored: tuple[str, ...] = ()
) -> ReplaySession:
    its = tuple(replace(IT, faults=stored if i == n - 1 else ()) for i in range(n))
    return ReplaySession(Cassette(interactions=its), faults=faults)


def test_a_small_fault_free_cassette_resolves_on_the_loop() -> None:
    """Up to INLINE_MAX_INTERACTIONS interactions, no fault, a body up to INLINE_MAX_BODY."""
    small = replace(IT.request, body=b"x" * resolving.INLINE_MAX_BODY)
    room = resolving.INLINE_MAX_HEAD - resolving.head_size(small)
    small = replace(small, url=small.url + "?q=" + "x" * (room - 3))
    assert resolving.head_size(small) == resolving.INLINE_MAX_HEAD
    assert resolving.resolves_inline(session(resolving.INLINE_MAX_INTERACTIONS), small)


@pytest.mark.parametrize(
    "slow",
    [
        pytest.param(lambda: (session(faults=("jitter:ms=1",)), IT.request), id="a-fault"),
        pytest.param(lambda: (session(stored=("jitter:ms=1",)), IT.request), id="a-stored-fault"),
        pytest.param(
            lambda: (session(resolving.INLINE_MAX_INTERACTIONS + 1), IT.request),
            id="a-big-cassette",
        ),
        pytest.param(
            lambda: (session(), replace(IT.request, body=b"x" * (resolving.INLINE_MAX_BODY + 1))),
            id="a-big-body",
        ),
        pytest.param(
            lambda: (session(), replace(IT.request, url=IT.request.url + "?" + "p=1&" * 512)),
            id="a-long-query",
        ),
        pytest.param(
            lambda: (session(), replace(IT.request, headers=((b"x-h", b"v" * 2048),))),
            id="big-headers",
        ),
    ],
)
def test_anything_that_can_be_slow_resolves_on_a_worker_thread(slow: object) -> None:
    """A fault (the session's or one stored in the cassette), more interactions than the
    bound, a bigger body, or a head (query, headers) past INLINE_MAX_HEAD: off the loop."""
    s, request = slow()  # type: ignore[operator]
    assert not resolving.resolves_inline(s, request)


def test_resolve_answers_the_same_on_either_side() -> None:
    """Both ways give the session's answer; the cheap one on the calling (loop) thread."""
    seen: list[int] = []

    def run(s: ReplaySession) -> object:
        real = s.resolve

        def spy(request: object) -> object:
            seen.append(threading.get_ident())
            return real(request)  # type: ignore[arg-type]

        s.resolve = spy  # type: ignore[method-assign, assignment]
        return asyncio.run(resolving.resolve(s, IT.request))

    assert isinstance(run(session()), Served)
    assert seen[-1] == threading.get_ident()
    assert isinstance(run(session(faults=("jitter:ms=1",))), Served)
    assert seen[-1] != threading.get_ident()
