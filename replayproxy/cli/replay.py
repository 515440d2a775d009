"""``replayproxy replay CASSETTE``: serve a cassette offline through mitmproxy.

Two modes, like ``record``:

- forward proxy (default): clients use ``HTTPS_PROXY`` and trust mitmproxy's CA
  (``ca-cert PATH`` line);
- base URL (``--upstream URL``): mitmproxy runs as a reverse proxy standing in for ``URL``;
  clients point their base URL at ``listening on ...``. ``URL`` is contacted only to record.

With ``--record-mode none`` (the default) nothing is resolved or connected upstream in either
mode (``connection_strategy=lazy`` and every request is answered by the cassette). The other
record modes (:mod:`replayproxy.core.record_mode`) forward what the cassette does not answer and
record it, in the same proxy (the :class:`Replayer` is the :class:`Recorder`'s sink).

On exit a one-line summary goes to stderr; with ``-- COMMAND`` an unmatched request makes the
exit status non-zero unless ``--allow-unmatched``.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from replayproxy.cli._common import (
    command_argument,
    confdir_option,
    listen_option,
    mitmproxy_warnings,
    serve,
    setup_logging,
    validate_upstream,
)
from replayproxy.cli._options import replay_options
from replayproxy.core.matching import Miss
from replayproxy.core.options import settings_from
from replayproxy.engine.session import ReplaySession
from replayproxy.mitm.addons.replayer import Replayer
from replayproxy.mitm.embedded import EmbeddedProxy
from replayproxy.mitm.trust import trust_bundle

__all__ = ["COMMANDS", "UNMATCHED_EXIT_STATUS", "replay"]

UNMATCHED_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but a request was unmatched."""


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
    "URL is contacted only to record (--record-mode other than none).",
)
@replay_options
@click.option(
    "--upstream-ca",
    metavar="PEM",
    help="When recording: also trust this CA certificate for upstream HTTPS.",
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
    upstream_ca: str | None,
    allow_unmatched: bool,
    command: tuple[str, ...],
    **replay_values: Any,
) -> None:
    """Serve CASSETTE offline, with its recorded timing and byte splits.

    \b
    replayproxy replay cassettes/openai-chat-text.cassette -- pytest
    replayproxy replay --upstream https://api.openai.com --listen 127.0.0.1:0 CASSETTE
    replayproxy replay --record-mode new_episodes session.cassette -- pytest

    With --record-mode none (the default) nothing is ever resolved or contacted
    upstream. Unmatched requests get a 500 (x-replayproxy-unmatched: 1) explaining
    the nearest recorded request; with -- COMMAND they make the exit status 1 unless
    --allow-unmatched. The other record modes (VCR.py's) forward what they do not
    replay to the real upstream, stream it to the client live and record it into
    CASSETTE: once (record only if CASSETTE does not exist), new_episodes (replay
    what matches, append the rest), all (record everything again, replacing it).
    A one-line summary goes to stderr on exit.
    """
    setup_logging()
    settings = settings_from(replay_values)
    session = ReplaySession.from_settings(
        cassette, settings, on_miss=_report_miss, on_warning=_warn
    )
    mode = "regular" if upstream is None else f"reverse:{validate_upstream(upstream)}"
    with trust_bundle(upstream_ca) as bundle:
        options: dict[str, Any] = {"connection_strategy": "lazy"}
        if bundle is not None:
            options["ssl_verify_upstream_trusted_ca"] = bundle
        replayer = Replayer(session)
        addons: list[object] = [replayer]
        if session.policy.records:
            from replayproxy.mitm.addons.recorder import Recorder

            addons.append(Recorder(sink=replayer))
        proxy = EmbeddedProxy(
            addons,
            mode=mode,
            listen_host=listen[0],
            listen_port=listen[1],
            confdir=confdir,
            options=options,
        ).start()
        try:
            with mitmproxy_warnings() if session.policy.records else contextlib.nullcontext():
                status = serve(proxy, forward=upstream is None, command=command)
        finally:
            proxy.stop()
            session.close()
    summary = session.summary()
    click.echo(summary.line(), err=True)
    for error in session.errors:
        click.echo(f"error: {error}", err=True)
    if command and status == 0 and summary.unmatched and not allow_unmatched:
        status = UNMATCHED_EXIT_STATUS
    if command and status == 0 and session.errors:
        status = UNMATCHED_EXIT_STATUS
    sys.exit(status)


COMMANDS = [replay]
