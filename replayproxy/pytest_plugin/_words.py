"""What a failing test says, in pytest's words: the miss explanation with the marker keyword
and the ``--replayproxy-...`` option (never a CLI flag pytest would reject), the cassette and
the command that re-records this one test; and the failure raised once, in place of the
client's own error (which carries the same explanation, in the 500 body's words)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from replayproxy._core.matching.explanation import Words, pytest_words

if TYPE_CHECKING:
    from replayproxy._harness.context import CassetteUse

__all__ = ["failure", "shown_path", "words_for"]


def shown_path(path: Path, config: pytest.Config) -> str:
    """``path`` relative to where pytest was started, when it is below it."""
    try:
        return os.path.relpath(path, config.invocation_params.dir)
    except ValueError:  # another drive
        return str(path)


def words_for(item: pytest.Item, use: CassetteUse) -> Words:
    """The words of the failure of ``item`` (its node id, its cassette)."""
    return pytest_words(item.nodeid, shown_path(use.cassette, item.config))


def failure(problems: str, error: BaseException) -> BaseException:
    """The test's failure, in place of ``error``. The client's answer to the explained 500
    repeats the explanation, so it is named by its type only; any other error (the test's own
    assertion) keeps its first line, which says what the test expected."""
    kind = type(error)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    if first and "replayproxy" not in text and first not in problems:
        name = f"{name}: {first}"
    return pytest.fail.Exception(f"{problems}\n(the test stopped at {name})", pytrace=False)
