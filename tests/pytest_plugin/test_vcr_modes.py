"""pytest-recording's modes and switches in the plugin: record mode ``rewrite`` replaces a
test's cassette with a fresh recording (the old interactions gone, no temporary file left), and
``--replayproxy-disable-recording`` runs the tests straight against the upstream, with no
proxy, no environment changes and no cassette (real inner pytest runs, the simulator as the
real API)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy.testing import Simulator
from tests.pytest_plugin.project import cassette, run, write_tests

pytestmark = pytest.mark.slow


def test_rewrite_replaces_the_cassette(pytester: pytest.Pytester, confdir: Path) -> None:
    """A cassette recorded with one prompt, rewritten after the test changed its prompt: only
    the new interaction is left, it replays offline, and no temporary file remains."""
    write_tests(pytester, "test_chat")
    path = cassette(pytester, "test_chat")
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
        old = store.load(path).interactions
        assert len(old) == 1 and b"test_chat" in old[0].request.body
        pytester.makepyfile(
            test_example=(path.parents[2] / "test_example.py")
            .read_text()
            .replace("chat(replayproxy, 'test_chat')", "chat(replayproxy, 'a new prompt')")
        )
        result = run(
            pytester, "--replayproxy-record-mode=rewrite", upstream=sim.url, confdir=confdir
        )
        result.assert_outcomes(passed=1)
    (new,) = store.load(path).interactions
    assert b"a new prompt" in new.request.body and b"test_chat" not in new.request.body
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    result = run(pytester, "--replayproxy-record-mode=none", upstream="http://127.0.0.1:9")
    result.assert_outcomes(passed=1)


DIRECT = textwrap.dedent("""
    import os

    import httpx
    import pytest

    UPSTREAM = os.environ["RP_UPSTREAM"]
    BEFORE = dict(os.environ)  # at import: before any fixture ran


    @pytest.mark.replayproxy(upstream=UPSTREAM, record_mode="none")
    def test_base_url(replayproxy):
        assert replayproxy.url == UPSTREAM
        assert "REPLAYPROXY_URL" not in os.environ
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        response = httpx.post(replayproxy.url + "/v1/chat/completions", json=body)
        assert response.status_code == 200 and b"data: [DONE]" in response.content


    def test_proxy_mode(replayproxy):
        assert replayproxy.url is None and replayproxy.proxy_mode
        assert {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"} == {
            k: v for k, v in BEFORE.items() if k != "PYTEST_CURRENT_TEST"
        }
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "yo"}]}
        response = httpx.post(UPSTREAM + "/v1/chat/completions", json=body)
        assert response.status_code == 200
""")


def test_disable_recording_reaches_the_upstream_directly(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """With --replayproxy-disable-recording a record-mode-none test that has no cassette
    passes against the simulator itself (it served both requests), the fixture's url is the
    marker's upstream (None without one), no proxy variable is set and no cassette written."""
    pytester.makepyfile(test_example=DIRECT)
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-disable-recording", upstream=sim.url)
        result.assert_outcomes(passed=2)
        assert len(sim.served) == 2
    assert not (pytester.path / "cassettes").exists()
    with Simulator() as sim:  # without the switch the same test is a miss: no cassette
        result = run(pytester, "-k", "base_url", upstream=sim.url, confdir=confdir)
        result.assert_outcomes(failed=1)
        assert len(sim.served) == 0
