"""``replayproxy replay CASSETTE``: serve a cassette offline.

Two modes, like ``record``:

- forward proxy (default): mitmproxy, clients use ``HTTPS_PROXY`` and trust mitmproxy's CA
  (``ca-cert PATH`` line);
- base URL (``--upstream URL``): replayproxy stands in for ``URL``; clients point their base
  URL at ``listening on ...``. ``URL`` is never contacted. No mitmproxy feature is needed
  there, so the replay engine (:class:`~replayproxy.engine.server.ReplayServer`) serves it
  directly, without the extra hop through mitmproxy (docs/replay.md, "Which shell serves").

:func:`needs_mitmproxy` is the one place that chooses. Both shells share one
:class:`~replayproxy.engine.session.ReplaySession` (matching, faults, the summary) and the
same schedule executor, and print and exit alike.

Nothing is resolved or connected upstream in either mode (``connection_strategy=lazy`` and
every request is answered by the cassette). On exit a one-line summary goes to stderr; with
``-- COMMAND`` an unmatched request makes the exit status non-zero unless
``--allow-unmatched``.
"""

from __future__ import annotations

import sys

import click

from replayproxy.cli._common import (
    Listener,
    command_argument,
    confdir_option,
    listen_option,
    serve,
    setup_logging,
    validate_upstream,
)
from replayproxy.core.matching import MatchOptions, Miss
from replayproxy.engine.server import ReplayServer
from replayproxy.engine.session import ReplaySession
from replayproxy.mitm.addons.replayer import Replayer
from replayproxy.mitm.embedded import EmbeddedProxy

__all__ = ["COMMANDS", "UNMATCHED_EXIT_STATUS", "needs_mitmproxy", "replay"]

UNMATCHED_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but a request was unmatched."""


def needs_mitmproxy(*, upstream: str | None) -> bool:
    """Whether this replay needs mitmproxy, or the replay engine can serve it by itself.

    Forward-proxy mode needs mitmproxy (CONNECT, TLS interception with its CA, HTTP/2).
    Base-URL mode is plain HTTP/1.1 that the engine speaks itself, at engine speed (measured:
    docs/replay.md, "Which shell serves"). A mode that must reach an upstream (record modes)
    needs mitmproxy too: add its option here, this is the one decision point.
    """
    return upstream is None


def _report_miss(miss: Miss) -> None:
    # Runs on the serving thread (mitmproxy's or the engine's); click.echo writes whole lines.
    first, *rest = miss.explain().removeprefix("replayproxy: ").splitlines()
    click.echo("\n".join([f"unmatched: {first}", *(f"  {line}" for line in rest)]), err=True)


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
    -- COMMAND they make the exit status 1 unless --allow-unmatched. A one-line
    summary goes to stderr on exit.
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
    )
    if upstream is not None:
        validate_upstream(upstream)
    server: Listener
    if needs_mitmproxy(upstream=upstream):
        mode = "regular" if upstream is None else f"reverse:{upstream}"
        server = EmbeddedProxy(
            [Replayer(session)],
            mode=mode,
            listen_host=listen[0],
            listen_port=listen[1],
            confdir=confdir,
            options={"connection_strategy": "lazy"},
        ).start()
    else:
        server = ReplayServer.for_session(
            session, host=listen[0], port=listen[1], upstream=upstream
        ).start()
    status = serve(server, forward=upstream is None, command=command)
    summary = session.summary()
    click.echo(summary.line(), err=True)
    if command and status == 0 and summary.unmatched and not allow_unmatched:
        status = UNMATCHED_EXIT_STATUS
    sys.exit(status)


COMMANDS = [replay]
