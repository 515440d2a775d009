"""Click options generated from the one option table (:mod:`replayproxy._core.replay.options`):
``replay`` takes the replay and record groups, ``record`` the record group.

Each value is checked as click reads it, by the table's parser, so a bad one is a one-line
``error: option --redact-header: ...`` naming the flag, before anything starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from replayproxy._core.replay.options import Front, Kind, OptionDef, cli_words, options_for
from replayproxy._core.replay.options import parse_value as _parse_value

__all__ = ["record_options", "replay_options", "replay_options_named"]

F = TypeVar("F", bound=Callable[..., Any])


def _checked(opt: OptionDef) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        _parse_value(opt, value, cli_words)  # raises the one-line UsageError
        return value

    return check


def _click_option(opt: OptionDef) -> Callable[[F], F]:
    names = [opt.cli_flag, opt.name]
    common: dict[str, Any] = {"help": opt.help, "callback": _checked(opt)}
    if opt.kind is Kind.FLAG:
        return click.option(*names, is_flag=True, default=False, **common)
    if opt.kind is Kind.LIST:
        return click.option(*names, multiple=True, metavar=opt.metavar, **common)
    if opt.kind is Kind.NUMBER:
        return click.option(
            *names,
            type=float,
            default=opt.default,
            show_default=True,
            metavar=opt.metavar,
            **common,
        )
    kind: Any = click.Choice(opt.choices) if opt.choices else str
    return click.option(*names, type=kind, default=opt.default, show_default=True, **common)


def _options_of(front: Front, names: tuple[str, ...] = ()) -> Callable[[F], F]:
    def decorate(f: F) -> F:
        chosen = [o for o in options_for(front) if not names or o.name in names]
        for opt in reversed(chosen):  # click lists options bottom up
            f = _click_option(opt)(f)
        return f

    return decorate


def replay_options_named(*names: str) -> Callable[[F], F]:
    """Add only the replay options ``names`` (``matrix`` takes the matching ones)."""
    return _options_of(Front.REPLAY_CLI, names)


replay_options = _options_of(Front.REPLAY_CLI)
"""Add every option ``replay`` takes (``--record-mode``, ``--speed``, ``--fault``, matching,
and the record group: ``--redact-header``... for the record modes)."""

record_options = _options_of(Front.RECORD_CLI)
"""Add the record group (``--redact-header``, ``--redact-query``, ``--redact-body-field``,
``--no-redact``, ``--record-tls-failures``)."""
