"""use_cassette() as a decorator: a coroutine function is served while it runs, with a real
httpx.AsyncClient; the forms it cannot serve raise instead of passing silently."""

from __future__ import annotations

import asyncio
import inspect
import os
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy import use_cassette
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import CHAT_BODY, SSE_EVENTS, cassette, interaction

UPSTREAM = "https://api.openai.invalid"


@pytest.fixture
def pool() -> Iterator[HostPool]:
    """A pool of our own, closed after the test."""
    p = HostPool()
    yield p
    p.close()


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A cassette with one streamed chat completion."""
    path = tmp_path / "chat.cassette"
    store.save(path, cassette(interaction()))
    return path


async def _ask() -> bytes:
    """One streamed request to the base URL use_cassette() put in the environment."""
    async with (
        httpx.AsyncClient(base_url=os.environ["REPLAYPROXY_URL"]) as client,
        client.stream("POST", "/v1/chat/completions", content=CHAT_BODY) as r,
    ):
        assert r.status_code == 200
        return b"".join([chunk async for chunk in r.aiter_raw()])


def test_an_async_def_is_served_while_it_runs(recorded: Path, pool: HostPool) -> None:
    """The decorated coroutine function stays a coroutine function; the cassette is in use
    across its awaits (an AsyncClient created inside streams the recorded body), and only
    while it runs."""

    @use_cassette(recorded, upstream=UPSTREAM, speed=0, pool=pool)
    async def ask_later() -> bytes:
        await asyncio.sleep(0.01)  # the event loop runs other work: still inside the block
        return await _ask()

    assert inspect.iscoroutinefunction(ask_later)
    assert "REPLAYPROXY_URL" not in os.environ  # decorating opens nothing
    assert asyncio.run(ask_later()) == b"".join(SSE_EVENTS)
    assert "REPLAYPROXY_URL" not in os.environ
    with pytest.raises(KeyError):  # the same client code outside a block has no proxy
        asyncio.run(_ask())


def test_each_call_is_a_block_of_its_own(recorded: Path, pool: HostPool) -> None:
    """A decorated function serves the cassette afresh at each call (the recording is served
    once per block), sync and async alike; the wrapper keeps the name and the result."""

    @use_cassette(recorded, upstream=UPSTREAM, speed=0, pool=pool)
    def ask() -> bytes:
        url = os.environ["REPLAYPROXY_URL"] + "/v1/chat/completions"
        return httpx.post(url, content=CHAT_BODY).content

    @use_cassette(recorded, upstream=UPSTREAM, speed=0, pool=pool)
    async def ask_async() -> bytes:
        return await _ask()

    assert ask.__name__ == "ask" and ask_async.__name__ == "ask_async"
    body = b"".join(SSE_EVENTS)
    assert [ask(), ask(), asyncio.run(ask_async()), asyncio.run(ask_async())] == [body] * 4


def test_the_with_form_is_unchanged(recorded: Path, pool: HostPool) -> None:
    """``with use_cassette(...) as rp`` still yields the handle, and one use_cassette() value
    can be entered again after its block ended."""
    block = use_cassette(recorded, upstream=UPSTREAM, speed=0, pool=pool)
    for _ in range(2):
        with block as rp:
            assert httpx.post(rp.url + "/v1/chat/completions", content=CHAT_BODY).is_success
        assert rp.summary().served == 1


def _generator() -> Iterator[int]:
    yield 1


async def _async_generator() -> AsyncIterator[int]:
    yield 1


class _Tests:
    pass


@pytest.mark.parametrize(
    ("target", "words"),
    [
        (_generator, "cannot decorate a generator (_generator)"),
        (_async_generator, "cannot decorate an async generator (_async_generator)"),
        (_Tests, "not the class _Tests: decorate its methods"),
        ("not callable", "decorates a function, not 'not callable'"),
    ],
)
def test_forms_it_cannot_serve_raise_when_decorated(
    recorded: Path, target: object, words: str
) -> None:
    """A generator, an async generator, a class or a non-callable would run outside the block:
    decorating one raises TypeError saying so."""
    with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        use_cassette(recorded, upstream=UPSTREAM)(target)  # type: ignore[type-var]


def test_the_bare_decorator_raises(recorded: Path) -> None:
    """``@use_cassette`` without the cassette would take the function for the cassette: a
    TypeError at once, naming the right form."""
    with pytest.raises(TypeError, match=r"takes the cassette first: @use_cassette\('path"):
        use_cassette(_generator)  # type: ignore[arg-type]


def test_a_function_returning_a_coroutine_raises(recorded: Path, pool: HostPool) -> None:
    """A plain function that returns a coroutine (an ``async def`` hidden behind another
    decorator) would run it after the block: the call raises TypeError, and the coroutine is
    closed, not left to warn that it was never awaited."""

    @use_cassette(recorded, upstream=UPSTREAM, speed=0, pool=pool)
    def hidden() -> object:
        return _ask()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(TypeError, match="returned an awaitable: the use_cassette block"):
            hidden()
