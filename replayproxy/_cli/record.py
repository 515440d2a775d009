"""``replayproxy record CASSETTE``: record real traffic through mitmproxy into a cassette.

Forward mode (default): clients use ``HTTPS_PROXY=http://HOST:PORT`` and trust mitmproxy's CA
(printed as ``ca-cert PATH``). Reverse mode (``--upstream URL``): clients use
``http://HOST:PORT`` as their base URL and requests go to ``URL``. With ``-- COMMAND``, the
command runs with all of that in its environment (see ``cli/_common.child_env``) and the
recording stops when it exits, with its exit status.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from replayproxy._cli._common import (
    NOTHING_RECORDED_EXIT_STATUS,
    RECORDING_FAILED_EXIT_STATUS,
    command_argument,
    confdir_option,
    listen_option,
    mitmproxy_warnings,
    serve,
    setup_logging,
    warn_if_exposed,
)
from replayproxy._cli._options import record_options
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._core.replay.checks import check_upstream
from replayproxy._core.replay.options import RECORD_OPTIONS, Kind, cli_words, settings_from
from replayproxy._errors import UsageError
from replayproxy._mitm.trust import trust_bundle

__all__ = ["COMMANDS", "record"]


@click.command("record", context_settings={"show_default": True})
@click.argument("cassette", type=click.Path(dir_okay=False))
@click.option(
    "--upstream",
    metavar="URL",
    help="Reverse proxy to URL (http or https); clients use http://HOST:PORT as base URL. "
    "Without it: a forward proxy (HTTPS_PROXY + mitmproxy's CA).",
)
@click.option(
    "--upstream-ca",
    metavar="PEM",
    help="Also trust this CA certificate for upstream HTTPS (private or test servers).",
)
@click.option(
    "--insecure-upstream",
    is_flag=True,
    help="Do not verify upstream HTTPS certificates at all.",
)
@listen_option
@confdir_option
# The write mode (CassetteWrite): new without either flag.
@click.option("--append", is_flag=True, help="Add to an existing cassette.")
@click.option("--overwrite", is_flag=True, help="Replace an existing cassette.")
@record_options
@command_argument
def record(
    cassette: str,
    upstream: str | None,
    upstream_ca: str | None,
    insecure_upstream: bool,
    listen: tuple[str, int],
    confdir: str,
    append: bool,
    overwrite: bool,
    command: Sequence[str],
    **record_values: Any,
) -> None:
    """Record every HTTP(S) exchange through the proxy into CASSETTE.

    \b
    replayproxy record session.cassette -- python my_app.py
    replayproxy record --upstream https://api.openai.com session.cassette
    replayproxy record --listen 127.0.0.1:0 session.cassette   # then SIGINT to stop

    Prints "listening on http://HOST:PORT" (and "ca-cert PATH" in forward mode) once ready.
    Each finished exchange is on disk at once; SIGINT/SIGTERM stop cleanly.
    """
    from replayproxy._mitm.addons.recorder import Recorder
    from replayproxy._mitm.embedded import EmbeddedProxy
    from replayproxy._mitm.stack import proxy_mode

    if append and overwrite:
        raise UsageError("--append and --overwrite exclude each other")
    if upstream_ca is not None and insecure_upstream:
        raise UsageError("--upstream-ca and --insecure-upstream exclude each other")
    settings_from(record_values, where=cli_words)  # options that contradict each other
    forward = upstream is None
    mode = proxy_mode(None if upstream is None else check_upstream(upstream))
    setup_logging()
    warn_if_exposed(listen[0], listen[1], "recording proxy (it forwards to the network)")
    recorder = Recorder()
    write = CassetteWrite.NEW
    if append or overwrite:
        write = CassetteWrite.APPEND if append else CassetteWrite.OVERWRITE
    # The record group, under the recorder addon's names for it (mitmproxy wants lists).
    recording = {
        o.mitm_name: list(record_values[o.name]) if o.kind is Kind.LIST else record_values[o.name]
        for o in RECORD_OPTIONS
    }
    with trust_bundle(upstream_ca) as bundle:
        options: dict[str, Any] = {
            "replayproxy_record": cassette,
            "replayproxy_write_mode": write.value,
            **recording,
            # Reverse mode connects upstream per request (lazy), so an unreachable upstream
            # gives the client mitmproxy's 502 and a recorded no_response, rather than a
            # dropped connection. Forward mode keeps eager: the client's ALPN then mirrors the
            # upstream's (docs/contributing/mitmproxy-internals.md §4).
            "connection_strategy": "eager" if forward else "lazy",
        }
        if bundle is not None:
            options["ssl_verify_upstream_trusted_ca"] = bundle
        if insecure_upstream:
            options["ssl_insecure"] = True
        proxy = EmbeddedProxy(
            [recorder],
            mode=mode,
            listen_host=listen[0],
            listen_port=listen[1],
            confdir=confdir,
            options=options,
        ).start()
        if recorder.failure is not None:
            # The cassette cannot be opened (its error line is out already): serve nothing.
            proxy.stop()
            sys.exit(2)
        try:
            # Entered only now: startup errors are already one line from start().
            with mitmproxy_warnings():
                status = serve(proxy, forward=forward, command=command)
        finally:
            proxy.stop()
            noun = "interaction" if recorder.count == 1 else "interactions"
            click.echo(f"{recorder.count} {noun} recorded to {cassette}", err=True)
    sys.exit(_exit_status(recorder, status, cassette, forward=forward, command=command))


def _exit_status(
    recorder: Any, status: int, cassette: str, *, forward: bool, command: Sequence[str]
) -> int:
    """The command's status, else :data:`RECORDING_FAILED_EXIT_STATUS` when a write failed
    (its line was printed as it happened) or :data:`NOTHING_RECORDED_EXIT_STATUS` with a
    line saying why nothing was recorded."""
    if status != 0:
        return status
    if recorder.failure is not None:
        click.echo(f"error: recording failed: {recorder.failure}", err=True)
        return RECORDING_FAILED_EXIT_STATUS
    if recorder.count == 0:
        why = "no request reached the proxy"
        if recorder.requests:
            why = f"{recorder.requests} request(s) reached the proxy, none recorded (see above)"
        elif command:
            why += " while the command ran" + (
                " (does its client ignore HTTPS_PROXY? docs/guides/clients.md)"
                if forward
                else " (point its base URL at $REPLAYPROXY_URL)"
            )
        click.echo(f"error: nothing recorded to {cassette}: {why}", err=True)
        return NOTHING_RECORDED_EXIT_STATUS
    return status


COMMANDS = [record]
