"""Run mitmproxy inside this process, on its own thread and event loop.

:class:`EmbeddedProxy` is the harness the CLI (``record``, ``replay``) and the tests use: it
builds a mitmproxy master with the default addons plus yours, binds one proxy mode
(``regular`` or ``reverse:URL``) on ``listen_host:listen_port`` (port 0 picks a free port),
and reports startup failures as one-line :class:`~replayproxy._errors.ReplayProxyError` s.

Usage::

    proxy = EmbeddedProxy([my_addon], mode="reverse:https://api.openai.com",
                          options={"connection_strategy": "lazy"}).start()
    try:
        print(proxy.url)        # http://127.0.0.1:PORT
        ...
    finally:
        proxy.stop()

    with EmbeddedProxy([my_addon]) as proxy:   # start() on enter, stop() on exit
        ...

Threading: the master and all addon hooks run on the ``mitmproxy`` thread; guard state
shared with other threads, or hand work over with :meth:`EmbeddedProxy.call_soon`.
mitmproxy keeps its master in module globals (``mitmproxy.ctx``), so **one** embedded proxy
may run per process at a time; starting a second raises :class:`UsageError`. Sequential
proxies are fine.

Why it is built this way (verified on mitmproxy 11.0.2 / py3.11 and 12.3.1 / py3.12, see
docs/contributing/mitmproxy-internals.md §5):

- the master is created *inside* a coroutine, because ``Master.__init__`` grabs the running
  loop, and on a thread of its own, because 12.x installs an eager task factory on its loop;
- we assemble :class:`mitmproxy.master.Master` + ``default_addons()`` ourselves instead of
  ``DumpMaster``, whose ``ErrorCheck`` prints to stderr and calls ``sys.exit(1)`` on a bind
  error (issue #7995). Instead, each server's ``last_exception`` is checked before the
  ``running`` hook (which is skipped on failure, as with ErrorCheck), and error log records
  collected during startup are checked after it (:mod:`replayproxy._mitm._startup` turns
  each into one line);
- stopping calls ``master.shutdown()`` and then ``servers.update([])``: without the latter the
  listening socket stays open (issues #6245, #6829); the UDP listener of ``reverse:https`` is
  never opened, and mitmproxy_rs servers are waited for (:mod:`replayproxy._mitm._servers`);
- a loop exception handler hides the ``CancelledError`` noise CPython prints for
  connections still in flight at shutdown;
- the loop waits with microsecond timeouts (:mod:`replayproxy._engine.timers`): the replay
  origin runs on it in forward mode, and epoll's whole milliseconds would make every
  scheduled write up to 1 ms late.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mitmproxy import addons as mitm_addons
from mitmproxy import exceptions, options
from mitmproxy.master import Master
from mitmproxy.proxy import mode_specs

from replayproxy._engine import timers
from replayproxy._errors import ReplayProxyError, UsageError
from replayproxy._mitm import _servers, _startup
from replayproxy._mitm._startup import format_address

__all__ = ["DEFAULT_CONFDIR", "EmbeddedProxy", "ca_cert_path", "format_address"]

DEFAULT_CONFDIR = "~/.mitmproxy"
"""mitmproxy's own default configuration directory (CA files live there)."""

_CA_CERT_NAME = "mitmproxy-ca-cert.pem"

# One master per process: mitmproxy.ctx.master / ctx.options are module globals.
_running_lock = threading.Lock()
_running: EmbeddedProxy | None = None


def ca_cert_path(confdir: str | os.PathLike[str] = DEFAULT_CONFDIR) -> Path:
    """The public CA certificate (PEM) clients must trust for a proxy using ``confdir``."""
    return Path(os.path.expanduser(os.fspath(confdir))) / _CA_CERT_NAME


class _Ready:
    """Last addon in the chain: its ``running`` hook fires after every other addon's."""

    name = "replayproxy_embedded_ready"

    def __init__(self, owner: EmbeddedProxy) -> None:
        self.owner = owner

    def running(self) -> None:
        self.owner._on_running()


class _Master(Master):
    """A master that skips the ``running`` hook when a server failed to bind.

    mitmproxy's own ``ErrorCheck`` (which we leave out) exits before ``running`` on such
    errors; addons rely on that, e.g. the recorder creates its cassette file in ``running``.
    """

    owner: EmbeddedProxy

    async def running(self) -> None:
        if self.owner._check_bound():
            await super().running()
        else:
            self.shutdown()  # type: ignore[no-untyped-call]


