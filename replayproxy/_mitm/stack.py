"""The mitmproxy stack that serves replay sessions, built in one place.

The CLI (``replay``), the Python API and pytest plugin
(:class:`~replayproxy._harness.hosts.MitmHost`) and the replay tests all build the embedded
mitmproxy with :func:`build_stack`, so they cannot drift apart:

- the :class:`~replayproxy._mitm.addons.replayer.Replayer` first, then the
  :class:`~replayproxy._mitm.addons._alpn.AlpnChoice` answering each TLS client with the HTTP
  version its session's ``http_version`` asks for (by default the recorded one);
- when a session may record, the :class:`~replayproxy._mitm.addons.recorder.Recorder` after it,
  with the replayer as its sink: it records only the flows the replayer forwarded, into the
  session that forwarded them;
- ``connection_strategy=lazy``: replay never resolves or connects to the recorded host
  (docs/contributing/mitmproxy-internals.md §2);
- the upstream trust bundle (:func:`~replayproxy._mitm.trust.trust_bundle`) for recording;
- :class:`~replayproxy._mitm.client_limits.ClientLimits` first: the head and body timeouts and
  the connection bound of the session being served (mitmproxy's own watchdog waits 600 s).

Usage::

    with trust_bundle(upstream_ca) as bundle:
        stack = build_stack(session, upstream, trusted_ca=bundle)
        proxy = stack.proxy(listen_host=host, listen_port=port, confdir=confdir).start()
"""

from __future__ import annotations

import os
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replayproxy._core.replay.options import ConnectionLimits
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons._alpn import AlpnChoice
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.client_limits import ClientLimits
from replayproxy._mitm.embedded import DEFAULT_CONFDIR, EmbeddedProxy

__all__ = ["MitmStack", "build_stack", "proxy_mode"]


def proxy_mode(upstream: str | None) -> str:
    """mitmproxy's mode for a session standing in for ``upstream`` (a checked
    ``scheme://HOST[:PORT]``): ``reverse:URL``, or ``regular`` (a forward proxy) for ``None``."""
    return "regular" if upstream is None else f"reverse:{upstream}"


@dataclass(frozen=True, slots=True)
class MitmStack:
    """What the embedded mitmproxy serves with: its mode, the addons in order, the options."""

    replayer: Replayer
    addons: tuple[object, ...]
    mode: str
    options: Mapping[str, Any]

    def proxy(
        self,
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        confdir: str | os.PathLike[str] = DEFAULT_CONFDIR,
    ) -> EmbeddedProxy:
        """The embedded mitmproxy running this stack (not started yet)."""
        return EmbeddedProxy(
            self.addons,
            mode=self.mode,
            listen_host=listen_host,
            listen_port=listen_port,
            confdir=confdir,
            options=self.options,
        )


def build_stack(
    session: ReplaySession | None,
    upstream: str | None,
    *,
    records: bool | None = None,
    trusted_ca: str | None = None,
    origin_process: bool = False,
    extra_addons: Sequence[object] = (),
) -> MitmStack:
    """The stack serving ``session`` as a forward proxy (``upstream=None``) or standing in for
    ``upstream``.

    ``session``: what the replayer serves first (``None``: nothing until
    :meth:`Replayer.use <replayproxy._mitm.addons.replayer.Replayer.use>` or its
    ``replayproxy_replay`` option). ``records``: add the recorder; by default when ``session``
    records (a host that switches sessions passes ``True``: a later session may record).
    ``trusted_ca``: a PEM bundle to verify upstream HTTPS with (from ``trust_bundle``).
    ``origin_process``: run the HTTP origin in a child process, as the CLI does.
    ``extra_addons``: added last (a test's probe).
    """
    if records is None:
        records = session is not None and session.policy.records
    replayer = Replayer(session, origin_process=origin_process)

    def limits() -> ConnectionLimits:  # the session served now (a host switches sessions)
        served = replayer.session
        return ConnectionLimits() if served is None else served.limits

    addons: list[object] = [ClientLimits(limits), replayer, AlpnChoice(replayer)]
    if records:
        addons.append(Recorder(sink=replayer))
    addons.extend(extra_addons)
    options: dict[str, Any] = {"connection_strategy": "lazy"}
    if trusted_ca is not None:
        options["ssl_verify_upstream_trusted_ca"] = trusted_ca
    return MitmStack(replayer, tuple(addons), proxy_mode(upstream), types.MappingProxyType(options))
