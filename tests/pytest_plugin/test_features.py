"""The plugin's other promises: xdist, the network block, unused interactions, markers and
options, and base-URL replay without importing mitmproxy."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import HEADER, cassette, chat_test, run, write_tests

pytestmark = pytest.mark.slow


def test_xdist_records_and_replays_with_two_workers(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """With `-n 2` each worker runs its own proxy: four tests in proxy mode record four
    cassettes, then replay offline."""
    write_tests(pytester, "test_a", "test_b", "test_c", "test_d")
    with Simulator() as sim:
        result = run(
            pytester,
            "-n",
            "2",
            "--replayproxy-record-mode=once",
            upstream=sim.url,
            mode="proxy",
            confdir=confdir,
        )
        result.assert_outcomes(passed=4)
        assert len(sim.served) == 4
    for name in ("test_a", "test_b", "test_c", "test_d"):
        assert len(store.load(cassette(pytester, name)).interactions) == 1
    offline = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, "-n", "2", upstream=offline, mode="proxy", confdir=confdir)
    result.assert_outcomes(passed=4)
    assert counter.connections == 0


BYPASS = """
import httpx
import pytest


@pytest.mark.replayproxy(upstream="http://127.0.0.1:9")
def test_client_ignoring_the_proxy(replayproxy):
    # trust_env=False: this client ignores HTTPS_PROXY and goes straight to the host.
    try:
        httpx.get("http://203.0.113.7/v1/models", timeout=5)  # TEST-NET-3, no route here
    except Exception as e:
        print("client error:", type(e).__name__, e)
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_network_block_fails_a_test_whose_client_bypasses_the_proxy(
    pytester: pytest.Pytester,
) -> None:
    """--replayproxy-block-network refuses a non-loopback connection and fails the test that
    made it, even though the client swallowed the error. Runs in a network namespace of its
    own with only loopback, so nothing could leave the machine either way."""
    pytester.makepyfile(test_bypass=BYPASS)
    script = (
        "ip link set lo up && exec "
        f"{sys.executable} -m pytest -p no:cacheprovider --replayproxy-block-network -s"
    )
    probe = pytester.run("unshare", "-n", "true", timeout=30)
    if probe.ret != 0:
        pytest.skip("cannot create a network namespace here")
    result = pytester.run("unshare", "-n", "sh", "-c", script, timeout=120)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*client error: *replayproxy: blocked a connection to 203.0.113.7:80*",
            "*replayproxy: blocked a connection to 203.0.113.7:80*",
        ]
    )


def test_unused_interactions_warn_or_fail_with_the_option(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A recorded interaction the test no longer asks for is a warning naming the cassette,
    and a failure with --replayproxy-fail-unused."""
    twice = HEADER + (
        "\n\ndef test_one(replayproxy):\n"
        "    chat(replayproxy, 'first')\n"
        "    if os.environ.get('RP_BOTH', '1') == '1':\n"
        "        chat(replayproxy, 'second')\n"
    )
    pytester.makepyfile(test_example=twice)
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    offline = "http://127.0.0.1:9"
    result = run(pytester, upstream=offline, confdir=confdir, env={"RP_BOTH": "0"})
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*ReplayproxyUnusedWarning: replayproxy: 1 of 2 recorded interactions of *"]
    )
    result = run(
        pytester,
        "--replayproxy-fail-unused",
        upstream=offline,
        confdir=confdir,
        env={"RP_BOTH": "0"},
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*were never used (#1)*"])


CONFIGURED = """
import os

import httpx
import pytest

UPSTREAM = os.environ["RP_UPSTREAM"]
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def replayproxy_config():
    return {"upstream": UPSTREAM, "speed": 0}


@pytest.mark.replayproxy(cassette="shared/chat.cassette")
def test_named_cassette(replayproxy):
    assert httpx.post(replayproxy.url + "/v1/chat/completions", json=BODY).status_code == 200


@pytest.mark.replayproxy(cassette="shared/chat.cassette", faults=["truncate:events=1"])
def test_marker_fault(replayproxy):
    response = httpx.post(replayproxy.url + "/v1/chat/completions", json=BODY)
    assert b"[DONE]" not in response.content
    print("mitmproxy imported:", "mitmproxy" in __import__("sys").modules)


class TestNames:
    @pytest.mark.parametrize("who", ["a/b", "a_b"])
    def test_param(self, replayproxy, who):
        body = dict(BODY, messages=[{"role": "user", "content": who}])
        assert httpx.post(replayproxy.url + "/v1/chat/completions", json=body).status_code == 200
"""


def test_marker_cassette_faults_config_fixture_and_names(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """`cassette=` (relative to the test file), `faults=`, the `replayproxy_config` fixture,
    class and parametrized names (distinct, filesystem-safe); base-URL replay with record
    mode none never imports mitmproxy."""
    pytester.makepyfile(test_configured=CONFIGURED)
    with Simulator() as sim:
        result = run(
            pytester,
            "--replayproxy-record-mode=once",
            "-k",
            "named or param",
            upstream=sim.url,
            confdir=confdir,
        )
        result.assert_outcomes(passed=3)
    assert (pytester.path / "shared" / "chat.cassette").exists()
    names = sorted(p.name for p in (pytester.path / "cassettes" / "test_configured").iterdir())
    assert len(names) == 2
    assert names[1] == "TestNames.test_param[a_b].cassette"
    assert names[0].startswith("TestNames.test_param[a_b]-") and "/" not in names[0]
    result = run(pytester, "-s", upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*mitmproxy imported: False*"])


def test_bad_settings_fail_the_test_in_one_line(pytester: pytest.Pytester, confdir: Path) -> None:
    """A malformed fault spec or record mode fails the test with a one-line error."""
    pytester.makepyfile(
        test_bad=HEADER.replace(
            "pytestmark = pytest.mark.replayproxy(",
            "pytestmark = pytest.mark.replayproxy(faults=['nonsense:x=1'], ",
        )
        + chat_test("test_one")
    )
    result = run(pytester, upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*replayproxy: *nonsense*"])
    assert "Traceback" not in result.stdout.str()
    result = run(pytester, "--replayproxy-record-mode=sometimes", upstream="x", confdir=confdir)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--replayproxy-record-mode*invalid choice*"])


def test_without_mitmproxy_replay_works_and_recording_says_what_is_missing(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """In an environment where mitmproxy cannot be imported (Python 3.11 beside the newest
    SDKs), base-URL replay passes and recording fails the test with a one-line reason."""
    write_tests(pytester, "test_one")
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    # A None entry in sys.modules makes every `import mitmproxy` raise ImportError.
    pytester.makeconftest("import sys\nsys.modules['mitmproxy'] = None\n")
    result = run(pytester, upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(passed=1)
    result = run(
        pytester, "--replayproxy-record-mode=all", upstream="http://127.0.0.1:9", confdir=confdir
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*replayproxy: proxy mode and recording need mitmproxy, which cannot be imported here*"]
    )
