"""``replayproxy cassette repair``: salvage the intact interactions of a damaged cassette.

The work is :func:`replayproxy._store.repair`; this module reports it. Exit status: 0 repaired
(or nothing to repair), 1 with ``--dry-run`` when a repair is needed, 2 on an error (for
example a header too damaged to say how to read the rest).
"""

from __future__ import annotations

from pathlib import Path

import click

from replayproxy import _store as store
from replayproxy._errors import UsageError

__all__ = ["repair"]


def _describe(found: store.Repair) -> list[str]:
    lines = [
        f"  bytes {d.offset}-{d.end}: {d.reason} (skipped, {d.end - d.offset} bytes)"
        for d in found.damage
    ]
    if found.torn_at is not None:
        lines.append(f"  torn tail at byte {found.torn_at} (a record cut short; dropped)")
    return lines


@click.command(short_help="Salvage the intact interactions of a damaged cassette.")
@click.argument("path", metavar="CASSETTE", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Write the repaired cassette here and leave CASSETTE untouched.",
)
@click.option("--overwrite", is_flag=True, help="Replace FILE (-o) if it exists.")
@click.option(
    "--dry-run", is_flag=True, help="Only report what is damaged (exit 1 if a repair is needed)."
)
@click.pass_context
def repair(
    ctx: click.Context, path: str, output: str | None, overwrite: bool, dry_run: bool
) -> None:
    """Keep every intact interaction of CASSETTE and drop what is damaged or cut short.

    The repaired cassette replaces CASSETTE, which is kept as CASSETTE.bak (CASSETTE.bak.1, ...
    if that exists); with -o it is written to FILE instead. Stop any recorder appending to
    CASSETTE first. `record --append` refuses a damaged cassette; run this, then append.

    Exit status: 0 repaired (or nothing to repair), 1 with --dry-run when a repair is needed,
    2 on an error (e.g. a header too damaged to read anything).
    """
    if output is not None and Path(output).exists() and not overwrite and not dry_run:
        raise UsageError(f"{output}: already exists; pass --overwrite to replace it")
    found = store.repair(path, output=output, dry_run=dry_run)
    if not found.needed:
        click.echo(f"{path}: intact, {found.kept} interaction(s); nothing to repair")
        if output is not None and not dry_run:
            click.echo(f"copied to {output}")
        return
    skipped = len(found.damage)
    summary = (
        f"{path}: {found.kept} intact interaction(s) kept, {skipped} damaged range(s) "
        f"({found.skipped_bytes} bytes) skipped"
        + ("" if found.torn_at is None else ", torn tail dropped")
    )
    click.echo(summary)
    for line in _describe(found):
        click.echo(line)
    if dry_run:
        click.echo("dry run: nothing written")
        ctx.exit(1)
    if found.backup is not None:
        click.echo(f"repaired in place; the original is kept as {found.backup}")
    else:
        click.echo(f"repaired cassette written to {found.output}; {path} left untouched")
