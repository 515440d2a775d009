"""Fail closed: whatever breaks inside replay, no request reaches the network.

The replay path is broken on purpose (a matcher, planner or framer that raises, a request hook
that lets the flow through un-rewritten, a JSON body nested 1000 deep, a fault of 1e300 s)
while a fake upstream listens on 127.0.0.1 and counts connections. Every case must end with an
explained 5xx at the client and 0 upstream connections.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core import faults as faults_mod
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.matching.matcher import Matcher
from replayproxy._engine import origin as origin_mod
from replayproxy._engine import session as session_mod
from replayproxy._engine.failsafe import ERROR_HEADER
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import CassetteFormatError
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing import CountingUpstream, cassette, interaction

BODY = b'{"model":"m","stream":true}'
PATH = "/v1/chat/completions"
SECRET = "sk-fail-closed-SECRET-0123"
DEEP = b"[" * 1000 + b"]" * 1000


class Planted(RuntimeError):
    """The bug planted in the replay path."""


def _raise(*args: object, **kwargs: object) -> Any:
    raise Planted("planted bug")


@pytest.fixture(scope="module")
def module_upstream() -> Iterator[CountingUpstream]:
    fake = CountingUpstream()
    yield fake
    fake.close()


class Target:
    """A running embedded replay proxy in one mode, and how a client reaches the upstream."""

    def __init__(self, mode: str, proxy: EmbeddedProxy, replayer: Replayer, up: CountingUpstream):
        self.mode, self.proxy, self.replayer, self.upstream = mode, proxy, replayer, up

    def serve(self, c: Cassette, **kwargs: Any) -> ReplaySession:
        session = ReplaySession(c, speed=0, **kwargs)
        self.replayer.use(session)
        return session

    def post(self, body: bytes = BODY, path: str = PATH) -> httpx.Response:
        headers = {"authorization": f"Bearer {SECRET}"}
        if self.mode == "reverse":
            return httpx.post(self.proxy.url + path, content=body, headers=headers, timeout=20)
        with httpx.Client(proxy=self.proxy.url, timeout=20) as client:
            return client.post(self.upstream.url + path, content=body, headers=headers)


@pytest.fixture(scope="module", params=["forward", "reverse"])
def target(
    request: pytest.FixtureRequest,
    module_upstream: CountingUpstream,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Target]:
    replayer = Replayer()
    mode = request.param
    proxy = EmbeddedProxy(
        [replayer],
        mode="regular" if mode == "forward" else f"reverse:{module_upstream.url}",
        confdir=tmp_path_factory.mktemp("conf"),
        options={"connection_strategy": "lazy"},
    ).start()
    try:
        yield Target(mode, proxy, replayer, module_upstream)
    finally:
        proxy.stop()


def _assert_explained(r: httpx.Response, text: str) -> None:
    assert r.status_code == 500, r.text
    assert r.headers.get(ERROR_HEADER) == "1"
    assert text in r.text
    assert "REAL UPSTREAM" not in r.text


def test_a_raising_matcher_answers_500_through_mitmproxy(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matcher that raises: explained 500 with the exception, counted, upstream untouched."""
    session = target.serve(cassette(interaction([b"data: 1\n\n"])))
    monkeypatch.setattr(Matcher, "match", _raise)
    r = target.post()
    _assert_explained(r, "Planted: planted bug")
    assert f"replay failed for POST {PATH}" in r.text
    assert session.summary().errors == 1
    assert "1 replay error" in session.summary().line()
    assert target.upstream.connections == 0


