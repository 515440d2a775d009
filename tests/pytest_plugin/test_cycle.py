"""The record-once / CI / add-a-test cycle, run on an example project against the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette import codec
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.project import cassette, run, write_tests

pytestmark = pytest.mark.slow


def test_once_records_a_cassette_per_test_then_none_replays_offline(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """`once` records one cassette per test at the default path; `none` then passes with the
    simulator stopped and zero connections to the upstream."""
    write_tests(pytester, "test_one", "test_two", "test_three")
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
        result.assert_outcomes(passed=3)
        assert len(sim.served) == 3
    for name in ("test_one", "test_two", "test_three"):
        assert len(store.load(cassette(pytester, name)).interactions) == 1
    upstream = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, "--replayproxy-record-mode=none", upstream=upstream, confdir=confdir)
    result.assert_outcomes(passed=3)
    assert counter.connections == 0


def test_a_new_test_fails_in_none_then_new_episodes_records_only_it(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """A new test fails alone in `none`, naming its request; `new_episodes` records just that
    request (one upstream connection), and the next `none` run passes everything."""
    write_tests(pytester, "test_one", "test_two")
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    write_tests(pytester, "test_one", "test_two", "test_new")
    offline = f"http://127.0.0.1:{counter.port}"
    result = run(pytester, upstream=offline, confdir=confdir)  # none is the default
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*replayproxy: cassette *test_new.cassette does not exist*",
            "*no recorded interaction matches POST /v1/chat/completions*",
            "*FAILED test_example.py::test_new*",
        ]
    )
    assert "Error code" not in result.stdout.str()
    before = {n: cassette(pytester, n).read_bytes() for n in ("test_one", "test_two")}
    with Simulator() as sim:
        result = run(
            pytester, "--replayproxy-record-mode=new_episodes", upstream=sim.url, confdir=confdir
        )
        result.assert_outcomes(passed=3)
        assert sim.connections == 1
        assert len(sim.served) == 1
    assert {n: cassette(pytester, n).read_bytes() for n in before} == before
    assert len(store.load(cassette(pytester, "test_new")).interactions) == 1
    result = run(pytester, upstream=offline, confdir=confdir)
    result.assert_outcomes(passed=3)
    assert counter.connections == 0


def test_a_changed_request_names_the_difference(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """A request that changed since recording fails its test with the nearest recorded request
    and the first differing body field, not just the client's 500."""
    write_tests(pytester, "test_one")
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    source = (pytester.path / "test_example.py").read_text()
    (pytester.path / "test_example.py").write_text(source.replace("'test_one'", "'changed'"))
    result = run(pytester, upstream=f"http://127.0.0.1:{counter.port}", confdir=confdir)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no recorded interaction matches POST /v1/chat/completions*",
            "*closest recorded interaction: #0, which differs in*",
            '*body at /messages/0/content: recorded "test_one", requested "changed"*',
        ]
    )


def test_all_replaces_a_cassette_and_once_never_touches_one(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """`all` records the test again into a fresh cassette (not appended); `once` leaves an
    existing cassette byte for byte as it was, even when the test's request is new."""
    write_tests(pytester, "test_one")
    path = cassette(pytester, "test_one")
    with Simulator() as sim:
        run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
        first = path.read_bytes()
        result = run(pytester, "--replayproxy-record-mode=all", upstream=sim.url, confdir=confdir)
        result.assert_outcomes(passed=1)
        assert len(sim.served) == 2
    replaced = path.read_bytes()
    assert replaced != first  # recorded again (new timestamps)
    interactions = store.load(path).interactions
    assert len(interactions) == 1
    old = codec.decode(first).cassette.interactions[0]
    assert (interactions[0].recorded_at or 0) > (old.recorded_at or 0)

    source = (pytester.path / "test_example.py").read_text()
    (pytester.path / "test_example.py").write_text(source.replace("'test_one'", "'changed'"))
    mtime = path.stat().st_mtime_ns
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
        result.assert_outcomes(failed=1)
        assert sim.connections == 0
    assert path.read_bytes() == replaced
    assert path.stat().st_mtime_ns == mtime
