"""``replayproxy replay CASSETTE``: serve a cassette offline.

Two modes, like ``record``:

- forward proxy (default): clients use ``HTTPS_PROXY`` and trust mitmproxy's CA (``ca-cert
  PATH`` line);
- base URL (``--upstream URL``): replayproxy stands in for ``URL``; clients point their base
  URL at ``listening on ...``. ``URL`` is contacted only to record.

A replay that never records needs no mitmproxy feature in either mode, so the replay engine
(:class:`~replayproxy._engine.server.ReplayServer`) serves it directly, as a forward proxy
answering CONNECT and TLS itself with mitmproxy's CA in ``--confdir``, or standing in for
``URL`` (docs/explanations/architecture.md, "The shells"); record modes run mitmproxy.
:func:`~replayproxy._core.replay.shell.choose_shell` chooses, and
:func:`~replayproxy._mitm.stack.build_stack` builds the mitmproxy stack (the replay addon and
the recorder with the replayer as its sink). Both shells share one
:class:`~replayproxy._engine.session.ReplaySession` (matching, faults, the summary) and the
same schedule executor, and print and exit alike.

With ``--record-mode none`` (the default) nothing is resolved or connected upstream in either
mode: the engine has no upstream connection to open. The other record modes
(:mod:`replayproxy._core.replay.record_mode`) forward what the cassette does not answer and
record it, in the same proxy (the :class:`Replayer` is the :class:`Recorder`'s sink).

On exit a one-line summary goes to stderr; with ``-- COMMAND`` an unmatched request makes the
exit status non-zero unless ``--allow-unmatched``,
and a command whose requests never reached the proxy (a client that ignores ``HTTPS_PROXY``)
gets a warning, or exit status 1 with ``--fail-if-bypassed``.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from replayproxy._cli._common import (
    RECORDING_FAILED_EXIT_STATUS,
    Listener,
    command_argument,
    confdir_option,
    listen_option,
    mitmproxy_warnings,
    serve,
    setup_logging,
    warn_if_exposed,
)
from replayproxy._cli._isolate import isolate_replay
from replayproxy._cli._options import replay_options
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.checks import check_upstream
from replayproxy._core.replay.options import cli_words, settings_from
from replayproxy._core.replay.shell import Shell, choose_shell
from replayproxy._engine.failsafe import ReplayFailure
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy._mitm.stack import build_stack
from replayproxy._mitm.trust import trust_bundle

__all__ = [
    "BYPASSED_EXIT_STATUS",
    "COMMANDS",
    "ERROR_EXIT_STATUS",
    "UNMATCHED_EXIT_STATUS",
    "bypass_hint",
    "finish",
    "replay",
    "start_replay",
]

UNMATCHED_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but a request was unmatched."""

BYPASSED_EXIT_STATUS = 1
"""Exit status with ``--fail-if-bypassed`` when no request reached the proxy."""

ERROR_EXIT_STATUS = 1
"""Exit status when the wrapped command passed but replay failed to answer a request (the
client got the explained 500, ``x-replayproxy-error: 1``); ``--allow-unmatched`` does not
change it."""


