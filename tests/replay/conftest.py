"""Fixtures for replay tests: a replay proxy per mode, and an upstream that counts.

``replay_proxy`` is module-scoped and parametrized over the modes: mitmproxy built with
:func:`~replayproxy._mitm.stack.build_stack` like the CLI's and ``use_cassette()``'s when they
record (forward, reverse, forward with the origin in a child process), and the engine alone as a
forward proxy (``forward+engine``: how the CLI, ``use_cassette()`` and the pytest plugin replay
in forward mode). Each test module starts one proxy per mode (one embedded mitmproxy per process
at a time) and swaps the cassette per test with :meth:`ReplayTarget.serve`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from replayproxy._cli._common import child_env
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._engine.origin import PACKED_HEADER, TOKEN_HEADER
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy._mitm.leaf_certs import LeafCerts
from replayproxy._mitm.stack import MitmStack, build_stack
from replayproxy.testing import CountingUpstream

RECORDED_HOST = "api.openai.invalid"  # does not resolve: any DNS lookup or connect would fail


class FlowProbe:
    """Added after the replayer: what later addons (and mitmweb) see of each finished flow."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, bool]] = []
        self.bodies: list[tuple[bytes | None, list[str]]] = []  # and content-length

    def response(self, flow: Any) -> None:
        req = flow.request
        self.bodies.append((req.raw_content, req.headers.get_all("content-length")))
        private = TOKEN_HEADER in req.headers or PACKED_HEADER in req.headers
        self.seen.append((req.pretty_url, req.host_header, private))


@dataclass
class ReplayTarget:
    """A running replay proxy in one mode, and how a client reaches it."""

    mode: str  # "forward" or "reverse"
    stack: MitmStack | None  # built as the CLI and use_cassette() build theirs; None: the engine
    proxy: EmbeddedProxy | ReplayServer
    counter: CountingUpstream
    probe: FlowProbe
    env: dict[str, str] = field(default_factory=dict)

    @property
    def replayer(self) -> Replayer | ReplayServer:
        """What serves sessions (``use(session)``): the replay addon, or the engine's server."""
        if self.stack is None:
            assert isinstance(self.proxy, ReplayServer)
            return self.proxy
        return self.stack.replayer

    @property
    def mitmproxy(self) -> bool:
        """Whether mitmproxy serves (its addons see the flows), not the engine alone."""
        return self.stack is not None

    @property
    def base_url(self) -> str:
        """Where a client sends requests: the recorded host (forward) or the proxy (reverse)."""
        return f"https://{RECORDED_HOST}" if self.mode == "forward" else self.proxy.url

    def serve(
        self, cassette: Cassette | Path, *, speed: float = 0, **match: object
    ) -> ReplaySession:
        session = ReplaySession(cassette, speed=speed, options=MatchOptions(**match))  # type: ignore[arg-type]
        self.replayer.use(session)
        return session


@pytest.fixture(scope="module")
def counter() -> Iterator[CountingUpstream]:
    c = CountingUpstream()
    yield c
    c.close()


@pytest.fixture(scope="module", params=["forward", "reverse", "forward+process", "forward+engine"])
def replay_proxy(
    request: pytest.FixtureRequest,
    counter: CountingUpstream,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ReplayTarget]:
    """A replay proxy: forward (HTTPS_PROXY + CA) or reverse (base URL) standing in for a
    host that counts connections; its env is what ``replayproxy replay -- COMMAND`` would set.
    ``forward+process``: forward through mitmproxy, with the origin in a child process, as the
    CLI records; ``forward+engine``: forward, the engine alone, as every replay runs it."""
    mode, _, variant = request.param.partition("+")
    probe = FlowProbe()
    confdir = _confdir(tmp_path_factory)
    if variant == "engine":
        tls = LeafCerts(confdir)
        server = ReplayServer.for_session(ReplaySession(Cassette(), speed=0), tls=tls).start()
        try:
            env = child_env(server.url, forward=True, ca_cert=tls.ca_cert, base={})
            yield ReplayTarget(mode, None, server, counter, probe, env)
        finally:
            server.stop()
        assert counter.connections == 0, "the replay proxy connected upstream"
        return
    upstream = None if mode == "forward" else f"http://127.0.0.1:{counter.port}"
    stack = build_stack(None, upstream, origin_process=variant == "process", extra_addons=[probe])
    proxy = stack.proxy(confdir=confdir).start()
    try:
        env = child_env(proxy.url, forward=mode == "forward", ca_cert=proxy.ca_cert, base={})
        yield ReplayTarget(mode, stack, proxy, counter, probe, env)
    finally:
        proxy.stop()
    assert counter.connections == 0, "the replay proxy connected upstream"


_CONFDIR: list[Path] = []


def _confdir(factory: pytest.TempPathFactory) -> Path:
    # One mitmproxy CA for the whole session: generating it costs ~0.5 s.
    if not _CONFDIR:
        _CONFDIR.append(factory.mktemp("mitmproxy-conf"))
    return _CONFDIR[0]


@pytest.fixture
def client_env(replay_proxy: ReplayTarget, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Put the proxy/CA variables of the mode into ``os.environ`` for in-process clients."""
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in replay_proxy.env.items():
        monkeypatch.setenv(name, value)
    return dict(os.environ)
