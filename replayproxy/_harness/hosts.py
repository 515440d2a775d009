"""Long-lived servers that the Python API and the pytest plugin switch cassettes on.

Starting mitmproxy costs hundreds of milliseconds, and only one embedded mitmproxy may run per
process (:mod:`replayproxy._mitm.embedded`), so a test suite keeps **one** server of each kind
per process (per pytest-xdist worker) in a :class:`HostPool` and points it at each test's
:class:`~replayproxy._engine.session.ReplaySession` in turn:

- :class:`EngineHost`: the replay engine alone (:class:`~replayproxy._engine.server.
  ReplayServer`), for replay that never forwards. In base-URL mode it never imports mitmproxy,
  so it works in an environment without it (see docs/guides/pytest.md, "Python 3.11 and the newest
  SDKs"); as a forward proxy it answers CONNECT and TLS itself with certificates from
  mitmproxy's CA in ``confdir`` (:class:`~replayproxy._mitm.leaf_certs.LeafCerts`);
- :class:`MitmHost`: mitmproxy with the replay addon and the recorder (the replayer as its
  sink; :func:`~replayproxy._mitm.stack.build_stack`), for every session that may record.
  mitmproxy is imported here, lazily, and only then. A different mitmproxy mode (forward vs
  standing in for another upstream, another upstream CA) replaces the running one.

Between sessions a host serves an empty cassette, so a request made outside any test is
answered with the explained 500, never forwarded.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from replayproxy._core.cassette.model import Cassette
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import UsageError

__all__ = ["EngineHost", "HostPool", "MitmHost", "idle_session"]


def idle_session() -> ReplaySession:
    """What a host serves between sessions: nothing (every request is an explained miss)."""
    return ReplaySession(Cassette(), speed=0)


def _mitm_import_error(e: ImportError) -> UsageError:
    return UsageError(
        f"proxy mode and recording need mitmproxy, which cannot be imported here ({e}); "
        "install replayproxy with its dependencies, or replay in base-URL mode "
        "(upstream=...) with record mode none"
    )


class EngineHost:
    """Replay in this process through the engine only: base-URL mode, or (``confdir``) a
    forward proxy with mitmproxy's CA in ``confdir``."""

    def __init__(self, confdir: str | None = None) -> None:
        tls = None
        if confdir is not None:
            try:
                from replayproxy._mitm.leaf_certs import LeafCerts
            except ImportError as e:  # an environment without mitmproxy (docs/guides/pytest.md)
                raise _mitm_import_error(e) from None
            with _confdir_lock(confdir):  # xdist workers: the first creates the CA
                tls = LeafCerts(confdir)
        self.confdir = confdir
        self.server = ReplayServer.for_session(idle_session(), tls=tls).start()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def ca_cert(self) -> str | None:
        """The CA clients must trust (forward mode), else ``None``."""
        return self.server.ca_cert

    def activate(self, session: ReplaySession) -> None:
        if session.policy.records:
            raise UsageError("the in-process replay engine cannot forward or record")
        self.server.use(session)

    def deactivate(self, session: ReplaySession, timeout: float = 5.0) -> None:
        self.server.use(idle_session())

    def close(self) -> None:
        self.server.stop()


class MitmHost:
    """mitmproxy (forward proxy, or reverse proxy for one upstream) replaying and recording."""

    def __init__(self, upstream: str | None, *, upstream_ca: str | None, confdir: str) -> None:
        try:
            # mitmproxy's dependencies (ldap3, passlib) warn about their own deprecated
            # imports; that is noise in a user's test report, not something they can act on.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                from replayproxy._mitm.stack import build_stack
                from replayproxy._mitm.trust import trust_bundle
        except ImportError as e:  # an environment without mitmproxy (docs/guides/pytest.md)
            raise _mitm_import_error(e) from None
        self.key = (upstream, upstream_ca, confdir)
        self._bundle = contextlib.ExitStack()
        bundle = self._bundle.enter_context(trust_bundle(upstream_ca))
        # With the recorder whatever the first session: a later one on this host may record.
        stack = build_stack(idle_session(), upstream, records=True, trusted_ca=bundle)
        self.replayer = stack.replayer
        try:
            # pytest-xdist workers start at once: the first creates mitmproxy's CA in confdir,
            # the others must not read it half-written.
            with _confdir_lock(confdir):
                self.proxy = stack.proxy(confdir=confdir).start()
        except BaseException:
            self._bundle.close()
            raise

    @property
    def url(self) -> str:
        return self.proxy.url

    @property
    def ca_cert(self) -> str:
        return str(self.proxy.ca_cert)

    def activate(self, session: ReplaySession) -> None:
        self.replayer.use(session)

    def deactivate(self, session: ReplaySession, timeout: float = 5.0) -> None:
        """Stop serving ``session``, once its forwarded flows are recorded (``timeout`` s).

        A client may have read the last byte before mitmproxy's ``response`` hook (which
        records the flow) ran: wait for it rather than lose the interaction.
        """
        deadline = time.monotonic() + timeout
        while self.replayer.pending(session) and time.monotonic() < deadline:
            time.sleep(0.005)
        self.replayer.use(idle_session())

    def close(self) -> None:
        try:
            self.proxy.stop()
        finally:
            self._bundle.close()


@contextlib.contextmanager
def _confdir_lock(confdir: str) -> Iterator[None]:
    """An exclusive lock on ``confdir`` across processes (POSIX; elsewhere none)."""
    try:
        import fcntl
    except ImportError:  # Windows: no pytest-xdist CA race protection
        yield
        return
    directory = Path(os.path.expanduser(confdir))
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".replayproxy.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class HostPool:
    """At most one :class:`EngineHost` per mode and one :class:`MitmHost`, started on first
    use."""

    def __init__(self) -> None:
        self._engine: EngineHost | None = None
        self._forward: EngineHost | None = None
        self._mitm: MitmHost | None = None
        self._lock = threading.Lock()

    def engine(self, forward_confdir: str | None = None) -> EngineHost:
        """The engine host for base-URL replay, or (``forward_confdir``: mitmproxy's CA
        directory) for forward-proxy replay."""
        with self._lock:
            if forward_confdir is None:
                if self._engine is None:
                    self._engine = EngineHost()
                return self._engine
            if self._forward is not None and self._forward.confdir != forward_confdir:
                self._forward.close()  # another CA: a new host
                self._forward = None
            if self._forward is None:
                self._forward = EngineHost(forward_confdir)
            return self._forward

    def mitm(self, upstream: str | None, *, upstream_ca: str | None, confdir: str) -> MitmHost:
        """The mitmproxy host standing in for ``upstream`` (``None``: a forward proxy)."""
        with self._lock:
            key = (upstream, upstream_ca, confdir)
            if self._mitm is not None and self._mitm.key != key:
                self._mitm.close()  # one embedded mitmproxy per process
                self._mitm = None
            if self._mitm is None:
                self._mitm = MitmHost(upstream, upstream_ca=upstream_ca, confdir=confdir)
            return self._mitm

    def close(self) -> None:
        with self._lock:
            hosts: list[EngineHost | MitmHost | None] = [self._engine, self._forward, self._mitm]
            self._engine = self._forward = self._mitm = None
        for host in hosts:
            if host is not None:
                host.close()
