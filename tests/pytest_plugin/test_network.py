"""``--replayproxy-block-network`` in a real pytest run: a name lookup fails the test, a
swallowed refusal still fails it naming the host, ``allowed_hosts`` lets a host through, a
leftover thread's attempt names the test that started it.

Every inner run happens in a network namespace of its own with only loopback (``unshare -n``),
so nothing could leave the machine even if the block were broken; without one, the tests skip.
"""

from __future__ import annotations

import shutil
import sys

import pytest

pytestmark = pytest.mark.slow

INNER = """
import socket
import threading

import pytest

pytestmark = pytest.mark.replayproxy(upstream="http://127.0.0.1:9")
go, done = threading.Event(), threading.Event()


def test_resolves_a_name(replayproxy):
    socket.getaddrinfo("api.openai.com", 443)


def test_swallows_the_error(replayproxy):
    try:
        socket.create_connection(("api.swallowed.test", 443), timeout=5)
    except OSError as e:
        print("swallowed:", e)


def test_sdk_default_base_url(replayproxy):
    import openai

    client = openai.OpenAI(api_key="sk-test", max_retries=0)  # api.openai.com, not the proxy
    try:
        client.models.list()
    except openai.APIConnectionError as e:
        print("sdk error:", repr(e.__cause__))


@pytest.mark.replayproxy(allowed_hosts=["api.allowed.test"])
def test_allowed_by_marker(replayproxy):
    # Handed to the real resolver: it fails here (no network in this namespace), unblocked.
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("api.allowed.test", 443)


def test_allowed_by_option(replayproxy):
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("api.option.test", 443)


def test_starts_a_thread(replayproxy):
    def later():
        go.wait(30)
        try:
            socket.create_connection(("192.0.2.1", 80), timeout=1)
        except OSError:
            pass
        done.set()

    threading.Thread(target=later, name="leftover", daemon=True).start()


def test_runs_while_the_thread_connects(replayproxy):
    go.set()
    assert done.wait(30)


@pytest.fixture
def late(replayproxy):
    yield
    try:
        socket.getaddrinfo("api.late.test", 443)
    except OSError:
        pass


def test_attempt_after_the_body(late):
    pass


@pytest.mark.replayproxy(allowed_hosts=["host:http"])
def test_bad_allowed_host(replayproxy):
    pass
"""


def _run_offline(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    if shutil.which("unshare") is None or pytester.run("unshare", "-n", "true").ret != 0:
        pytest.skip("cannot create a network namespace here")
    command = " ".join(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-v", *args]
    )
    return pytester.run("unshare", "-n", "sh", "-c", f"ip link set lo up && exec {command}")


def test_the_block_fails_lookups_swallowed_errors_and_names_leftover_threads(
    pytester: pytest.Pytester,
) -> None:
    """Each refused attempt fails its test with a `replayproxy: blocked` line naming the host
    (and the option that allows it), even when swallowed; the allowed hosts pass; the
    leftover thread's attempt fails the later test and names the earlier one; an attempt
    after the test body (a fixture's teardown) fails the test at teardown."""
    pytester.makepyfile(test_inner=INNER)
    result = _run_offline(
        pytester, "--replayproxy-block-network", "--replayproxy-allowed-hosts=api.option.test"
    )
    out = result.stdout.str()
    outcomes = {
        "test_resolves_a_name": "FAILED",
        "test_swallows_the_error": "FAILED",
        "test_sdk_default_base_url": "FAILED",
        "test_allowed_by_marker": "PASSED",
        "test_allowed_by_option": "PASSED",
        "test_starts_a_thread": "PASSED",
        "test_runs_while_the_thread_connects": "FAILED",
        "test_attempt_after_the_body": "ERROR",
        "test_bad_allowed_host": "ERROR",
    }
    for test, outcome in outcomes.items():
        result.stdout.fnmatch_lines([f"*test_inner.py::{test} {outcome}*"])
    result.stdout.fnmatch_lines(
        [
            "*replayproxy: blocked name resolution of api.openai.com:443 (socket.getaddrinfo)"
            " (--replayproxy-block-network); to let api.openai.com through, add it to"
            " allowed_hosts (@pytest.mark.replayproxy(allowed_hosts=*",
        ]
    )
    assert "swallowed: replayproxy: blocked a connection to api.swallowed.test:443" in out
    result.stdout.fnmatch_lines(
        ["*replayproxy: blocked a connection to api.swallowed.test:443 (create_connection)*"]
    )
    # The SDK's own error (APIConnectionError, caused by httpx's) carries the block's message.
    assert "sdk error: ConnectError('replayproxy: blocked a connection to api.openai.com:443" in out
    result.stdout.fnmatch_lines(
        [
            "replayproxy: blocked a connection to 192.0.2.1:80 (create_connection) from thread"
            " 'leftover', started during test_inner.py::test_starts_a_thread *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_attempt_after_the_body*",
            "replayproxy: blocked name resolution of api.late.test:443 (socket.getaddrinfo)*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*replayproxy: allowed_hosts: 'host:http' is not a host, IP or host:port*"]
    )


def test_without_the_option_nothing_is_blocked(pytester: pytest.Pytester) -> None:
    """Without --replayproxy-block-network a lookup reaches the resolver (which fails in the
    namespace: that is the proof it was asked), and the test passes."""
    pytester.makepyfile(
        test_inner="""
import socket
import pytest

@pytest.mark.replayproxy(upstream="http://127.0.0.1:9")
def test_lookup(replayproxy):
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("api.openai.com", 443)
"""
    )
    _run_offline(pytester).assert_outcomes(passed=1)


PROXY_MODE = """
import httpx
import pytest
from replayproxy import _store as store
from replayproxy.testing import CHAT_BODY, CHAT_URL, cassette, interaction


@pytest.fixture
def replayproxy_cassette_dir(tmp_path):
    store.save(tmp_path / "test_replay.cassette", cassette(interaction()))
    return tmp_path


@pytest.mark.replayproxy
def test_replay(replayproxy):
    headers = {"content-type": "application/json"}
    response = httpx.post(CHAT_URL, content=CHAT_BODY, headers=headers, timeout=30)
    assert response.status_code == 200 and b"data: " in response.content
"""


def test_proxy_mode_replay_works_under_the_block(pytester: pytest.Pytester) -> None:
    """The block covers the whole process, the embedded mitmproxy included: replaying a
    cassette of a named HTTPS host through HTTPS_PROXY resolves and dials nothing outside."""
    pytester.makepyfile(test_proxy=PROXY_MODE)
    confdir = pytester.path / "mitmproxy"
    result = _run_offline(
        pytester, "--replayproxy-block-network", f"--replayproxy-confdir={confdir}"
    )
    result.assert_outcomes(passed=1)


def test_allowed_hosts_of_every_level_add_up() -> None:
    """The command line / ini hosts, replayproxy_config's and each marker's are all let
    through; a value that is not a host or a list of hosts is a one-line UsageError."""
    from replayproxy._errors import UsageError
    from replayproxy.pytest_plugin._network import hosts_from

    levels = [{"allowed_hosts": "a.test"}, {}, {"allowed_hosts": ["b.test", "c.test:443"]}]
    assert hosts_from(["cli.test"], levels) == ["cli.test", "a.test", "b.test", "c.test:443"]
    with pytest.raises(UsageError, match=r"^allowed_hosts: expected a list of hosts, got 3$"):
        hosts_from([], [{"allowed_hosts": 3}])
