"""Click options generated from the one option table (:mod:`replayproxy._core.replay.options`):
``replay`` takes the replay and record groups, ``record`` the record group, ``matrix`` the
replay group but the record mode and the faults (each cell replays, with its own faults).

Each value is checked as click reads it, by the table's parser, so a bad one is a one-line
``error: option --redact-header: ...`` naming the flag, before anything starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from replayproxy._core.replay.options import Front, Kind, OptionDef, cli_words, options_for
from replayproxy._core.replay.options import parse_value as _parse_value

__all__ = ["matrix_options", "record_options", "replay_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _checked(opt: OptionDef) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        _parse_value(opt, value, cli_words)  # raises the one-line UsageError
        return value

    return check


def _click_option(opt: OptionDef, default: Any) -> Callable[[F], F]:
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
            default=default,
            show_default=True,
            metavar=opt.metavar,
            **common,
        )
    kind: Any = click.Choice(opt.choices) if opt.choices else str
    return click.option(*names, type=kind, default=default, show_default=True, **common)


def _options_of(front: Front, defaults: Mapping[str, Any] | None = None) -> Callable[[F], F]:
    defaults = dict(defaults or {})
    taken = {o.name for o in options_for(front)}
    if set(defaults) - taken:  # a default for an option the command does not take: a typo
        raise ValueError(f"{front}: no option {sorted(set(defaults) - taken)[0]!r}")

    def decorate(f: F) -> F:
        for opt in reversed(options_for(front)):  # click lists options bottom up
            f = _click_option(opt, defaults.get(opt.name, opt.default))(f)
        return f

    return decorate


replay_options = _options_of(Front.REPLAY_CLI)
"""Add every option ``replay`` takes (``--record-mode``, ``--speed``, ``--fault``, matching,
and the record group: ``--redact-header``... for the record modes)."""

matrix_options = _options_of(Front.MATRIX_CLI, defaults={"speed": 0.0})
"""Add every option ``matrix`` takes: the replay group but ``--record-mode`` and ``--fault``;
``--speed`` is 0 by default (no recorded waits: a cell's own durations still run)."""

record_options = _options_of(Front.RECORD_CLI)
"""Add the record group (``--redact-header``, ``--redact-query``, ``--redact-body-field``,
``--no-redact``, ``--record-tls-failures``)."""
