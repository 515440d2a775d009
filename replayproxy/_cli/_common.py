"""Pieces shared by the proxy-running commands (``record``, ``replay``).

- :func:`parse_listen`: ``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` -> ``(host, port)``.
- Click option decorators: :func:`listen_option`, :func:`confdir_option`,
  :func:`command_argument` (the ``-- COMMAND [ARGS...]`` tail).
- :func:`child_env` (from :mod:`replayproxy._harness.env`): the environment a wrapped command
  gets (forward vs reverse mode).
- :func:`print_ready`: the machine-readable ready lines on stdout.
- :func:`serve`: print the ready lines, then run the wrapped command (exit status passed on)
  or wait for SIGINT/SIGTERM, and stop the proxy in every case. It serves any
  :class:`Listener`: an :class:`EmbeddedProxy` or the replay engine's ``ReplayServer``.
- :func:`run_child` (from :mod:`replayproxy._cli._child`): run the wrapped command.
- :func:`warn_if_exposed`: the warning for a ``--listen`` address other machines can reach.
- :func:`setup_logging`: replayproxy's log records as ``warning: ...`` lines on stderr;
  :func:`mitmproxy_warnings`: mitmproxy's own warnings too, within a ``with`` block.

A command using them looks like::

    @click.command()
    @listen_option
    @confdir_option
    @command_argument
    def replay(listen, confdir, command, ...):
        proxy = EmbeddedProxy([addon], mode=..., listen_host=listen[0], listen_port=listen[1],
                              confdir=confdir).start()       # raises one-line errors
        status = serve(proxy, forward=mode == "regular", command=command)
        sys.exit(status)
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any, Protocol, TypeVar

import click

from replayproxy._cli._child import Signals, run_child
from replayproxy._engine.memory import fix_mmap_threshold, freeze_startup_heap
from replayproxy._errors import UsageError
from replayproxy._harness.env import CA_ENV_VARS, NODE_PROXY_ENV, PROXY_ENV_VARS, child_env
from replayproxy._mitm.embedded import DEFAULT_CONFDIR, format_address

__all__ = [
    "CA_ENV_VARS",
    "DEFAULT_LISTEN",
    "NODE_PROXY_ENV",
    "NOTHING_RECORDED_EXIT_STATUS",
    "PROXY_ENV_VARS",
    "RECORDING_FAILED_EXIT_STATUS",
    "Listener",
    "child_env",
    "command_argument",
    "confdir_option",
    "listen_option",
    "mitmproxy_warnings",
    "parse_listen",
    "print_ready",
    "run_child",
    "serve",
    "setup_logging",
    "wait_for_signal",
    "warn_if_exposed",
]

F = TypeVar("F", bound=Callable[..., Any])


class Listener(Protocol):
    """What :func:`serve` needs of a started server: an :class:`EmbeddedProxy`, or the engine's
    :class:`~replayproxy._engine.server.ReplayServer` (replay without mitmproxy). ``ca_cert``:
    the CA clients must trust in forward mode (``None`` in base-URL mode)."""

    @property
    def url(self) -> str: ...

    @property
    def ca_cert(self) -> str | os.PathLike[str] | None: ...

    def stop(self, timeout: float = ...) -> object: ...

    def wait(self, timeout: float | None = ...) -> bool: ...


DEFAULT_LISTEN = "127.0.0.1:8080"

RECORDING_FAILED_EXIT_STATUS = 3
"""Exit status of ``record`` and ``replay --record-mode ...`` (with or without ``-- COMMAND``,
unless the command itself failed) when an interaction could not be written (disk full, I/O
error, read-only): the cassette keeps every interaction before it, and nothing after."""

NOTHING_RECORDED_EXIT_STATUS = 1
"""Exit status of ``record`` when no interaction was recorded (no request reached the proxy)."""


# -- --listen ------------------------------------------------------------------------------


def parse_listen(value: str) -> tuple[str, int]:
    """``"HOST:PORT"``, ``"[::1]:PORT"`` or ``"PORT"`` -> ``(host, port)``; port 0 = any free."""
    text = value.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", text
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif not host:
        host = "127.0.0.1"
    elif ":" in host:
        raise UsageError(f"invalid listen address {value!r}: write IPv6 hosts as [ADDR]:PORT")
    if not (port_text.isascii() and port_text.isdigit()) or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"invalid listen address {value!r}: the port must be 0-65535")
    return host, int(port_text)


def _listen_callback(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, int]:
    try:
        return parse_listen(value)
    except UsageError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None


def listen_option(f: F, default: str = DEFAULT_LISTEN) -> F:
    """``--listen HOST:PORT`` (default 127.0.0.1:8080; port 0 picks a free port)."""
    return click.option(
        "--listen",
        metavar="HOST:PORT",
        default=default,
        callback=_listen_callback,
        show_default=True,
        help="Address to listen on; port 0 picks a free port (printed once ready).",
    )(f)


def confdir_option(f: F) -> F:
    """``--confdir DIR``: mitmproxy's configuration directory (its CA lives there)."""
    return click.option(
        "--confdir",
        type=click.Path(file_okay=False),
        default=DEFAULT_CONFDIR,
        show_default=True,
        help="mitmproxy configuration directory; its CA is created there on first use.",
    )(f)


