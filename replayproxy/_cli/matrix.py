"""``replayproxy matrix CASSETTE --set cuts -- COMMAND``: run a command under every cell of the
fault matrix and report which it survives.

For each cell (:mod:`replayproxy._core.matrix`: a fault spec and its outcome class), the cell's
faults are resolved on the cassette (positions per interaction), a fresh replay is started with
them exactly as ``replayproxy replay CASSETTE [--upstream URL] -- COMMAND`` would start it
(:func:`replayproxy._cli.replay.start_replay`, the same environment from
:func:`~replayproxy._cli._common.serve`), COMMAND runs to its end or to ``--timeout`` (then its
process group is ended), and its exit status, judged by replay's rules
(:func:`replayproxy._cli.replay.finish`: an unmatched request fails a passing command), is held
against the ``--expect`` of the cell's class. One line per cell, a summary by class, and with
``--report`` the JSON report and its Markdown beside it.
"""

from __future__ import annotations

import functools
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from replayproxy import _store as store
from replayproxy._cli._common import (
    command_argument,
    confdir_option,
    listen_option,
    serve,
    setup_logging,
    warn_if_exposed,
)
from replayproxy._cli._options import matrix_options
from replayproxy._cli.replay import finish, start_replay
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.matrix import OUTCOMES, SETS, Cell, CellResult, MatrixReport, cells, resolve
from replayproxy._core.matrix.expect import Expect, expectations
from replayproxy._core.replay.checks import check_upstream
from replayproxy._core.replay.options import cli_words, settings_from
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import UsageError

__all__ = ["COMMANDS", "INTERRUPTED_EXIT_STATUS", "MISSED_EXIT_STATUS", "matrix"]

MISSED_EXIT_STATUS = 1
"""Exit status when a cell's command missed its expectation."""

INTERRUPTED_EXIT_STATUS = 130
"""Exit status after SIGINT/SIGTERM: the cells run so far are printed and reported."""


@dataclass(frozen=True, slots=True)
class _Run:
    """How one cell's command ended."""

    status: int | None  # None: killed at the timeout
    duration: float
    output: str
    notes: tuple[str, ...]  # unmatched requests, replay errors, the bypass warning


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@dataclass(kw_only=True)
class _Matrix:
    """One ``matrix`` run: runs a cell, prints its row and returns its result."""

    cassette: Cassette
    command: tuple[str, ...]
    upstream: str | None
    listen: tuple[str, int]
    confdir: str
    timeout: float
    values: dict[str, Any]
    expect: dict[str, Expect]
    verbose: bool
    allow_unmatched: bool
    width: int
    warned: set[str] = field(default_factory=set)
    """Notes printed already (the bypass warning is printed once per run)."""

    def header(self) -> str:
        return f"{'cell':<{self.width}}  {'outcome':<14}  {'exit':>7}  {'time':>7}  result"

    def _row(self, cell: Cell, shown: str, seconds: str, verdict: str) -> str:
        return f"{cell.id:<{self.width}}  {cell.outcome:<14}  {shown:>7}  {seconds:>7}  {verdict}"

    def run(self, cell: Cell) -> CellResult:
        """Run ``cell`` (or skip it), print its row, its output if asked, and its notes."""
        test = shlex.join(self.command)
        resolved = resolve(cell, self.cassette)
        if resolved.skipped is not None:
            click.echo(self._row(cell, "-", "", f"skip: {resolved.skipped}"))
            return CellResult(
                test, cell.id, cell.spec, cell.set, cell.outcome, None, 0.0, resolved.skipped
            )
        run = self._replay(resolved.faults)
        expect = self.expect[cell.outcome]
        passed, verdict = _verdict(expect, run)
        click.echo(self._row(cell, _shown(run.status), f"{run.duration:.2f}s", verdict))
        output = run.output.rstrip().splitlines()
        for line in output if self.verbose else [] if passed else output[-3:]:
            click.echo(f"    | {line}")
        for note in run.notes:
            if note not in self.warned or not note.startswith("warning: the command ended"):
                click.echo(f"    {note}", err=True)
            self.warned.add(note)
        failure = "" if passed else _failure(expect, run, self.timeout)
        return CellResult(
            test, cell.id, cell.spec, cell.set, cell.outcome, passed, round(run.duration, 3),
            failure,
        )  # fmt: skip

    def _replay(self, faults: Sequence[str]) -> _Run:
        """A fresh replay with ``faults``, the command run against it, and how it ended."""
        notes: list[str] = []
        session = ReplaySession.from_settings(
            self.cassette,
            settings_from({**self.values, "faults": tuple(faults)}),
            on_miss=lambda miss: notes.append(
                "unmatched: " + miss.explain().removeprefix("replayproxy: ").splitlines()[0]
            ),
            on_warning=lambda message: notes.append(f"warning: {message}"),
            on_error=lambda failure: notes.append(f"error: {failure.one_line()}"),
        )
        forward = self.upstream is None
        started = time.monotonic()
        status: int | None
        with tempfile.TemporaryFile() as out:
            try:
                server = start_replay(
                    session, upstream=self.upstream, listen=self.listen, confdir=self.confdir
                )
                try:
                    status = serve(
                        server, forward=forward, command=self.command, announce=False,
                        timeout=self.timeout, output=out,
                    )  # fmt: skip
                except subprocess.TimeoutExpired:
                    status = None
            finally:
                session.close()
            duration = time.monotonic() - started
            out.seek(0)
            output = out.read().decode("utf-8", "replace")
        if status is not None:
            status, lines = finish(
                session, status, command=self.command, forward=forward,
                allow_unmatched=self.allow_unmatched,
            )  # fmt: skip
            notes += [line for line in lines[1:] if line.startswith(("error:", "warning:"))]
        return _Run(status, duration, output, tuple(notes))


