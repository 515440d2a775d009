"""The ``replayproxy`` command line: a click group whose subcommands live one per module.

Each subcommand module (``record``, ``replay``, ``cassette``, ``check``) owns its options and
calls into the library; this module only assembles the group and turns every
:class:`~replayproxy._errors.ReplayProxyError` into a one-line ``error: ...`` and exit status 2.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from replayproxy import __version__
from replayproxy._cli import addon_path, cassette, check, matrix, record, replay
from replayproxy._errors import ReplayProxyError

__all__ = ["cli", "main"]


class _Group(click.Group):
    """A group that reports replayproxy errors as one line instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ReplayProxyError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="replayproxy")
def cli() -> None:
    """Record and replay streaming LLM API responses byte for byte, with their timing.

    \b
    replayproxy record CASSETTE   record real traffic through mitmproxy
    replayproxy replay CASSETTE   serve a cassette offline, with faults if asked
    replayproxy cassette ...      inspect, import, edit, diff and plot cassettes
    replayproxy check CASSETTE    check streams against each provider's contract
    replayproxy matrix CASSETTE   run a command under every fault of the fault matrix
    """


# Every subcommand module owns its `COMMANDS`; none imports this one, so plain imports work.
for _module in (record, replay, cassette, check, matrix, addon_path):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="replayproxy")