def test_a_raising_planner_answers_500_and_is_not_counted_as_served(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planner that raises: explained 500; the summary shows an error, not a served request."""
    session = target.serve(cassette(interaction([b"data: 1\n\n"])))
    monkeypatch.setattr(faults_mod, "plan", _raise)
    _assert_explained(target.post(), "Planted: planted bug")
    summary = session.summary()
    assert (summary.served, summary.errors) == (0, 1)
    assert target.upstream.connections == 0


def test_a_raising_framer_in_the_origin_answers_500(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the origin (framing) still answers the explained 500, counted by the session."""
    session = target.serve(cassette(interaction([b"data: 1\n\n", b"data: 2\n\n"])))
    monkeypatch.setattr(origin_mod, "_compiled", _raise)
    _assert_explained(target.post(), "Planted: planted bug")
    assert session.summary().errors == 1
    assert target.upstream.connections == 0


def test_a_hook_that_lets_the_flow_through_is_stopped_at_connect(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the request hook broken so that it forwards the flow untouched, the server_connect
    backstop still refuses the upstream connection, and the run is marked failed."""

    async def forward_untouched(self: Replayer, *args: object) -> None:
        return None

    session = target.serve(cassette(interaction([b"data: 1\n\n"])))
    monkeypatch.setattr(Replayer, "_replay", forward_untouched)
    r = target.post()
    assert r.status_code == 502, r.text
    assert "replay never contacts the network" in r.text
    assert "REAL UPSTREAM" not in r.text
    assert session.summary().errors >= 1
    assert target.upstream.connections == 0


def test_a_json_body_nested_1000_deep_never_reaches_the_upstream(target: Target) -> None:
    """The reported trigger (RecursionError in matching) gets a 500, not the real upstream."""
    session = target.serve(cassette(interaction([b"data: 1\n\n"])))
    r = target.post(DEEP)
    assert r.status_code == 500 and "REAL UPSTREAM" not in r.text
    assert session.summary().served == 0
    assert target.upstream.connections == 0


@pytest.mark.parametrize(
    "fault", ["stall:for=1e300", "ttfb:delay=1e300", "stall:time=1e300", "split:bytes=1,gap=1e300"]
)
def test_a_stored_fault_of_1e300_seconds_never_reaches_the_upstream(
    target: Target, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored fault whose duration overflows stops replay before it starts, naming the
    interaction; and should that check ever be skipped (a bug), the request is still refused
    with a 500 naming the fault, never forwarded."""
    it = interaction([b"data: 1\n\n"])
    bad = cassette(type(it)(it.request, it.response, it.end, faults=(fault,)))
    with pytest.raises(CassetteFormatError, match=r"interaction 0 .*stored fault"):
        ReplaySession(bad)
    monkeypatch.setattr(session_mod, "check_stored_faults", lambda *a, **k: None)
    session = target.serve(bad)
    r = target.post()
    assert r.status_code == 500 and "REAL UPSTREAM" not in r.text
    assert "at most" in r.text, r.text
    assert session.summary().served == 0
    assert target.upstream.connections == 0


# -- the direct engine (ReplayServer): never a dropped connection ------------------------------


@pytest.mark.parametrize("broken", ["match", "plan", "frame"])
def test_the_direct_engine_answers_500_when_replay_breaks(
    monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    """ReplayServer answers the explained 500 (and keeps serving) whatever part breaks."""
    if broken == "match":
        monkeypatch.setattr(Matcher, "match", _raise)
    elif broken == "plan":
        monkeypatch.setattr(faults_mod, "plan", _raise)
    else:
        monkeypatch.setattr(origin_mod, "_compiled", _raise)
    seen: list[str] = []
    it = interaction([b"data: 1\n\n"])
    with (
        ReplayServer(cassette(it, it), speed=0, on_error=lambda f: seen.append(f.one_line())) as s,
        httpx.Client(timeout=10) as client,
    ):
        first = client.post(s.url + PATH, content=BODY)
        second = client.post(s.url + PATH, content=BODY)  # same connection, still served
    for r in (first, second):
        _assert_explained(r, "Planted: planted bug")
    assert seen == [f"replay failed for POST {PATH}: Planted: planted bug"] * 2
    assert s.summary().errors == 2


def test_the_direct_engine_answers_a_deep_json_body(upstream: CountingUpstream) -> None:
    """A body nested 1000 deep gets an answer from ReplayServer, not a dropped connection."""
    with ReplayServer(cassette(interaction([b"data: 1\n\n"])), speed=0) as s:
        r = httpx.post(s.url + PATH, content=DEEP, timeout=10)
    assert r.status_code == 500


# -- the CLI: one stderr line, the summary, exit status ----------------------------------------

# Runs the CLI with a bug planted in the matcher (the subprocess imports it, then patches it).
_PLANTED_CLI = """
import sys
from replayproxy._core.matching.matcher import Matcher
def broken(self, request):
    raise RuntimeError("planted bug")
Matcher.match = broken
from replayproxy._cli import main
sys.argv[0] = "replayproxy"
main()
"""

_CLIENT = f"""
import os, httpx
r = httpx.post(os.environ["REPLAYPROXY_URL"] + "{PATH}", content={BODY!r},
               headers={{"authorization": "Bearer {SECRET}"}}, timeout=20)
print(r.status_code, r.headers.get("{ERROR_HEADER}"))
"""


def test_replay_command_exits_non_zero_with_one_stderr_line(
    tmp_path: Path, upstream: CountingUpstream
) -> None:
    """``replay -- COMMAND`` whose request hit a replay bug: status 1 though the command
    passed, one ``error:`` line and the count in the summary on stderr, no secret anywhere."""
    path = tmp_path / "one.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", _PLANTED_CLI, "replay", str(path), "--upstream", upstream.url,
         "--listen", "127.0.0.1:0", "--confdir", str(tmp_path / "conf"), "--allow-unmatched",
         "--", sys.executable, "-c", _CLIENT],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1] == "500 1"
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: replay failed for POST {PATH}: RuntimeError: planted bug"]
    assert "0 interactions served, 0 unmatched requests, 1 replay error," in done.stderr
    assert "Traceback" not in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert upstream.connections == 0