def _report_miss(miss: Miss) -> None:
    # Runs on the serving thread (mitmproxy's or the engine's); click.echo writes whole lines.
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
    "URL is contacted only to record (--record-mode other than none).",
)
@replay_options
@click.option(
    "--upstream-ca",
    metavar="PEM",
    help="When recording: also trust this CA certificate for upstream HTTPS.",
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
@click.option(
    "--isolate",
    is_flag=True,
    help="Linux: run the proxy and -- COMMAND in a new network namespace with only loopback, "
    "so nothing (C extensions, subprocesses, raw sockets) reaches the network. Record mode "
    "none only.",
)
@command_argument
def replay(
    cassette: str,
    listen: tuple[str, int],
    confdir: str,
    upstream: str | None,
    upstream_ca: str | None,
    fail_if_bypassed: bool,
    allow_unmatched: bool,
    isolate: bool,
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
    --allow-unmatched. If replay itself fails on a request, the client gets a 500
    (x-replayproxy-error: 1) naming the error, never the real upstream, and
    -- COMMAND exits 1. The other record modes (VCR.py's) forward what they do not
    replay to the real upstream, stream it to the client live and record it into
    CASSETTE: once (record only if CASSETTE does not exist), new_episodes (replay
    what matches, append the rest), all (record everything again, replacing it).
    A one-line summary goes to stderr on exit.

    With --isolate (Linux) the proxy and the command run in a new network namespace
    that has only loopback: nothing reaches the network, whatever the code.

    Each recording is served once per run: restart, or pass --allow-repeats, to ask
    again. With -- COMMAND the command runs with HTTPS_PROXY, the CA variables and
    NODE_USE_ENV_PROXY=1 set (forward mode) or REPLAYPROXY_URL (base-URL mode).
    """
    setup_logging()
    settings = settings_from(replay_values, where=cli_words)
    if isolate:  # first: the namespace must exist before any socket, thread or child does
        isolate_replay(command, settings.record_mode.value)
    session = ReplaySession.from_settings(
        cassette,
        settings,
        on_miss=_report_miss,
        on_warning=_warn,
        on_error=_report_failure,
    )
    if upstream is not None:
        upstream = check_upstream(upstream)
    warn_if_exposed(listen[0], listen[1], "replay proxy")
    with trust_bundle(upstream_ca) as bundle:
        server = start_replay(session, upstream=upstream, listen=listen, confdir=confdir, ca=bundle)
        try:
            with mitmproxy_warnings() if session.policy.records else contextlib.nullcontext():
                status = serve(server, forward=upstream is None, command=command)
        finally:
            server.stop()
            session.close()
    status, lines = finish(
        session,
        status,
        command=command,
        forward=upstream is None,
        allow_unmatched=allow_unmatched,
        fail_if_bypassed=fail_if_bypassed,
    )
    for line in lines:
        click.echo(line, err=True)
    sys.exit(status)


def start_replay(
    session: ReplaySession,
    *,
    upstream: str | None,
    listen: tuple[str, int],
    confdir: str,
    ca: str | None = None,
) -> Listener:
    """Start the shell that serves ``session`` (:func:`choose_shell`): mitmproxy when
    recording, else the replay engine alone, as a forward proxy with mitmproxy's CA in
    ``confdir`` (``upstream`` None) or standing in for ``upstream``. ``upstream`` is checked
    already; ``ca`` is the upstream trust bundle for recording."""
    if choose_shell(records=session.policy.records) is Shell.MITMPROXY:
        stack = build_stack(session, upstream, trusted_ca=ca, origin_process=True)
        proxy = stack.proxy(listen_host=listen[0], listen_port=listen[1], confdir=confdir)
        return proxy.start()
    tls = LeafCerts(confdir) if upstream is None else None
    return ReplayServer.for_session(
        session, host=listen[0], port=listen[1], upstream=upstream, tls=tls
    ).start()


def finish(
    session: ReplaySession,
    status: int,
    *,
    command: tuple[str, ...],
    forward: bool,
    allow_unmatched: bool = False,
    fail_if_bypassed: bool = False,
) -> tuple[int, list[str]]:
    """The run's exit status from the command's ``status`` and what the session saw, and the
    lines for stderr: the summary, replay errors, a bypass warning (see the module doc)."""
    summary = session.summary()
    lines = [summary.line(), *(f"error: recording failed: {error}" for error in session.errors)]
    reached = summary.served or summary.unmatched or summary.new or summary.errors or session.errors
    bypassed = bool(command) and bool(summary.recorded) and not reached
    if bypassed:
        label = "error" if fail_if_bypassed else "warning"
        lines.append(f"{label}: {bypass_hint(forward, summary.recorded)}")
    if command and status == 0 and summary.unmatched and not allow_unmatched:
        status = UNMATCHED_EXIT_STATUS
    if status == 0 and session.errors:  # a recording failed: lost, whether a command ran or not
        status = RECORDING_FAILED_EXIT_STATUS
    if bypassed and fail_if_bypassed and status == 0:
        status = BYPASSED_EXIT_STATUS
    if command and status == 0 and summary.errors:
        status = ERROR_EXIT_STATUS
    return status, lines


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
            "you); Java and others need their own settings (docs/guides/clients.md). "
            "--fail-if-bypassed makes this an error"
        )
    return first + (
        "point the client's base URL at $REPLAYPROXY_URL (docs/guides/clients.md). "
        "--fail-if-bypassed makes this an error"
    )


COMMANDS = [replay]
