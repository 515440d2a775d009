"""``replayproxy check``: check cassettes (or a raw captured body) against each provider's
stream contract, or against an application's own contract (``--contract FILE``). Exit status 0
when no errors (warnings allowed unless ``--strict``), 1 when a stream breaks a rule, 2 on bad
usage (via the CLI group), 3 when the ``--contract`` file cannot be used (unreadable, malformed,
or beyond the limits of ``core/check/contract.py``): a CI job can tell a broken stream from a
broken contract.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from replayproxy._core.check import PROVIDERS, RULES, Violation, request_options
from replayproxy._core.check.contract import Contract
from replayproxy._core.providers import detect
from replayproxy._errors import UsageError
from replayproxy.checking import InteractionReport, check_cassette, check_stream, load_contract

__all__ = ["BAD_CONTRACT", "COMMANDS", "check_command"]

BAD_CONTRACT = 3
"""The exit status for a ``--contract`` file that cannot be used (not for a broken contract)."""


def _violation_json(v: Violation) -> dict[str, Any]:
    return {
        "rule": v.rule,
        "severity": v.severity,
        "event": v.event,
        "offset": v.offset,
        "message": v.message,
    }


def _report_json(r: InteractionReport) -> dict[str, Any]:
    return {
        "index": r.index,
        "method": r.method,
        "url": r.url,
        "provider": r.provider,
        "dialect": r.dialect,
        "notes": list(r.notes),
        "skipped": r.skipped,
        "violations": [_violation_json(v) for v in r.violations],
    }


def _summary(violations: list[Violation]) -> str:
    errors = sum(v.severity == "error" for v in violations)
    warnings = len(violations) - errors
    if not violations:
        return "ok"
    return f"{errors} error(s), {warnings} warning(s)"


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _provider_told(url: str | None, content_type: str | None) -> None:
    """Raise, in the command line's words, when nothing tells --stdin's provider (the API's
    own message names its keyword arguments)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media and detect(url, content_type, websocket=False) is None:
        raise UsageError(
            f"--content-type {content_type!r} is not an event stream (text/event-stream, "
            "application/vnd.amazon.eventstream or application/x-ndjson): nothing to check; "
            f"pass --provider (one of {', '.join(PROVIDERS)}) to check the body anyway"
        )
    if not url and not media:
        raise UsageError(
            "cannot tell which provider's contract applies to --stdin: pass --provider (one "
            f"of {', '.join(PROVIDERS)}), --contract FILE, or the request --url"
        )


def _list_rules() -> None:
    # The reference: what each rule requires, then (indented) the client behaviour behind its
    # grade; docs/reference/rules.md lists the same rules without the second line.
    for rule in RULES.values():
        click.echo(f"{rule.id:40} {rule.severity:8} {rule.summary}")
        click.echo(f"    {rule.why}")


@click.command("check")
@click.argument("cassettes", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--stdin", "from_stdin", is_flag=True, help="Check one raw response body read from stdin."
)
@click.option(
    "--provider", help=f"Contract to check against: {', '.join(PROVIDERS)} (default: detected)."
)
@click.option(
    "--contract",
    "contract_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Check against this application stream contract (TOML, or JSON by .json suffix) "
    "instead of a provider's; see docs/guides/checker.md.",
)
@click.option(
    "-i",
    "--interaction",
    "selected",
    type=click.IntRange(min=0),
    multiple=True,
    metavar="N",
    help="Check only interaction N of each cassette (repeatable; see `cassette show`).",
)
@click.option(
    "--path",
    "path_glob",
    metavar="GLOB",
    help="Check only interactions whose request path matches this fnmatch glob, as the fault "
    "selector path= does (e.g. '/chat*').",
)
@click.option("--url", help="With --stdin: the request URL, to detect the provider.")
@click.option("--content-type", help="With --stdin: the response Content-Type.")
@click.option(
    "--content-encoding",
    help="With --stdin: the response Content-Encoding (gzip, deflate, br, zstd), when the body "
    "is still encoded.",
)
@click.option(
    "--request",
    "request_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --stdin: the JSON request body (for stream_options.include_usage).",
)
@click.option(
    "--fault",
    "faults",
    multiple=True,
    metavar="SPEC",
    help="Check cassettes as replayed with this fault (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit status 1).")
