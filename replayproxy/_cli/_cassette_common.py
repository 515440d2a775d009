"""Helpers shared by the ``replayproxy cassette`` commands: loading with warnings on stderr,
choosing interactions, JSON and table output, and the common options."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

import click

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._errors import UsageError

__all__ = [
    "format_table",
    "interaction_option",
    "json_option",
    "load_cassette",
    "pick",
    "print_json",
]


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def load_cassette(path: str) -> Cassette:
    return store.load(path, on_warning=warn)


def pick(cassette: Cassette, indices: Sequence[int]) -> list[int]:
    count = len(cassette.interactions)
    for i in indices:
        if not 0 <= i < count:
            raise UsageError(f"no interaction {i} (the cassette has {count}: 0-{count - 1})")
    return list(indices) if indices else list(range(count))


def print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))


def format_table(rows: list[list[str]], right: Collection[int] = ()) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [
            cell.rjust(widths[c]) if c in right else cell.ljust(widths[c])
            for c, cell in enumerate(r)
        ]
        out.append("  ".join(cells).rstrip())
    return out


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
interaction_option = click.option(
    "-i",
    "--interaction",
    "indices",
    type=int,
    multiple=True,
    metavar="N",
    help="Only interaction N (0 = first); repeatable. Default: all.",
)
