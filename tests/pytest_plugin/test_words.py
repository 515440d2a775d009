"""A failing test says what to type where it is read: the marker keyword and the pytest option
(never a CLI flag), the cassette and the command that re-records this one test, once, with no
line for the host that base-URL mode never compares. The CLI keeps its own flags."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from replayproxy import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import run, write_tests

pytestmark = pytest.mark.slow

SDK_TEST = """

def test_sdk(replayproxy):
    import openai
    client = openai.OpenAI(base_url=replayproxy.url + "/v1", api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": PROMPT}]
    )
    for _ in stream:
        pass
"""


def test_a_changed_prompt_fails_once_in_pytest_words(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """Recorded with one prompt, run with another through the openai SDK (whose exception
    carries the 500 body): the failure names the marker keyword, the pytest option, the
    cassette and the re-record command, each exactly once, and no host line."""
    path = write_tests(pytester)
    path.write_text(path.read_text() + "\nPROMPT = 'Say hi'\n" + SDK_TEST)
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    path.write_text(path.read_text().replace("'Say hi'", "'Say hello'"))
    result = run(pytester, upstream=f"http://127.0.0.1:{counter.port}", confdir=confdir)
    result.assert_outcomes(failed=1)
    # The failure section: under CI=true pytest repeats the whole message in its short summary.
    out = result.stdout.str().split("= FAILURES =", 1)[1].split("short test summary info")[0]
    print(out)
    expected = [
        'body at /messages/0/content: recorded "Say hi", requested "Say hello"',
        '@pytest.mark.replayproxy(ignore_body_field=["/messages/0/content"])',
        "--replayproxy-ignore-body-field=/messages/0/content",
        "cassette: cassettes/test_example/test_sdk.cassette",
        "pytest 'test_example.py::test_sdk' --replayproxy-record-mode=new_episodes",
        "--replayproxy-record-mode=rewrite",
        "(the test stopped at openai.InternalServerError)",
    ]
    for text in expected:
        assert out.count(text) == 1, text
    assert out.count("no recorded interaction matches") == 1
    assert "--ignore-body-field " not in out  # the CLI flag, which pytest rejects
    assert "host: recorded" not in out and "(host " not in out
    assert counter.connections == 0


CAUGHT_TEST = """

def test_sdk(replayproxy):
    import openai
    client = openai.OpenAI(base_url=replayproxy.url + "/v1", api_key="sk-test", max_retries=0)
    try:
        for _ in client.chat.completions.create(
            model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": PROMPT}]
        ):
            pass
    except openai.InternalServerError as e:
        print("CAUGHT:", str(e).replace(chr(10), " | "))
"""


def test_the_sdk_exception_inside_pytest_speaks_pytest_too(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """A test that catches the SDK's exception and prints it shows the marker keyword and the
    pytest option (the 500 body is spelt in pytest's words), never the CLI flag."""
    path = write_tests(pytester)
    path.write_text(path.read_text() + "\nPROMPT = 'Say hi'\n" + CAUGHT_TEST)
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    path.write_text(path.read_text().replace("'Say hi'", "'Say hello'"))
    result = run(pytester, "-s", upstream=f"http://127.0.0.1:{counter.port}", confdir=confdir)
    result.assert_outcomes(failed=1)  # the miss still fails the test
    caught = next(line for line in result.stdout.lines if "CAUGHT:" in line)
    assert '@pytest.mark.replayproxy(ignore_body_field=["/messages/0/content"])' in caught
    assert "--replayproxy-ignore-body-field=/messages/0/content" in caught
    assert "--ignore-body-field " not in caught
    assert counter.connections == 0


def test_the_cli_500_body_keeps_the_cli_flag(tmp_path: Path) -> None:
    """Through the CLI's engine (ReplayServer.for_session) the same miss names the CLI flag,
    and no uncompared host."""
    cassette = tmp_path / "chat.cassette"
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hi"}]}
    from replayproxy import use_cassette
    from replayproxy._harness.hosts import HostPool

    # A pool of its own, closed here: the process-wide one would keep an embedded mitmproxy
    # running, and there is one per process (other tests in this worker start theirs).
    pool = HostPool()
    try:
        with (
            Simulator() as sim,
            use_cassette(
                cassette, record_mode="once", upstream=sim.url, speed=0, pool=pool,
                confdir=str(tmp_path / "conf"),
            ) as rp,
        ):  # fmt: skip
            httpx.post(rp.url + "/v1/chat/completions", json=body, timeout=30).raise_for_status()
    finally:
        pool.close()
    body["messages"][0]["content"] = "Say hello"
    with ReplayServer.for_session(ReplaySession(cassette, speed=0)) as server:
        response = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "to match it, add: --ignore-body-field /messages/0/content" in message
    assert "host: recorded" not in message and "replayproxy-" not in message


def test_verbose_shows_the_cassette_and_the_summary_lists_cassettes(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """`-v` prints each test's cassette beside it; the summary section lists the cassettes
    written (recording run), then played and with unused interactions (a replay run in which
    one test changed its prompt): under `-n 2` the workers' cassettes merged."""
    write_tests(pytester, "test_a", "test_b")
    with Simulator() as sim:
        result = run(
            pytester, "-n", "2", "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir
        )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- replayproxy cassettes -*",
            "0 played",
            "2 written: cassettes/test_example/test_a.cassette (1), "
            "cassettes/test_example/test_b.cassette (1)",
            "0 with unused interactions",
        ]
    )
    path = pytester.path / "test_example.py"
    path.write_text(path.read_text().replace("'test_b'", "'changed'"))
    offline = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, "-v", "-n", "2", upstream=offline, confdir=confdir)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*PASSED [[]cassette: cassettes/test_example/test_a.cassette[]]*test_example.py::test_a*"]
    )
    result.stdout.fnmatch_lines(
        [
            "*- replayproxy cassettes -*",
            "1 played: cassettes/test_example/test_a.cassette (1)",
            "0 written",
            "1 with unused interactions: cassettes/test_example/test_b.cassette (1)",
        ]
    )
    result = run(pytester, "-v", "-k", "test_a", upstream=offline, confdir=confdir)
    result.stdout.fnmatch_lines(
        ["test_example.py::test_a PASSED [[]cassette: cassettes/test_example/test_a.cassette[]]*"]
    )
    assert counter.connections == 0


def test_a_module_that_fails_to_import_is_reported_not_an_internal_error(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A collection error gives pytest's usual error (the plugin's -v status hook sees a
    collect report, which has no user_properties), never an INTERNALERROR."""
    pytester.makepyfile(test_broken="import no_such_module_here\n")
    result = run(pytester, "-v", upstream="http://127.0.0.1:9", confdir=confdir)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out
    assert "ModuleNotFoundError" in out and result.ret == pytest.ExitCode.INTERRUPTED
