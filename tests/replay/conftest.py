"""Fixtures for replay tests: an embedded replay proxy per mode, and an upstream that counts.

``replay_proxy`` is module-scoped and parametrized over the two modes, so each test module
starts one mitmproxy per mode (one embedded proxy per process at a time) and swaps the
cassette per test with :meth:`ReplayTarget.serve`.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from replayproxy.cli._common import child_env
from replayproxy.core.cassette.model import Cassette
from replayproxy.core.matching.differences import MatchOptions
from replayproxy.engine.origin import PACKED_HEADER, TOKEN_HEADER
from replayproxy.engine.session import ReplaySession
from replayproxy.mitm.addons.replayer import Replayer
from replayproxy.mitm.embedded import EmbeddedProxy

RECORDED_HOST = "api.openai.invalid"  # does not resolve: any DNS lookup or connect would fail


class ConnectionCounter:
    """A TCP listener on 127.0.0.1 that counts (and drops) every connection it gets."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.count += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


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
    proxy: EmbeddedProxy
    replayer: Replayer
    counter: ConnectionCounter
    probe: FlowProbe
    env: dict[str, str] = field(default_factory=dict)

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
def counter() -> Iterator[ConnectionCounter]:
    c = ConnectionCounter()
    yield c
    c.close()


@pytest.fixture(scope="module", params=["forward", "reverse", "forward+process"])
def replay_proxy(
    request: pytest.FixtureRequest,
    counter: ConnectionCounter,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ReplayTarget]:
    """A replay proxy: forward (HTTPS_PROXY + CA) or reverse (base URL) standing in for a
    host that counts connections; its env is what ``replayproxy replay -- COMMAND`` would set.
    ``forward+process``: forward, with the origin in a child process, as the CLI runs it."""
    mode, _, process = request.param.partition("+")
    replayer = Replayer(origin_process=bool(process))
    probe = FlowProbe()
    upstream = f"http://127.0.0.1:{counter.port}"
    proxy = EmbeddedProxy(
        [replayer, probe],
        mode="regular" if mode == "forward" else f"reverse:{upstream}",
        confdir=_confdir(tmp_path_factory),
        options={"connection_strategy": "lazy"},
    ).start()
    try:
        env = child_env(proxy.url, forward=mode == "forward", ca_cert=proxy.ca_cert, base={})
        yield ReplayTarget(mode, proxy, replayer, counter, probe, env)
    finally:
        proxy.stop()
    assert counter.count == 0, "the replay proxy connected upstream"


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