def _shown(status: int | None) -> str:
    return "timeout" if status is None else str(status)


def _verdict(expect: Expect, run: _Run) -> tuple[bool, str]:
    passed = expect.met(run.status)
    if passed:
        text = "pass" if expect.text == "any" else f"pass ({expect.text})"
    else:
        text = f"FAIL: expected {expect.text}, got {_shown(run.status)}"
    unmatched = sum(note.startswith("unmatched:") for note in run.notes)
    return passed, text + (f" [{unmatched} unmatched]" if unmatched else "")


def _failure(expect: Expect, run: _Run, timeout: float) -> str:
    if run.status is None:
        return f"expected {expect.text}, killed at the --timeout of {timeout:g} s"
    detail = _last_line(run.output) or (run.notes[0] if run.notes else "")
    return f"expected {expect.text}, got exit status {run.status}" + (
        f": {detail}" if detail else ""
    )


def _selection(sets: tuple[str, ...], specs: tuple[str, ...]) -> tuple[Cell, ...]:
    return cells([*sets, *specs] or ["all"])


def _check_report(path: str | None) -> None:
    if path is not None and Path(path).suffix == ".md":
        raise UsageError(f"--report {path}: give the JSON path; the Markdown goes beside it")


def _write_report(path: str, report: MatrixReport) -> None:
    target = Path(path)
    target.write_text(report.to_json(), encoding="utf-8")
    target.with_suffix(".md").write_text(report.to_markdown(), encoding="utf-8")


def _summary(results: list[CellResult]) -> str:
    parts = []
    for o in OUTCOMES:
        ran = [r for r in results if r.outcome == o and r.passed is not None]
        if ran:
            parts.append(f"{o} {sum(bool(r.passed) for r in ran)}/{len(ran)}")
    skipped = sum(r.passed is None for r in results)
    failed = sum(r.passed is False for r in results)
    by_class = ", ".join(parts) or "no cell ran"
    return f"{len(results)} cells: {failed} failed, {skipped} skipped; passed by class: {by_class}"


