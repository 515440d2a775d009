"""``replayproxy replay CASSETTE``: serve a cassette offline through mitmproxy.

Two modes, like ``record``:

- forward proxy (default): clients use ``HTTPS_PROXY`` and trust mitmproxy's CA
  (``ca-cert PATH`` line);
- base URL (``--upstream URL``): mitmproxy runs as a reverse proxy standing in for ``URL``;
  clients point their base URL at ``listening on ...``. ``URL`` is never contacted.

Nothing is resolved or connected upstream in either mode (``connection_strategy=lazy`` and
every request is answered by the cassette). On exit a one-line summary goes to stderr; with
``-- COMMAND`` an unmatched request makes the exit status non-zero unless
``--allow-unmatched``, and a command whose requests never reached the proxy (a client that
ignores ``HTTPS_PROXY``) gets a warning, or exit status 1 with ``--fail-if-bypassed``.
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
)
from replayproxy.core.matching import MatchOptions, Miss
from replayproxy.engine.session import ReplaySession
from replayproxy.mitm.addons.replayer import Replayer
from replayproxy.mitm.embedded import EmbeddedProxy

__all__ = ["BYPASSED_EXIT_STATUS", "COMMANDS", "UNMATCHED_EXIT_STATUS", "bypass_hint", "replay"]

UNMATCHED_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but a request was unmatched."""

BYPASSED_EXIT_STATUS = 1
"""Exit status with ``--fail-if-bypassed`` when no request reached the proxy."""


def _report_miss(miss: Miss) -> None:
    # Runs on the mitmproxy thread; click.echo writes whole lines.
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
    "--equivalence/--no-equivalence",
    default=True,
    show_default=True,
    help="Match requests the provider documents as identical (a string vs one text part, "
    'tool_choice "auto" with tools vs absent, ...; see docs/replay.md). '
    "--no-equivalence compares bodies exactly (key order still ignored).",
)
@click.option(
    "--fail-if-bypassed",
    is_flag=True,
    help="With -- COMMAND, fail the run (exit 1) when the command ended and no request "
    "reached the proxy although the cassette has interactions (a warning otherwise).",
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
    equivalence: bool,
    fail_if_bypassed: bool,
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

    Each recording is served once per run: restart, or pass --allow-repeats, to ask
    again. With -- COMMAND the command runs with HTTPS_PROXY, the CA variables and
    NODE_USE_ENV_PROXY=1 set (forward mode) or REPLAYPROXY_URL (base-URL mode).
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
            equivalence=equivalence,
        ),
        on_miss=_report_miss,
        on_warning=_warn,
    )
    mode = "regular" if upstream is None else f"reverse:{validate_upstream(upstream)}"
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
    bypassed = command and summary.recorded and not (summary.served or summary.unmatched)
    if bypassed:
        label = "error" if fail_if_bypassed else "warning"
        click.echo(f"{label}: {bypass_hint(upstream is None, summary.recorded)}", err=True)
    if command and status == 0 and summary.unmatched and not allow_unmatched:
        status = UNMATCHED_EXIT_STATUS
    if bypassed and fail_if_bypassed and status == 0:
        status = BYPASSED_EXIT_STATUS
    sys.exit(status)


def bypass_hint(forward: bool, recorded: int) -> str:
    """Why a wrapped command may have sent no request through the proxy, and what to do."""
    noun = "interaction" if recorded == 1 else "interactions"
    first = (
        "the command ended and no request reached replayproxy, though the cassette has "
        f"{recorded} {noun}: "
    )
    if forward:
        return first + (
            "its client probably ignores HTTPS_PROXY and went to the network directly. "
            "Node 20's fetch (the openai and anthropic Node SDKs) does: use undici's "
            "EnvHttpProxyAgent there, or Node 24 / 22.21+ (NODE_USE_ENV_PROXY=1 is set for "
            "you); Java and others need their own settings (docs/clients.md). "
            "--fail-if-bypassed makes this an error"
        )
    return first + (
        "point the client's base URL at $REPLAYPROXY_URL (docs/clients.md). "
        "--fail-if-bypassed makes this an error"
    )


COMMANDS = [replay]
