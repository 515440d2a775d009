"""IPv6 upstreams record and replay (issue 28, item 4): ``--upstream 'http://[::1]:PORT'``,
forward mode to an IPv6 literal host, and a host name that resolves to IPv6. The recorded URL
keeps its brackets, so it parses, matches and shows as written; ``http://[::1`` is one line.

The simulator listens on ``::1`` only (loopback); the CLI runs as a process, httpx is the client.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._errors import UsageError
from replayproxy._harness.context import use_cassette
from replayproxy.testing import Simulator

REPLAYPROXY = str(Path(sys.executable).parent / "replayproxy")
PATH = "/v1/chat/completions"
BODY = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def _env() -> dict[str, str]:
    drop = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    return {k: v for k, v in os.environ.items() if k.lower() not in drop}


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mitmproxy confdir (its CA is made once) for the module."""
    return tmp_path_factory.mktemp("mitmproxy-conf")


@pytest.fixture(scope="module")
def sim6() -> Iterator[Simulator]:
    """The provider simulator on ``[::1]`` (skipped where this machine has no IPv6 loopback)."""
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    with Simulator(host="::1") as sim:
        yield sim


def _url(sim: Simulator, host: str = "[::1]") -> str:
    return f"http://{host}:{sim.port}"


class Running:
    """A ``replayproxy`` process serving until :meth:`stop` (SIGINT), and what it printed."""

    def __init__(self, *args: str, confdir: Path) -> None:
        self.proc = subprocess.Popen(
            [REPLAYPROXY, *args, "--listen", "127.0.0.1:0", "--confdir", str(confdir)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
        )  # fmt: skip
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("listening on "):
            self.proc.kill()
            pytest.fail(f"did not start: {first!r} {self.proc.communicate()[1]!r}")
        self.url = first.split()[-1]
        self.ca: str | None = None
        if "--upstream" not in args:
            self.ca = self.proc.stdout.readline().split(" ", 1)[1].strip()

    def post(self, url: str) -> tuple[int, bytes]:
        """POST the chat to ``url``: directly with httpx (base URL), or through this forward
        proxy with curl (httpx 0.28 writes an IPv6 target without brackets in a proxy's
        request line, ``POST http://::1:PORT/...``, which mitmproxy rightly refuses)."""
        if self.ca is None:
            r = httpx.post(url, json=BODY, timeout=30)
            return r.status_code, r.content
        done = subprocess.run(
            ["curl", "-sg", "-x", self.url, "--cacert", self.ca, "-w", "\n%{http_code}",
             "-H", "content-type: application/json", "-d", json.dumps(BODY), url],
            capture_output=True, timeout=30, check=False,
        )  # fmt: skip
        body, _, code = done.stdout.rpartition(b"\n")
        return int(code or 0), body

    def stop(self) -> tuple[int, str]:
        """SIGINT, then its exit status and stderr (killed if it does not stop in 30 s)."""
        self.proc.send_signal(2)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


def _record(sim: Simulator, cassette: Path, confdir: Path, *, upstream: str | None) -> None:
    """Record one chat to ``upstream`` (reverse) or through the forward proxy."""
    mode = ["--upstream", upstream] if upstream is not None else []
    rec = Running("record", *mode, str(cassette), confdir=confdir)
    base = rec.url if upstream is not None else _url(sim)
    try:
        code, body = rec.post(base + PATH)
    finally:
        status, err = rec.stop()
    assert code == 200, body
    assert status == 0, err
    assert "does not parse" not in err


def _replay(cassette: Path, confdir: Path, *args: str) -> tuple[int, bytes, str]:
    rep = Running("replay", *args, str(cassette), confdir=confdir)
    base = rep.url if "--upstream" in args else cassette_base(cassette)
    try:
        code, body = rep.post(base + PATH)
    finally:
        status, err = rep.stop()
    assert status == 0, err
    return code, body, err


def cassette_base(cassette: Path) -> str:
    return store.load(cassette).interactions[0].request.url.removesuffix(PATH)


def test_reverse_mode_to_an_ipv6_upstream_records_and_replays(
    sim6: Simulator, tmp_path: Path, confdir: Path
) -> None:
    """``record --upstream http://[::1]:PORT``: the URL keeps its brackets (``cassette show``
    too); replay from the engine (base-URL) and through mitmproxy (``new_episodes``) serves
    it without asking the upstream again."""
    cassette = tmp_path / "c.cassette"
    _record(sim6, cassette, confdir, upstream=_url(sim6))
    (recorded,) = store.load(cassette).interactions
    assert recorded.request.url == _url(sim6) + PATH
    show = subprocess.run(
        [REPLAYPROXY, "cassette", "show", str(cassette)], capture_output=True, text=True
    )
    assert f"http://[::1]:{sim6.port}{PATH}" in show.stdout
    served = len(sim6.served)
    for mode in ([], ["--record-mode", "new_episodes"]):
        code, body, err = _replay(cassette, confdir, "--upstream", _url(sim6), *mode)
        assert code == 200, body
        assert b"data: [DONE]" in body
        assert "1 interaction served, 0 unmatched" in err
    assert len(sim6.served) == served


def test_forward_mode_to_an_ipv6_literal_records_and_replays(
    sim6: Simulator, tmp_path: Path, confdir: Path
) -> None:
    """curl through the forward proxy asking ``http://[::1]:PORT``: recorded with brackets,
    replayed by the forward proxy from the cassette."""
    cassette = tmp_path / "c.cassette"
    _record(sim6, cassette, confdir, upstream=None)
    assert store.load(cassette).interactions[0].request.url == _url(sim6) + PATH
    served = len(sim6.served)
    code, body, err = _replay(cassette, confdir)
    assert code == 200, body
    assert b"data: [DONE]" in body
    assert "1 interaction served, 0 unmatched" in err
    assert len(sim6.served) == served


def test_a_host_name_that_resolves_to_ipv6(sim6: Simulator, tmp_path: Path, confdir: Path) -> None:
    """``ip6-localhost`` / ``localhost6`` (where /etc/hosts has them) as the upstream."""
    for name in ("ip6-localhost", "localhost6"):
        try:
            found = {a[4][0] for a in socket.getaddrinfo(name, None, socket.AF_INET6)}
        except socket.gaierror:
            continue
        if found == {"::1"}:
            break
    else:
        pytest.skip("no host name resolves to ::1 only here (ip6-localhost, localhost6)")
    cassette = tmp_path / "c.cassette"
    _record(sim6, cassette, confdir, upstream=_url(sim6, name))
    assert store.load(cassette).interactions[0].request.url == _url(sim6, name) + PATH
    code, body, _ = _replay(cassette, confdir, "--upstream", _url(sim6, name))
    assert code == 200, body


@pytest.mark.parametrize("command", ["record", "replay"])
def test_an_unbalanced_bracket_is_one_line(command: str, tmp_path: Path) -> None:
    """``--upstream 'http://[::1'`` on the command line: exit 2, one line, no traceback."""
    target = tmp_path / "c.cassette"
    if command == "replay":
        store.save(target, store.load(Path(__file__).parents[2] / "cassettes/gemini-text.cassette"))
    done = subprocess.run(
        [REPLAYPROXY, command, "--upstream", "http://[::1", str(target)],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "error: invalid upstream 'http://[::1': expected http://HOST[:PORT] or https://...\n"
    )


def test_use_cassette_refuses_an_unbalanced_bracket(tmp_path: Path) -> None:
    """The Python API gives the same one-line UsageError (the one validator in core/replay)."""
    with (
        pytest.raises(UsageError, match=r"^invalid upstream 'http://\[::1': expected"),
        use_cassette(tmp_path / "c.cassette", upstream="http://[::1"),
    ):
        pass
