"""``replayproxy addon-path record|replay``: print the path of a standalone mitmproxy script.

For use with mitmproxy's own tools, in an environment where replayproxy is importable::

    mitmdump -s "$(replayproxy addon-path record)" --set replayproxy_record=out.cassette
"""

from __future__ import annotations

from pathlib import Path

import click

from replayproxy._errors import UsageError

__all__ = ["COMMANDS", "SCRIPTS", "addon_path", "script_path"]

SCRIPTS = {"record": "mitmdump_record.py", "replay": "mitmdump_replay.py"}


def script_path(name: str) -> Path:
    """Absolute path of the ``mitmdump -s`` script for ``name`` (``record`` or ``replay``)."""
    import replayproxy._mitm.addons

    if name not in SCRIPTS:
        raise UsageError(f"unknown addon {name!r}; expected one of: {', '.join(SCRIPTS)}")
    path = Path(replayproxy._mitm.addons.__file__).resolve().parent / SCRIPTS[name]
    if not path.is_file():
        raise UsageError(f"the {name} script is missing from this installation: {path}")
    return path


@click.command("addon-path")
@click.argument("name", type=click.Choice(sorted(SCRIPTS)))
def addon_path(name: str) -> None:
    """Print the path of the mitmdump/mitmweb script for NAME (record or replay).

    \b
    mitmdump -s "$(replayproxy addon-path record)" --set replayproxy_record=out.cassette
    mitmdump -s "$(replayproxy addon-path replay)" --set replayproxy_replay=out.cassette
    """
    click.echo(str(script_path(name)))


COMMANDS = [addon_path]
