"""``replayproxy replay CASSETTE``: serve a cassette offline through mitmproxy.

Two modes, like ``record``:

- forward proxy (default): clients use ``HTTPS_PROXY`` and trust mitmproxy's CA
  (``ca-cert PATH`` line);
- base URL (``--upstream URL``): mitmproxy runs as a reverse proxy standing in for ``URL``;
  clients point their base URL at ``listening on ...``. ``URL`` is never contacted.

Nothing is resolved or connected upstream in either mode (``connection_strategy=lazy`` and
every request is answered by the cassette). On exit a one-line summary goes to stderr; with
``-- COMMAND`` an unmatched request makes the exit status non-zero unless
``--allow-unmatched``.
"""

from __future__ import annotations

import sys

import click

from replayproxy.cli._common import (
    command_argument,
    confdir_option,
    listen_option,
    serve,
    setup_logging,
    validate_upstream,
    warn_if_exposed,
)
from replayproxy.core.matching import MatchOptions, Miss
from replayproxy.engine.failsafe import ReplayFailure
from replayproxy.engine.session import ReplaySession
from replayproxy.mitm.addons.replayer import Replayer
from replayproxy.mitm.embedded import EmbeddedProxy

__all__ = ["COMMANDS", "ERROR_EXIT_STATUS", "UNMATCHED_EXIT_STATUS", "replay"]

UNMATCHED_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but a request was unmatched."""

ERROR_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but replay failed to answer a request (the
client got the explained 500, ``x-replayproxy-error: 1``); ``--allow-unmatched`` does not
change it."""


def _report_miss(miss: Miss) -> None:
    # Runs on the mitmproxy thread; click.echo writes whole lines.
    first, *rest = miss.explain().removeprefix("replayproxy: ").splitlines()
    click.echo("\n".join([f"unmatched: {first}", *(f"  {line}" for line in rest)]), err=True)


def _report_failure(failure: ReplayFailure) -> None:
    click.echo(f"error: {failure.one_line()}", err=True)


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


@click.command("replay")
@click.argument("cassette", type=click.Path(dir_okay=True))
@listen_option
@confdir_option
@click.option(
    "--upstream",
    metavar="URL",
    help="Base-URL mode: stand in for URL (e.g. https://api.openai.com) as a reverse proxy. "
    "URL is never contacted.",
)
@click.option(
    "--speed",
    type=float,
    default=1.0,
    show_default=True,
    metavar="FACTOR",
    help="1 = as recorded, 2 = twice as fast, 0 = no waiting.",
)
@click.option(
    "--fault",
    "faults",
    multiple=True,
    metavar="SPEC",
    help="Inject a fault into every response (NAME:PARAM=VALUE,...). Repeatable.",
)
@click.option(
    "--ignore-query",
    multiple=True,
    metavar="NAME",
    help="Ignore this query parameter when matching. Repeatable.",
)
@click.option(
    "--ignore-body-field",
    multiple=True,
    metavar="POINTER",
    help="Ignore this JSON body field (JSON pointer, e.g. /stream_options) when matching.",
)
@click.option(
    "--allow-repeats",
    is_flag=True,
    help="Once the matching interactions are used up, serve the last one again.",
)
@click.option(
    "--match-host", is_flag=True, help="Also require the host to match (ignored by default)."
)
@click.option(
    "--allow-unmatched",
    is_flag=True,
    help="With -- COMMAND, do not fail the run because of unmatched requests.",
)
@command_argument
def replay(
    cassette: str,
    listen: tuple[str, int],
    confdir: str,
    upstream: str | None,
    speed: float,
    faults: tuple[str, ...],
    ignore_query: tuple[str, ...],
    ignore_body_field: tuple[str, ...],
    allow_repeats: bool,
    match_host: bool,
    allow_unmatched: bool,
    command: tuple[str, ...],
) -> None:
    """Serve CASSETTE offline, with its recorded timing and byte splits.

    \b
    replayproxy replay cassettes/openai-chat-text.cassette -- pytest
    replayproxy replay --upstream https://api.openai.com --listen 127.0.0.1:0 CASSETTE

    Nothing is ever resolved or contacted upstream. Unmatched requests get a 500
    (x-replayproxy-unmatched: 1) explaining the nearest recorded request; with
    -- COMMAND they make the exit status 1 unless --allow-unmatched. If replay
    itself fails on a request, the client gets a 500 (x-replayproxy-error: 1)
    naming the error, never the real upstream, and -- COMMAND exits 1. A
    one-line summary goes to stderr on exit.
    """
    setup_logging()
    session = ReplaySession(
        cassette,
        speed=speed,
        faults=faults,
        options=MatchOptions(
            ignore_query=frozenset(ignore_query),
            ignore_body_fields=ignore_body_field,
            match_host=match_host,
            allow_repeats=allow_repeats,
        ),
        on_miss=_report_miss,
        on_warning=_warn,
        on_error=_report_failure,
    )
    mode = "regular" if upstream is None else f"reverse:{validate_upstream(upstream)}"
    warn_if_exposed(listen[0], listen[1], "replay proxy")
    proxy = EmbeddedProxy(
        [Replayer(session)],
        mode=mode,
        listen_host=listen[0],
        listen_port=listen[1],
        confdir=confdir,
        options={"connection_strategy": "lazy"},
    ).start()
    status = serve(proxy, forward=upstream is None, command=command)
    summary = session.summary()
    click.echo(summary.line(), err=True)
    if command and status == 0 and summary.unmatched and not allow_unmatched:
        status = UNMATCHED_EXIT_STATUS
    if command and status == 0 and summary.errors:
        status = ERROR_EXIT_STATUS
    sys.exit(status)


COMMANDS = [replay]
