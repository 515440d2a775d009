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

from replayproxy.cli._common import (
    command_argument,
    confdir_option,
    listen_option,
    mitmproxy_warnings,
    serve,
    setup_logging,
    validate_upstream,
    warn_if_exposed,
)
from replayproxy.errors import UsageError
from replayproxy.mitm.trust import trust_bundle

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
@click.option(
    "--record-tls-failures",
    is_flag=True,
    help="Also record requests that failed because the upstream certificate was not "
    "trusted (as no_response); by default they are reported with the --upstream-ca hint.",
)
@listen_option
@confdir_option
@click.option("--append", is_flag=True, help="Add to an existing cassette.")
@click.option("--overwrite", is_flag=True, help="Replace an existing cassette.")
@click.option(
    "--redact-header",
    "redact_headers",
    multiple=True,
    metavar="NAME",
    help="Also redact this header (repeatable); credentials and cookies always are.",
)
@click.option(
    "--redact-query",
    "redact_query",
    multiple=True,
    metavar="NAME",
    help="Also redact this URL query parameter (repeatable); 'key' always is.",
)
@click.option(
    "--redact-body-field",
    "redact_body_fields",
    multiple=True,
    metavar="POINTER",
    help="Also redact this JSON body field, in requests and responses (JSON pointer, "
    "e.g. /user or /messages/*/name; repeatable).",
)
@click.option(
    "--no-redact",
    is_flag=True,
    help="Record secrets as they are. The cassette will then contain your API keys.",
)
@command_argument
def record(
    cassette: str,
    upstream: str | None,
    upstream_ca: str | None,
    insecure_upstream: bool,
    record_tls_failures: bool,
    listen: tuple[str, int],
    confdir: str,
    append: bool,
    overwrite: bool,
    redact_headers: Sequence[str],
    redact_query: Sequence[str],
    redact_body_fields: Sequence[str],
    no_redact: bool,
    command: Sequence[str],
) -> None:
    """Record every HTTP(S) exchange through the proxy into CASSETTE.

    \b
    replayproxy record session.cassette -- python my_app.py
    replayproxy record --upstream https://api.openai.com session.cassette
    replayproxy record --listen 127.0.0.1:0 session.cassette   # then SIGINT to stop

    Prints "listening on http://HOST:PORT" (and "ca-cert PATH" in forward mode) once ready.
    Each finished exchange is on disk at once; SIGINT/SIGTERM stop cleanly.
    """
    from replayproxy.mitm.addons.recorder import Recorder
    from replayproxy.mitm.embedded import EmbeddedProxy

    if append and overwrite:
        raise UsageError("--append and --overwrite exclude each other")
    if upstream_ca is not None and insecure_upstream:
        raise UsageError("--upstream-ca and --insecure-upstream exclude each other")
    forward = upstream is None
    mode = "regular" if upstream is None else f"reverse:{validate_upstream(upstream)}"
    setup_logging()
    warn_if_exposed(listen[0], listen[1], "recording proxy (it forwards to the network)")
    recorder = Recorder()
    with trust_bundle(upstream_ca) as bundle:
        options: dict[str, Any] = {
            "replayproxy_record": cassette,
            "replayproxy_record_mode": "append" if append else "overwrite" if overwrite else "new",
            "replayproxy_redact_headers": list(redact_headers),
            "replayproxy_redact_query": list(redact_query),
            "replayproxy_redact_body_field": list(redact_body_fields),
            "replayproxy_no_redact": no_redact,
            "replayproxy_record_tls_failures": record_tls_failures,
            # Reverse mode connects upstream per request (lazy), so an unreachable upstream
            # gives the client mitmproxy's 502 and a recorded no_response, rather than a
            # dropped connection. Forward mode keeps eager: the client's ALPN then mirrors the
            # upstream's (mitmproxy-notes §3.4).
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
        try:
            # Entered only now: startup errors are already one line from start().
            with mitmproxy_warnings():
                status = serve(proxy, forward=forward, command=command)
        finally:
            proxy.stop()
            noun = "interaction" if recorder.count == 1 else "interactions"
            click.echo(f"{recorder.count} {noun} recorded to {cassette}", err=True)
    sys.exit(status)


COMMANDS = [record]
