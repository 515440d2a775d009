"""What ``use_cassette(...)`` returns: a ``with`` block and a decorator, for plain functions and
coroutine functions alike.

:func:`contextlib.contextmanager`'s own decorator form calls the function inside the block and
returns what it returns: for an ``async def`` that is a coroutine not yet started, so the block
is over before any of its code runs, and the cassette silently serves nothing. Here a coroutine
function gets an ``async def`` wrapper that holds the block while it is awaited, and the forms
that cannot hold a block around their code (generators, async generators, classes, a function
that returns an awaitable) raise :class:`TypeError` instead of passing silently.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Generic, ParamSpec, TypeVar

__all__ = ["Block", "block_or_decorator"]

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Block(Generic[T]):
    """A block that can be entered (``with ... as value``) or used as a decorator; each use
    opens a new block from ``open_block``."""

    def __init__(self, open_block: Callable[[], AbstractContextManager[T]], name: str) -> None:
        self._open = open_block
        self._name = name
        self._entered: list[AbstractContextManager[T]] = []

    def __enter__(self) -> T:
        block = self._open()
        value = block.__enter__()
        self._entered.append(block)
        return value

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        return self._entered.pop().__exit__(kind, error, traceback)

    def __call__(self, func: F) -> F:
        """``func`` run inside a block of its own at each call (awaited inside it for an
        ``async def``)."""
        self._refuse(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def run_awaited(*args: Any, **kwargs: Any) -> Any:
                with self._open():
                    return await func(*args, **kwargs)

            return run_awaited  # type: ignore[return-value]

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self._open():
                result = func(*args, **kwargs)
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()  # never run: no "was never awaited" warning on top
                raise TypeError(
                    f"{func.__qualname__} returned an awaitable: the {self._name} block ended "
                    "before it ran; decorate the async def itself"
                )
            return result

        return run  # type: ignore[return-value]

    def _refuse(self, func: object) -> None:
        """The forms a block cannot surround: raise rather than serve nothing."""
        if inspect.isclass(func):
            raise TypeError(
                f"@{self._name}(...) decorates functions and async functions, not the class "
                f"{func.__qualname__}: decorate its methods"
            )
        if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
            kind = "an async generator" if inspect.isasyncgenfunction(func) else "a generator"
            raise TypeError(
                f"@{self._name}(...) cannot decorate {kind} ({func.__qualname__}): its code "
                f"runs after the call returns; use 'with {self._name}(...)' inside it"
            )
        if not callable(func):
            raise TypeError(f"@{self._name}(...) decorates a function, not {func!r}")


def block_or_decorator(
    func: Callable[P, Iterator[T]],
) -> Callable[P, Block[T]]:
    """Like :func:`contextlib.contextmanager`, but what the call returns is a :class:`Block`:
    a decorator for coroutine functions too. Its first argument must not be a function (the
    bare ``@use_cassette`` form, which would take the function for the cassette)."""
    opener = contextlib.contextmanager(func)

    @functools.wraps(func)
    def make(*args: P.args, **kwargs: P.kwargs) -> Block[T]:
        if args and callable(args[0]) and not isinstance(args[0], str | os.PathLike):
            raise TypeError(
                f"{func.__name__} takes the cassette first: @{func.__name__}('path.cassette'), "
                f"not @{func.__name__}"
            )
        return Block(lambda: opener(*args, **kwargs), func.__name__)

    return make
