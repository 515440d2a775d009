"""``use_cassette()``: replay (and record) a cassette around a block of Python code.

The Python API behind the pytest plugin, for any other harness::

    import replayproxy

    with replayproxy.use_cassette("cassettes/chat.cassette", record_mode="once",
                                  upstream="https://api.openai.com", speed=0) as rp:
        client = openai.OpenAI(base_url=rp.url + "/v1", api_key="sk-test")
        ...
    print(rp.summary().line())

Two ways clients reach it:

- **base URL** (``upstream=URL``): ``rp.url`` stands in for ``URL``. Replay that never forwards
  runs in the in-process engine (no mitmproxy); recording runs mitmproxy as a reverse proxy;
- **proxy** (no ``upstream``): a forward proxy with mitmproxy's CA (replay in the in-process
  engine, which answers CONNECT and TLS itself; recording in mitmproxy); for the block
  ``os.environ`` has
  ``HTTPS_PROXY``/``HTTP_PROXY`` (and lower-case), the CA variables (``SSL_CERT_FILE``,
  ``REQUESTS_CA_BUNDLE``...) and ``REPLAYPROXY_URL``, so clients created inside it use the proxy.

The options (``record_mode``, ``speed``, ``faults``, the matching options, and the record
options ``redact_header``, ``redact_query``, ``redact_body_field``, ``no_redact``,
``record_tls_failures``) are the keywords of :data:`replayproxy._core.replay.options.OPTIONS`,
the same as ``replay``'s flags; the record options apply to what this block records. The
callables ``before_record_request`` and ``before_record_response``
(:mod:`replayproxy._core.redaction.hooks`) edit or drop what it records, in this process.
Servers are kept in a :class:`~replayproxy._harness.hosts.HostPool` (one per process by
default, closed at exit), so a second block reuses the first one's proxy.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from replayproxy._core.matching.explanation import PYTHON_WORDS, Words
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.matrix import Cell
from replayproxy._core.redaction.hooks import RecordHooks, RequestHook, ResponseHook
from replayproxy._core.replay.checks import check_upstream
from replayproxy._core.replay.options import settings_from
from replayproxy._core.replay.shell import Shell, choose_shell
from replayproxy._engine.session import ReplaySession, SeenRequest, Summary
from replayproxy._errors import ReplayProxyError
from replayproxy._harness.env import child_env, patched_environ
from replayproxy._harness.hosts import EngineHost, HostPool, MitmHost

if TYPE_CHECKING:  # Unpack for **kwargs is in typing from Python 3.12
    from typing_extensions import Unpack

    from replayproxy._core.replay.option_keywords import CassetteOptions

__all__ = ["CassetteUse", "default_pool", "use_cassette"]

log = logging.getLogger("replayproxy")

DEFAULT_CONFDIR = "~/.mitmproxy"

_pool: HostPool | None = None


def default_pool() -> HostPool:
    """The process-wide pool (started on first use, closed at interpreter exit)."""
    global _pool
    if _pool is None:
        _pool = HostPool()
        atexit.register(_pool.close)
    return _pool


@dataclass
class CassetteUse:
    """A cassette in use: where clients go, and what happened so far.

    ``url``: the base URL (base-URL mode; append the API prefix, e.g. ``/v1``) or the proxy URL
    (proxy mode). ``env``: the variables set in ``os.environ`` for the block (proxy mode).
    ``cell``: the fault-matrix cell this use runs under (pytest's matrix items), else ``None``.
    """

    cassette: Path
    session: ReplaySession
    url: str
    proxy_mode: bool
    ca_cert: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    cell: Cell | None = None
    _words: Words = field(default=PYTHON_WORDS, init=False, repr=False)
    """How fixes are spelt in :meth:`explain` and in the explained 500 clients get (set with
    :meth:`_speak`: ``use_cassette()``'s keywords by default, pytest's inside pytest)."""
    _explained: int = field(default=0, init=False, repr=False)
    """How many recording errors :meth:`explain` has shown (``use_cassette()`` raises on exit
    for the rest)."""

    def _speak(self, words: Words) -> None:
        """Spell fixes in ``words`` from now on, here and in the 500 bodies the replay sends.
        In base-URL mode the request's host (replayproxy's own address) is left out."""
        if not self.proxy_mode:
            words = dataclasses.replace(words, host=False)
        self._words = self.session.words = words

    @property
    def misses(self) -> list[Miss]:
        """The unmatched requests, each with
        :meth:`~replayproxy._core.matching.matcher.Miss.explain`."""
        return list(self.session.misses)

    @property
    def requests(self) -> tuple[SeenRequest, ...]:
        """The requests the block sent, in order (:class:`~replayproxy.SeenRequest`: redacted
        headers, the interaction that answered, its ``attempt``, the ``faults`` applied)."""
        return self.session.requests

    def summary(self) -> Summary:
        """Served, unmatched, unused and newly recorded interactions."""
        return self.session.summary()

    def explain(self) -> str:
        """Every problem of this use (misses, recording errors), explained; ``""`` if none.

        The fixes are spelt as ``use_cassette()``'s keywords (pytest's inside pytest); in
        base-URL mode the request's host (replayproxy's own address) is left out.
        """
        parts = self.session.explain_misses(self._words)
        errors = list(self.session.errors)
        parts += [f"replayproxy: recording failed: {e}" for e in errors]
        self._explained = max(self._explained, len(errors))
        if parts and not self.session.exists and self.session.policy.replay:
            parts.insert(
                0,
                f"replayproxy: cassette {self.cassette} does not exist; record it with "
                "record mode once (pytest: --replayproxy-record-mode=once)",
            )
        return "\n".join(parts)


def _host(
    pool: HostPool,
    session: ReplaySession,
    upstream: str | None,
    upstream_ca: str | None,
    confdir: str,
) -> EngineHost | MitmHost:
    confdir = os.path.expanduser(confdir)
    if choose_shell(records=session.policy.records) is Shell.MITMPROXY:
        return pool.mitm(upstream, upstream_ca=upstream_ca, confdir=confdir)
    return pool.engine(None if upstream is not None else confdir)


@contextlib.contextmanager
def use_cassette(
    cassette: str | os.PathLike[str],
    *,
    upstream: str | None = None,
    upstream_ca: str | None = None,
    confdir: str = DEFAULT_CONFDIR,
    set_env: bool = True,
    pool: HostPool | None = None,
    before_record_request: RequestHook | None = None,
    before_record_response: ResponseHook | None = None,
    **options: Unpack[CassetteOptions],
) -> Iterator[CassetteUse]:
    """Serve ``cassette`` for the ``with`` block; record into it as ``record_mode`` says.

    ``upstream``: base-URL mode, standing in for this ``scheme://host[:port]`` (contacted only
    to record). ``upstream_ca``: a PEM CA to trust for upstream HTTPS when recording.
    ``confdir``: mitmproxy's directory (its CA). ``set_env``: in proxy mode, set the proxy and
    CA variables in ``os.environ`` for the block. ``options``: every option of the table
    (:data:`~replayproxy._core.replay.options.OPTIONS`): ``record_mode``, ``speed``, ``faults``,
    ``ignore_query``, ``ignore_body_field``, ``allow_repeats``, ``match_host``,
    ``no_equivalence``; and for what is recorded, ``redact_header``, ``redact_query``,
    ``redact_body_field``, ``no_redact``, ``record_tls_failures``. ``before_record_request``
    (a :class:`~replayproxy._core.cassette.model.Request` in, one or ``None`` out) and
    ``before_record_response`` (an :class:`~replayproxy._core.cassette.model.Interaction`):
    run on each recorded interaction after the redaction; ``None`` leaves it out.

    A cassette that does not exist is, with record mode ``none``, an empty one: every request
    is a miss explained by :meth:`CassetteUse.explain`. When recording fails (the cassette
    cannot be written: a read-only directory, a full disk), the requests it would have
    forwarded are not sent, and leaving the block raises a one-line
    :class:`~replayproxy._errors.ReplayProxyError` unless :meth:`CassetteUse.explain` already
    showed the failure.
    """
    settings = settings_from(options)
    hooks = RecordHooks(before_record_request, before_record_response)
    settings = replace(settings, record=replace(settings.record, hooks=hooks))
    if upstream is not None:
        upstream = check_upstream(upstream)
    path = Path(cassette)
    session = ReplaySession.from_settings(path, settings, missing_ok=True, on_warning=log.warning)
    host = _host(pool or default_pool(), session, upstream, upstream_ca, confdir)
    use = CassetteUse(path, session, host.url, proxy_mode=upstream is None)
    if upstream is None:
        use.ca_cert = host.ca_cert
        full = child_env(host.url, forward=True, ca_cert=host.ca_cert, base={})
        use.env = full
    elif upstream is not None:
        use.env = {"REPLAYPROXY_URL": host.url}
    use._speak(PYTHON_WORDS)
    host.activate(session)
    try:
        with patched_environ(use.env) if set_env else contextlib.nullcontext():
            yield use
    finally:
        host.deactivate(session)
        session.close()
    _raise_unexplained(use)


def _raise_unexplained(use: CassetteUse) -> None:
    """A block that ended normally while recording failed must not pass for a good recording:
    raise the first failure :meth:`CassetteUse.explain` has not shown (one line)."""
    errors = use.session.errors[use._explained :]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ReplayProxyError(f"recording failed: {errors[0]}{more}")