@click.option(
    "--list-rules",
    is_flag=True,
    help="List every rule: id, severity, what it requires and why clients care; then exit.",
)
def check_command(
    cassettes: tuple[Path, ...],
    from_stdin: bool,
    provider: str | None,
    contract_file: Path | None,
    selected: tuple[int, ...],
    path_glob: str | None,
    url: str | None,
    content_type: str | None,
    content_encoding: str | None,
    request_file: Path | None,
    faults: tuple[str, ...],
    as_json: bool,
    strict: bool,
    list_rules: bool,
) -> None:
    """Check recorded streams against each provider's stream contract, or your own
    streaming API against a contract file.

    \b
    replayproxy check CASSETTE...                       every interaction, provider detected
    replayproxy check --stdin --provider anthropic < body.sse
    replayproxy check --stdin --contract turn.toml < app-stream.sse
    replayproxy check --contract turn.toml app.cassette --fault truncate:events=3
    replayproxy check --contract turn.toml app.cassette --path '/chat*' -i 2

    Exit status: 0 no errors, 1 a stream breaks a rule (or a warning, with --strict),
    2 bad usage, 3 the --contract file cannot be used.
    """  # fmt: skip
    if list_rules:
        _list_rules()
        return
    if from_stdin == bool(cassettes):
        raise UsageError("give CASSETTE paths, or --stdin (not both)")
    if contract_file is not None and provider is not None:
        raise UsageError("give --provider or --contract, not both")
    if from_stdin and (selected or path_glob is not None):
        raise UsageError("-i and --path select interactions of CASSETTE paths, not --stdin")
    if content_encoding is not None and not from_stdin:
        raise UsageError(
            "--content-encoding is for --stdin; a cassette's interactions carry their own"
        )
    contract = _contract(contract_file) if contract_file is not None else None
    if from_stdin:
        if provider is None and contract is None:
            _provider_told(url, content_type)
        body = sys.stdin.buffer.read()
        request = request_options(request_file.read_bytes()) if request_file else None
        report = check_stream(
            body,
            provider=provider,
            contract=contract,
            url=url,
            content_type=content_type,
            request=request,
            content_encoding=content_encoding,
        )
        violations = list(report.violations)
        if as_json:
            doc = {
                "provider": report.provider,
                "dialect": report.dialect,
                "notes": list(report.notes),
                "violations": [_violation_json(v) for v in violations],
            }
            click.echo(json.dumps(doc))
        else:
            click.echo(f"dialect: {report.dialect}")
            for note in report.notes:
                click.echo(f"note: {note}")
            for v in violations:
                click.echo(str(v))
            click.echo(_summary(violations))
        sys.exit(_status(violations, strict))
    everything: list[Violation] = []
    out: list[dict[str, Any]] = []
    checked = 0
    for path in cassettes:
        reports = check_cassette(
            path,
            provider=provider,
            faults=faults,
            on_warning=_warn,
            contract=contract,
            interactions=selected or None,
            path=path_glob,
        )
        checked += len(reports)
        out.append({"path": str(path), "interactions": [_report_json(r) for r in reports]})
        for r in reports:
            everything.extend(r.violations)
        if not as_json:
            _print_cassette(path, reports)
    if as_json:
        click.echo(json.dumps({"cassettes": out}, indent=2))
    if not checked and (selected or path_glob is not None):
        what = [f"-i {i}" for i in selected]
        if path_glob is not None:
            what.append(f"--path {path_glob!r}")
        where = ", ".join(map(str, cassettes))
        raise UsageError(f"{' '.join(what)} selects no interaction of {where}")
    sys.exit(_status(everything, strict))


def _contract(path: Path) -> Contract:
    """The ``--contract`` file, or exit :data:`BAD_CONTRACT` with its one-line error."""
    try:
        return load_contract(path)
    except UsageError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(BAD_CONTRACT)


def _print_cassette(path: Path, reports: list[InteractionReport]) -> None:
    click.echo(str(path))
    for r in reports:
        state = f"skipped ({r.skipped})" if r.skipped else _summary(list(r.violations))
        dialect = f"  dialect: {r.dialect}" if r.dialect else ""
        click.echo(f"  #{r.index} {r.method} {r.url}  {r.provider or '-'}  {state}{dialect}")
        for note in r.notes:
            click.echo(f"      note: {note}")
        for v in r.violations:
            click.echo(f"      {v}")


def _status(violations: list[Violation], strict: bool) -> int:
    failing = [v for v in violations if v.severity == "error" or strict]
    return 1 if failing else 0


COMMANDS = [check_command]