def command_argument(f: F) -> F:
    """``[-- COMMAND [ARGS...]]``: a command to run with the proxy in its environment."""
    return click.argument("command", nargs=-1, type=click.UNPROCESSED)(f)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable from this machine only."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may well resolve to a public address


def warn_if_exposed(host: str, port: int, role: str) -> None:
    """Warn on stderr when ``--listen`` is not a loopback address: the proxy has no
    authentication, so whoever reaches the address can use it."""
    if is_loopback(host):
        return
    where = format_address(host, port)
    click.echo(
        f"warning: the {role} listens on {where}, which is reachable from other machines, and "
        "has no authentication: anyone who can connect can use it "
        "(--listen 127.0.0.1:PORT keeps it local)",
        err=True,
    )


# -- the wrapped command -------------------------------------------------------------------


def print_ready(proxy: Listener, *, forward: bool) -> None:
    """Print ``listening on http://HOST:PORT`` and, in forward mode, ``ca-cert PATH`` (flushed)."""
    click.echo(f"listening on {proxy.url}")
    if forward and proxy.ca_cert is not None:
        click.echo(f"ca-cert {proxy.ca_cert}")
    sys.stdout.flush()


def wait_for_signal(proxy: Listener, ready: Callable[[], None] = lambda: None) -> int:
    """Block until SIGINT/SIGTERM (status 0) or until the proxy stops by itself (status 1).

    ``ready`` runs once the signal handlers are in place: a supervisor that stops us as soon
    as it sees the ready lines must still get the clean stop (and the summary line).

    The main thread sleeps until one of the two happens, without waking up to poll: a poll
    every 200 ms took the GIL from the serving thread at random moments, and with several
    replay processes on a 2-core machine it showed in the gap p99 (benchmarks/README.md). A
    watcher thread blocks on the proxy's thread instead; signals still interrupt the wait.
    """
    stop = threading.Event()
    signalled: list[int] = []

    def on_signal(signum: int) -> None:
        signalled.append(signum)
        stop.set()

    def watch() -> None:
        proxy.wait()
        stop.set()

    with Signals(on_signal):
        threading.Thread(target=watch, name="replayproxy-watch", daemon=True).start()
        ready()
        stop.wait()
    return 0 if signalled else 1


def serve(
    proxy: Listener,
    *,
    forward: bool,
    command: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    announce: bool = True,
    timeout: float | None = None,
    output: IO[bytes] | None = None,
) -> int:
    """Run a started proxy for a session and stop it; return the exit status for the CLI.

    Prints the ready lines (unless ``announce`` is false), then either runs ``command`` with
    :func:`child_env` (plus ``extra_env``; ``timeout`` and ``output`` as in :func:`run_child`)
    and returns its exit status, or waits for SIGINT/SIGTERM and returns 0. The proxy is
    stopped (port closed) before this returns, even on errors.
    """
    # Everything loaded so far (modules, the cassette) lives until exit: keep it out of the
    # collector's full passes, which otherwise stall serving for tens of ms (engine/memory.py).
    freeze_startup_heap()
    fix_mmap_threshold()  # big bodies' memory goes back to the OS, whichever thread held it
    try:
        if not command:
            return wait_for_signal(proxy, ready=lambda: print_ready(proxy, forward=forward))
        if announce:
            print_ready(proxy, forward=forward)
        ca_cert = proxy.ca_cert if forward else None
        env = child_env(proxy.url, forward=forward, ca_cert=ca_cert)
        env.update(extra_env or {})
        return run_child(command, env, timeout=timeout, output=output)
    finally:
        proxy.stop()


class _StderrHandler(logging.Handler):
    """Writes ``level: [prefix]message`` to the *current* ``sys.stderr`` (click's test runner
    swaps it), one line per record."""

    def __init__(self, prefix: str = "", level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.prefix = prefix

    def emit(self, record: logging.LogRecord) -> None:
        try:
            lines = record.getMessage().strip().splitlines()
            if not lines:
                return
            message = lines[0]
            click.echo(f"{record.levelname.lower()}: {self.prefix}{message}", err=True)
        except Exception:
            self.handleError(record)


def setup_logging(level: int = logging.WARNING) -> None:
    """Show replayproxy's log records on stderr as ``warning: ...`` lines (idempotent)."""
    logger = logging.getLogger("replayproxy")
    logger.setLevel(min(logger.level or level, level))
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    # The root logger carries mitmproxy's own handlers; don't print our lines twice.
    logger.propagate = False


@contextlib.contextmanager
def mitmproxy_warnings() -> Iterator[None]:
    """Within the block, show mitmproxy's own warnings on stderr (``warning: mitmproxy: ...``).

    They explain TLS trust problems: "Client TLS handshake failed. The client does not trust
    the proxy's certificate", "Server TLS handshake failed. Certificate verify failed" (an
    upstream that needs ``--upstream-ca``). Enter it once the proxy has started, so startup
    failures stay the one-line error :meth:`EmbeddedProxy.start` raises.
    """
    handler = _StderrHandler("mitmproxy: ", logging.WARNING)
    logger = logging.getLogger("mitmproxy")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