class EmbeddedProxy:
    """A mitmproxy proxy running in a background thread of this process.

    ``addons``: addon objects added after mitmproxy's defaults (their hooks run on the proxy
    thread). ``mode``: ``"regular"`` (forward proxy) or ``"reverse:URL"`` (any mitmproxy mode
    spec without ``@port``). ``confdir``: where mitmproxy keeps its CA (created on first use).
    ``options``: extra mitmproxy options set once all addons are loaded, e.g.
    ``{"connection_strategy": "lazy"}``, ``{"ssl_verify_upstream_trusted_ca": "/ca.pem"}`` or
    addon options such as ``{"replayproxy_record": "out.cassette"}``.
    """

    def __init__(
        self,
        addons: Sequence[object] = (),
        *,
        mode: str = "regular",
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        confdir: str | os.PathLike[str] = DEFAULT_CONFDIR,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        try:
            spec = mode_specs.ProxyMode.parse(mode)
        except ValueError as e:
            raise UsageError(f"invalid proxy mode {mode!r}: {e}") from None
        _servers.tcp_only(spec)
        if not 0 <= listen_port <= 65535:
            raise UsageError(f"invalid listen port {listen_port}")
        self.addons = list(addons)
        self.mode = mode
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.confdir = os.path.expanduser(os.fspath(confdir))
        self.options = dict(options or {})
        self.master: Any = None  # mitmproxy.master.Master (untyped for mypy)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._address: tuple[str, int] | None = None
        self._error: ReplayProxyError | None = None
        self._ready = threading.Event()
        self._startup_errors = _startup.StartupErrors()
        self._thread = threading.Thread(target=self._thread_main, name="mitmproxy", daemon=True)

    # -- public API --------------------------------------------------------------------------

    def start(self, timeout: float = 15.0) -> EmbeddedProxy:
        """Start the proxy and wait until it listens. Raises a one-line ReplayProxyError."""
        global _running
        with _running_lock:
            if _running is not None:
                raise UsageError("another embedded mitmproxy is already running in this process")
            _running = self
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            self._release()
            raise ReplayProxyError(f"mitmproxy did not start within {timeout:g} s")
        if self._error is not None:
            self._thread.join(timeout)
            self._release()
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the proxy and close its port. Thread-safe, idempotent. True if it stopped."""
        loop, master = self.loop, self.master
        if master is not None and loop is not None and not loop.is_closed():
            # thread-safe (call_soon_threadsafe); the loop may close between check and call
            with contextlib.suppress(RuntimeError):
                master.shutdown()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        stopped = not self._thread.is_alive()
        if stopped:
            self._release()
        return stopped

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the proxy has stopped (by :meth:`stop` or on its own). True if stopped."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def call_soon(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback(*args)`` on the proxy's event loop (thread-safe)."""
        if self.loop is None:
            raise RuntimeError("the proxy is not running")
        self.loop.call_soon_threadsafe(callback, *args)

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` the proxy listens on (the real port when 0 was asked)."""
        if self._address is None:
            raise RuntimeError("the proxy is not running")
        return self._address

    @property
    def host(self) -> str:
        return self.address[0]

    @property
    def port(self) -> int:
        return self.address[1]

    @property
    def url(self) -> str:
        """``http://HOST:PORT``: the proxy URL (forward mode) or base URL (reverse mode)."""
        host, port = self.address
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    @property
    def ca_cert(self) -> Path:
        """The PEM file clients must trust for HTTPS through this proxy (exists once started)."""
        return ca_cert_path(self.confdir)

    @property
    def is_running(self) -> bool:
        return self._ready.is_set() and self._error is None and self._thread.is_alive()

    def __enter__(self) -> EmbeddedProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the proxy thread --------------------------------------------------------------------

    def _release(self) -> None:
        global _running
        with _running_lock:
            if _running is self:
                _running = None

    def _fail(self, error: ReplayProxyError) -> None:
        if self._error is None:
            self._error = error
        self._ready.set()

    def _thread_main(self) -> None:
        root = logging.getLogger()
        root.addHandler(self._startup_errors)
        try:
            timers.run(self._amain())
        except BaseException as e:  # SystemExit/KeyError from mitmproxy must not kill silently
            self._fail(_startup.startup_error(e))
        finally:
            root.removeHandler(self._startup_errors)
            self._fail(ReplayProxyError("mitmproxy stopped"))  # no-op unless start() waits
            self._release()

    async def _amain(self) -> None:
        self.loop = asyncio.get_running_loop()
        opts = options.Options(
            listen_host=self.listen_host,
            listen_port=self.listen_port,
            mode=[self.mode],
            confdir=self.confdir,
        )
        master: Any = _Master(opts, with_termlog=False)
        master.owner = self
        master.addons.add(*mitm_addons.default_addons())  # type: ignore[no-untyped-call]
        try:
            master.addons.add(*self.addons)
            # Addon options exist only once their addon is loaded, hence set them last.
            if self.options:
                master.options.update(**self.options)
        except (KeyError, exceptions.OptionsError, exceptions.AddonManagerError) as e:
            raise UsageError(_startup.one_line(e)) from None
        master.addons.add(_Ready(self))
        self.master = master
        try:
            await master.run()
        finally:

            def quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
                if not isinstance(context.get("exception"), asyncio.CancelledError):
                    loop.default_exception_handler(context)

            self.loop.set_exception_handler(quiet)
            proxyserver = master.addons.get("proxyserver")
            if proxyserver is not None:
                udp_servers = _servers.rust_servers(proxyserver)
                await proxyserver.servers.update([])  # actually close the listening sockets
                await _servers.wait_closed(udp_servers)

    def _check_bound(self) -> bool:
        """On the proxy thread, before ``running``: did every server bind? Records the port."""
        assert self.master is not None
        proxyserver = self.master.addons.get("proxyserver")
        servers = list(proxyserver.servers) if proxyserver is not None else []
        bind_errors = [_startup.bind_reason(s.last_exception) for s in servers if s.last_exception]
        addrs = [a for s in servers if s.is_running for a in s.listen_addrs]
        if bind_errors or not addrs:
            where = format_address(self.listen_host, self.listen_port)
            reason = (bind_errors or self._startup_errors.messages or ["no server is listening"])[0]
            self._fail(ReplayProxyError(f"cannot listen on {where}: {_startup.one_line(reason)}"))
            return False
        host, port = addrs[0][0], addrs[0][1]
        self._address = (str(host), int(port))
        return True

    def _on_running(self) -> None:
        """On the proxy thread, after every addon's ``running``: report errors or readiness."""
        logging.getLogger().removeHandler(self._startup_errors)
        if self._startup_errors.messages:
            reason = _startup.one_line(self._startup_errors.messages[0])
            self._fail(ReplayProxyError(f"mitmproxy failed to start: {reason}"))
            self.master.shutdown()
            return
        self._ready.set()
