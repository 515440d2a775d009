"""Click options generated from the one table of replay options
(:mod:`replayproxy.core.replay.options`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from replayproxy.core.replay.options import REPLAY_OPTIONS, Kind, OptionDef

__all__ = ["replay_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _click_option(opt: OptionDef) -> Callable[[F], F]:
    names = [opt.cli_flag, opt.name]
    if opt.kind is Kind.FLAG:
        return click.option(*names, is_flag=True, default=False, help=opt.help)
    if opt.kind is Kind.LIST:
        return click.option(*names, multiple=True, metavar=opt.metavar, help=opt.help)
    if opt.kind is Kind.NUMBER:
        return click.option(
            *names,
            type=float,
            default=opt.default,
            show_default=True,
            metavar=opt.metavar,
            help=opt.help,
        )
    kind: Any = click.Choice(opt.choices) if opt.choices else str
    return click.option(*names, type=kind, default=opt.default, show_default=True, help=opt.help)


def replay_options(f: F) -> F:
    """Add every replay option (``--record-mode``, ``--speed``, ``--fault``, matching...)."""
    for opt in reversed(REPLAY_OPTIONS):  # click lists options in decoration order, bottom up
        f = _click_option(opt)(f)
    return f
