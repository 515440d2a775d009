"""``replayproxy cassette import-vcr / import-har / import-flows``: other tools' recordings.

Each file becomes a ``.cassette`` beside it (``test_x.yaml`` -> ``test_x.cassette``, the
pytest plugin's layout when the YAML files sit in pytest-recording's ``cassettes/{module}/``),
or ``-o OUT`` for one HAR or flow file. The work is in :mod:`replayproxy._core.importers`
(and :mod:`replayproxy._mitm.flows_import`); this module reads, writes (atomically, so a failed
import never leaves a partial cassette) and prints one line per file: what it holds and what
the import could not recover (also kept in the cassette, shown by ``cassette show``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import click

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.importers.build import ImportFailed
from replayproxy._core.importers.losses import lost, summary
from replayproxy._core.importers.timing import TimingModel, parse_timing
from replayproxy._errors import ReplayProxyError, UsageError

__all__ = ["COMMANDS", "import_notes"]

Importer = Callable[[bytes, str, TimingModel], Cassette]
_VCR_SUFFIXES = (".yaml", ".yml", ".json")
_SUFFIX = ".cassette"


def import_notes(cassette: Cassette) -> list[str]:
    """The lines ``cassette show`` adds for an imported cassette (empty for a recorded one)."""
    source = dict(cassette.meta).get("import.source")
    if source is None:
        return []
    lines = [f"imported from {source}: {summary(cassette)}"]
    lines += [f"  interaction {i} lost: {text}" for i, text in sorted(lost(cassette).items())]
    return lines


def _timing(ctx: click.Context, param: click.Parameter, value: str) -> TimingModel:
    return parse_timing(value)


timing_option = click.option(
    "--timing",
    default="zero",
    show_default=True,
    callback=_timing,
    metavar="MODEL",
    help="Offsets where the file kept no timing: zero, even:ms=N or tokens:rate=N "
    "(docs/guides/migrating-from-vcrpy.md).",
)


def _import_one(source: Path, target: Path, read: Importer, model: TimingModel, force: bool) -> str:
    """Import ``source`` into ``target``; the line to print. Raises a ReplayProxyError."""
    if target.exists() and not force:
        raise UsageError(f"{target}: already exists; pass --force to replace it")
    try:
        data = source.read_bytes()
    except OSError as e:
        raise UsageError(f"{source}: cannot read ({e.strerror})") from None
    cassette = read(data, str(source), model)
    store.save(target, cassette)
    return f"{source} -> {target}: {summary(cassette)}"


def _vcr_files(paths: tuple[str, ...]) -> Iterator[tuple[Path, bool]]:
    """Each file to import, and whether a directory walk found it (not named by the user)."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in _VCR_SUFFIXES and f.is_file())
            yield from ((f, True) for f in found)
        else:
            yield p, False


@click.command("import-vcr", short_help="Import VCR.py / pytest-recording cassettes.")
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@timing_option
@click.option("--force", is_flag=True, help="Replace .cassette files that exist.")
@click.pass_context
def import_vcr(
    ctx: click.Context, paths: tuple[str, ...], timing: TimingModel, force: bool
) -> None:
    """Import VCR.py / pytest-recording cassettes (YAML or JSON; files or directory trees).

    Each FILE.yaml becomes FILE.cassette beside it; an existing one is refused without
    --force. In a directory, files that are no VCR.py cassette (package.json, other fixtures)
    are skipped with a line each. Exit status 1 if any file failed (each is named; the others
    are still imported), or if nothing was a cassette.
    """
    from replayproxy._core.importers.vcr import NotACassette
    from replayproxy._core.importers.vcr import import_vcr as read

    failed = tried = 0
    files = list(_vcr_files(paths))
    if not files:
        raise UsageError(f"no .yaml, .yml or .json files in {' '.join(paths)}")
    for source, walked in files:
        try:
            click.echo(_import_one(source, source.with_suffix(_SUFFIX), read, timing, force))
            tried += 1
        except NotACassette as e:
            if not walked:  # named on the command line: the user meant it
                failed, tried = failed + 1, tried + 1
                click.echo(f"error: {e}", err=True)
            else:  # a package.json or another fixture beside the cassettes
                click.echo(f"skipped {e}", err=True)
        except ReplayProxyError as e:
            failed, tried = failed + 1, tried + 1
            click.echo(f"error: {e}", err=True)
    if failed:
        click.echo(f"{failed} of {tried} file(s) failed; nothing written for them", err=True)
        ctx.exit(1)
    if not tried:
        raise UsageError(f"no VCR.py cassettes in {' '.join(paths)} (every file was skipped)")


def _single(
    read: Importer, source: str, output: str | None, model: TimingModel, force: bool
) -> None:
    src = Path(source)
    target = Path(output) if output else src.with_suffix(_SUFFIX)
    try:
        click.echo(_import_one(src, target, read, model, force))
    except ImportFailed as e:
        raise UsageError(f"{e}; nothing written") from None


_output = click.option(
    "-o", "--output", type=click.Path(dir_okay=False), metavar="OUT",
    help="The cassette to write (default: FILE with the suffix .cassette).",
)  # fmt: skip
_force = click.option("--force", is_flag=True, help="Replace OUT if it exists.")


@click.command("import-har", short_help="Import a HAR file (browser devtools export).")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@_output
@timing_option
@_force
def import_har(source: str, output: str | None, timing: TimingModel, force: bool) -> None:
    """Import a HAR 1.2 file; its timings give the head and last-byte times of each entry."""
    from replayproxy._core.importers.har import import_har as read

    _single(read, source, output, timing, force)


@click.command("import-flows", short_help="Import a mitmproxy flow file (mitmdump -w).")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@_output
@timing_option
@_force
def import_flows(source: str, output: str | None, timing: TimingModel, force: bool) -> None:
    """Import a mitmproxy .flows file; its timestamps give the head and last-byte times."""
    from replayproxy._mitm.flows_import import import_flows as read

    _single(read, source, output, timing, force)


COMMANDS = [import_vcr, import_har, import_flows]