@click.command("matrix")
@click.argument("cassette", type=click.Path(dir_okay=True))
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="SET",
    help=f"Run the cells of this set ({', '.join(SETS)}; comma-separated or repeated). "
    "Default: all, unless --fault-cell is given.",
)
@click.option(
    "--fault-cell",
    "specs",
    multiple=True,
    metavar="SPEC",
    help="Also run this fault spec as a cell (outcome class from the fault registry; "
    "events=middle, events=before-terminal, event=content, code=overloaded are resolved "
    "per interaction). Repeatable.",
)
@click.option(
    "--upstream",
    metavar="URL",
    help="Base-URL mode, as in replay: COMMAND reaches the replay at $REPLAYPROXY_URL. "
    "Without it, forward-proxy mode (HTTPS_PROXY and the CA variables are set).",
)
@click.option(
    "--expect",
    "expects",
    multiple=True,
    metavar="CLASS=0|nonzero|N|any",
    help=f"The exit status COMMAND must have under the cells of an outcome class "
    f"({', '.join(OUTCOMES)}). Repeatable. Default: same=0, the other classes any.",
)
@click.option(
    "--report",
    metavar="PATH",
    help="Write the JSON report to PATH and its Markdown to PATH with the suffix .md.",
)
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="End COMMAND (its process group) after SECONDS in one cell and record a timeout, "
    "which meets no expectation but any.",
)
@functools.partial(listen_option, default="127.0.0.1:0")
@confdir_option
@matrix_options
@click.option(
    "--allow-unmatched",
    is_flag=True,
    help="Do not fail a cell's command because of unmatched requests (a client's retries).",
)
@click.option("-v", "--verbose", is_flag=True, help="Print every cell's command output.")
@command_argument
def matrix(
    cassette: str,
    sets: tuple[str, ...],
    specs: tuple[str, ...],
    upstream: str | None,
    expects: tuple[str, ...],
    report: str | None,
    timeout: float,
    listen: tuple[str, int],
    confdir: str,
    allow_unmatched: bool,
    verbose: bool,
    command: tuple[str, ...],
    **replay_values: Any,
) -> None:
    """Run COMMAND once per fault-matrix cell, each against a fresh replay of CASSETTE
    with that cell's faults, and print which cells it survives.

    \b
    replayproxy matrix session.cassette --set cuts --expect incomplete=nonzero -- pytest -x
    replayproxy matrix session.cassette --upstream https://api.openai.com \\
        --set cuts,errors --report matrix.json -- ./client.sh

    Each cell replays at --speed 0 by default (no recorded waits; a fault's own
    durations, like a stall, still take their time). COMMAND runs in the same mode
    and environment as under `replayproxy replay CASSETTE [--upstream URL] --
    COMMAND`, and its exit status is judged by replay's rules (an unmatched request
    fails a passing command). Cells a cassette cannot take (no event stream, too
    few events) are skipped with the reason. Exit status: 0 if every cell met its
    --expect, 1 otherwise, 2 for a usage error.
    """
    setup_logging()
    if not command:
        raise UsageError("give the command to run after --: replayproxy matrix CASSETTE -- CMD")
    if timeout <= 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {timeout:g}")
    expect = expectations(expects)
    _check_report(report)
    chosen = _selection(sets, specs)
    values = dict(replay_values)
    settings_from(values, where=cli_words)  # a bad value is an error before any cell runs
    if upstream is not None:
        upstream = check_upstream(upstream)
    warn_if_exposed(listen[0], listen[1], "replay proxy")
    loaded = store.load(cassette)
    runner = _Matrix(
        cassette=loaded, command=command, upstream=upstream, listen=listen, confdir=confdir,
        timeout=timeout, values=values, expect=expect, verbose=verbose,
        allow_unmatched=allow_unmatched, width=max(len(c.id) for c in chosen),
    )  # fmt: skip
    click.echo(runner.header())
    results: list[CellResult] = []
    interrupted = False
    try:
        for cell in chosen:
            results.append(runner.run(cell))
    except KeyboardInterrupt:
        interrupted = True
        click.echo(f"interrupted after {len(results)} of {len(chosen)} cells", err=True)
    made = MatrixReport.of(results, [c.id for c in chosen])
    click.echo(_summary(results))
    if report is not None:
        _write_report(report, made)
        click.echo(f"report: {report} and {Path(report).with_suffix('.md')}")
    if interrupted:
        sys.exit(INTERRUPTED_EXIT_STATUS)
    sys.exit(MISSED_EXIT_STATUS if any(r.passed is False for r in results) else 0)


COMMANDS = [matrix]
