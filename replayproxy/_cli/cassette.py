"""``replayproxy cassette ...``: inspect, export/import, edit, diff and plot cassettes.

Read commands (``show``, ``frames``, ``events``, ``diff``) print a table, or JSON with
``--json``. ``export``/``import`` convert to and from the text form (docs/reference/text-format.md),
``textconv`` is ``export`` for git's diff driver, ``edit`` applies the operations of
:mod:`replayproxy._core.tools.edit` (docs/guides/editing.md), ``plot`` draws an SVG timeline,
``repair`` salvages a damaged cassette (docs/reference/cassette-format.md §5). All the work is in
the pure core; this module only reads and writes files and formats output.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import click

from replayproxy import _store as store
from replayproxy._cli._cassette_common import (
    format_table,
    interaction_option,
    json_option,
    load_cassette,
    pick,
    print_json,
)
from replayproxy._cli.cassette_edit import edit
from replayproxy._cli.cassette_import import COMMANDS as IMPORT_COMMANDS
from replayproxy._cli.cassette_import import import_notes
from replayproxy._cli.cassette_repair import repair
from replayproxy._core.cassette import textform, textload
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.importers.losses import lost
from replayproxy._core.tools.diff import SPLIT_AT, Timing
from replayproxy._core.tools.diff import diff as diff_cassettes
from replayproxy._core.tools.event_diff import EventDifference, diff_events
from replayproxy._core.tools.inspect import event_rows, format_ns, frame_rows, interaction_rows
from replayproxy._core.tools.plot import plot as plot_svg
from replayproxy._core.websocket.inspect import message_rows
from replayproxy._core.wire.events import NotAStreamError
from replayproxy._errors import CassetteError, UsageError

__all__ = ["COMMANDS", "cassette"]


@click.group("cassette")
def cassette() -> None:
    """Inspect, export/import, edit, diff, plot and repair cassettes."""


@cassette.command(short_help="One line per interaction.")
@click.argument("path", metavar="CASSETTE")
@json_option
def show(path: str, as_json: bool) -> None:
    """One line per interaction: method, URL, status, HTTP version, frames, bytes, timing,
    ending, faults."""
    c = load_cassette(path)
    rows = interaction_rows(c)
    if as_json:  # what an import lost, per interaction (null: nothing, or recorded)
        losses = lost(c)
        print_json([{**dataclasses.asdict(r), "lost": losses.get(r.index)} for r in rows])
        return
    columns = ["#", "METHOD", "URL", "STATUS", "HTTP", "FRAMES", "BYTES", "TTFB", "DURATION"]
    table = [[*columns, "END", "FAULTS"]]
    for r in rows:
        end = r.end + (f" ({r.end_message})" if r.end_message else "")
        table.append(
            [
                str(r.index),
                r.method,
                r.url,
                "-" if r.status is None else str(r.status),
                r.http_version.removeprefix("HTTP/"),
                str(r.frames),
                str(r.bytes),
                "-" if r.ttfb_ns is None else format_ns(r.ttfb_ns),
                format_ns(r.duration_ns),
                end,
                " ".join(r.faults) or "-",
            ]
        )
    for line in format_table(table, right={0, 3, 5, 6, 7, 8}):
        click.echo(line)
    for line in import_notes(c):
        click.echo(line)


def _heading(cassette: Cassette, i: int, extra: str) -> str:
    x = cassette.interactions[i]
    return f"interaction {i}: {x.request.method} {x.request.url} ({extra})"


@cassette.command(short_help="Each frame: offset, gap, size, bytes.")
@click.argument("path", metavar="CASSETTE")
@interaction_option
@json_option
def frames(path: str, indices: tuple[int, ...], as_json: bool) -> None:
    """Each frame: offset, gap from the previous one, size, and its bytes (escaped)."""
    c = load_cassette(path)
    chosen = pick(c, indices)
    if as_json:
        print_json(
            [
                {
                    "interaction": i,
                    "frames": [
                        {**dataclasses.asdict(r), "base64": base64.b64encode(f.data).decode()}
                        for r, f in zip(
                            frame_rows(c.interactions[i]), c.interactions[i].frames, strict=True
                        )
                    ],
                }
                for i in chosen
            ]
        )
        return
    for n, i in enumerate(chosen):
        rows = frame_rows(c.interactions[i])
        if n:
            click.echo()
        total = sum(r.size for r in rows)
        click.echo(_heading(c, i, f"{len(rows)} frames, {total} bytes"))
        table = [["#", "OFFSET", "GAP", "START", "SIZE", "BYTES"]]
        for r in rows:
            table.append(
                [
                    str(r.index),
                    format_ns(r.offset_ns),
                    "+" + format_ns(r.gap_ns),
                    str(r.start),
                    str(r.size),
                    r.text,
                ]
            )
        if rows:
            click.echo(
                "\n".join("  " + line for line in format_table(table, right={0, 1, 2, 3, 4}))
            )


@cassette.command(short_help="SSE/event-stream events, or WebSocket messages.")
@click.argument("path", metavar="CASSETTE")
@interaction_option
@json_option
def events(path: str, indices: tuple[int, ...], as_json: bool) -> None:
    """SSE / event-stream events with their byte spans and frames; │ marks a frame boundary
    that falls inside an event. For a WebSocket session: every message, who sent it, when,
    and AFTER: for a server message the delay since the client message it answers (what
    replay reproduces)."""
    c = load_cassette(path)
    out: list[dict[str, Any]] = []
    for n, i in enumerate(pick(c, indices)):
        if c.interactions[i].websocket is not None:
            out.append(_websocket_events(c, i, n, as_json))
            continue
        try:
            rows = event_rows(c.interactions[i])
        except NotAStreamError as e:
            out.append({"interaction": i, "error": str(e), "events": []})
            if not as_json:
                click.echo(("\n" if n else "") + _heading(c, i, f"no events: {e}"))
            continue
        body = b"".join(f.data for f in c.interactions[i].frames)
        out.append({"interaction": i, "events": [
            {**dataclasses.asdict(r), "base64": base64.b64encode(body[r.start : r.end]).decode()}
            for r in rows
        ]})  # fmt: skip
        if as_json:
            continue
        split = sum(1 for r in rows if r.cuts)
        click.echo(("\n" if n else "") + _heading(c, i, f"{len(rows)} events, {split} split"))
        table = [["#", "SPAN", "FRAMES", "AT", "NAME", "BYTES (│ = frame boundary)"]]
        for r in rows:
            fr = (
                str(r.first_frame)
                if r.first_frame == r.last_frame
                else (f"{r.first_frame}-{r.last_frame}")
            )
            table.append(
                [str(r.index), f"{r.start}-{r.end}", fr, format_ns(r.offset_ns), r.name, r.text]
            )
        if rows:
            click.echo("\n".join("  " + line for line in format_table(table, right={0, 3})))
    if as_json:
        print_json(out)


def _websocket_events(c: Cassette, i: int, n: int, as_json: bool) -> dict[str, Any]:
    """The messages of a WebSocket session, printed (unless ``as_json``) and as JSON."""
    rows = message_rows(c.interactions[i])
    messages = c.interactions[i].websocket.messages  # type: ignore[union-attr]
    if not as_json:
        click.echo(("\n" if n else "") + _heading(c, i, f"WebSocket, {len(rows)} messages"))
        table = [["#", "AT", "AFTER", "FROM", "KIND", "SIZE", "NAME", "BYTES"]]
        for r in rows:
            kind = r.kind + (f" {len(r.fragments)} frames" if r.fragments else "")
            table.append([str(r.index), format_ns(r.offset_ns), "+" + format_ns(r.after_ns),
                          r.sender, kind, str(r.size), r.name, r.text])  # fmt: skip
        if rows:
            click.echo("\n".join("  " + line for line in format_table(table, right={0, 1, 2, 5})))
    return {"interaction": i, "websocket": [
        {**dataclasses.asdict(r), "base64": base64.b64encode(m.data).decode()}
        for r, m in zip(rows, messages, strict=True)
    ]}  # fmt: skip


@cassette.command(short_help="Print the cassette as text.")
@click.argument("path", metavar="CASSETTE")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
def export(path: str, output: str | None) -> None:
    """Print the cassette in its text form (docs/reference/text-format.md)."""
    text = textform.dumps(load_cassette(path))
    if output is None:
        sys.stdout.write(text)
    else:
        _write_text(Path(output), text, private=True)


def _write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Write ``text``; ``private``: a new file is readable by its owner only (0600), as
    cassettes are (an export holds the same prompts and answers)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
        with open(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    except OSError as e:
        raise CassetteError(f"cannot write ({e.strerror})", path=path) from None


@cassette.command("import", short_help="Build a cassette from its text form.")
@click.argument("text_path", metavar="TEXT")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="CASSETTE",
    help="The cassette to write.",
)
@click.option("--overwrite", is_flag=True, help="Replace OUTPUT if it exists.")
def import_(text_path: str, output: str, overwrite: bool) -> None:
    """Build a cassette from its text form (TEXT may be - for stdin)."""
    try:
        path = Path(text_path)
        text = sys.stdin.read() if text_path == "-" else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{text_path}: no such file") from None
    except UnicodeDecodeError as e:
        raise CassetteError(f"not UTF-8 text (byte {e.start})", path=text_path) from None
    except OSError as e:
        raise UsageError(f"{text_path}: cannot read ({e.strerror})") from None
    try:
        c = textload.loads(text)
    except CassetteError as e:
        raise e.with_path(text_path) from None
    if Path(output).exists() and not overwrite:
        raise UsageError(f"{output}: already exists; pass --overwrite to replace it")
    store.save(output, c)


@cassette.command(short_help="Text form for git diff (textconv driver).")
@click.argument("path", metavar="FILE")
def textconv(path: str) -> None:
    """The text form, for git's diff driver: git config diff.replayproxy.textconv
    "replayproxy cassette textconv" and *.cassette diff=replayproxy in .gitattributes."""
    sys.stdout.write(textform.dumps(load_cassette(path)))


@cassette.command(short_help="Differences between two cassettes.")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--ignore-timing",
    is_flag=True,
    help="Leave times out (time to first byte, frame times, end time) and report frames "
    "split differently over the same bytes as one line: two recordings of one stream.",
)
@click.option(
    "--time-tolerance",
    type=click.FloatRange(min=0),
    default=0.0,
    metavar="MS",
    help="Treat times within MS milliseconds as equal.",
)
@click.option(
    "--events",
    "by_events",
    is_flag=True,
    help="Compare the events by meaning: types and JSON fields, without ids, created times, "
    "fingerprints, timing, frames, hosts or headers; one line per changed field.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="POINTER",
    help="With --events: also leave out this JSON pointer in every event (* = any key/item).",
)
@json_option
@click.pass_context
def diff(
    ctx: click.Context,
    a: str,
    b: str,
    ignore_timing: bool,
    time_tolerance: float,
    by_events: bool,
    ignore: tuple[str, ...],
    as_json: bool,
) -> None:
    """Interaction, frame and event differences between cassettes A and B (exit 1 if any).

    Two recordings of one stream differ in timing on every frame: --ignore-timing (or
    --time-tolerance MS) shows what else differs, --events what they mean differently.
    """
    if ignore and not by_events:
        raise UsageError("--ignore needs --events")
    if by_events:
        found = diff_events(load_cassette(a), load_cassette(b), ignore)
    else:
        timing = Timing(tolerance_ns=round(time_tolerance * 1_000_000), ignore=ignore_timing)
        found = diff_cassettes(load_cassette(a), load_cassette(b), timing)
    if as_json:
        print_json([dataclasses.asdict(d) for d in found])
    for d in found if not as_json else ():
        ia = "-" if d.a_index is None else str(d.a_index)
        ib = "-" if d.b_index is None else str(d.b_index)
        where = "cassette" if d.level == "cassette" else f"interaction {ia}/{ib} {d.label}"
        if d.level == "event" and by_events:  # one line: the field and both values
            click.echo(f"{where}: {EventDifference(d.what, d.a, d.b).line}")
        elif d.level == "frame" and d.what.endswith(SPLIT_AT):  # one line per re-split place
            click.echo(f"{where}: {d.what} {d.a} in A, {d.b} in B")
        elif d.a or d.b:
            click.echo(f"{where}: {d.what}:\n  - {d.a or '(absent)'}\n  + {d.b or '(absent)'}")
        else:
            click.echo(f"{where}: {d.what}")
    if found:
        ctx.exit(1)


@cassette.command(short_help="Draw an SVG timeline.")
@click.argument("path", metavar="CASSETTE")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE.svg",
    help="The SVG file to write.",
)
@interaction_option
@click.option("--title", help="Title above the plot (default: the cassette's file name).")
def plot(path: str, output: str, indices: tuple[int, ...], title: str | None) -> None:
    """Draw a timeline of the interactions (frames, head, ending) as an SVG picture."""
    c = load_cassette(path)
    svg = plot_svg(c, pick(c, indices), title or Path(path).name)
    _write_text(Path(output), svg)


cassette.add_command(edit)
cassette.add_command(repair)
for _command in IMPORT_COMMANDS:
    cassette.add_command(_command)

COMMANDS = [cassette]
