"""The stream_snapshot fixture in a pytest run: a missing snapshot fails, the update flag and
the environment variable write it, a changed stream fails with the event diff, several
snapshots per test, and the snapshot layout beside the test."""

from __future__ import annotations

import json
import os

import pytest

from replayproxy.testing._snapshot import ENV_UPDATE

INNER = """
import json
import os

import httpx

from replayproxy.testing._capture import StreamCapture
from replayproxy.testing._capture_data import CapturedEvent, CapturedFrame

FINISH = os.environ.get("RP_FINISH", "stop")


def capture(finish, run_id):
    chunks = [
        {"id": run_id, "created": len(run_id), "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]},
        {"id": run_id, "created": len(run_id), "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    texts = [json.dumps(c) for c in chunks] + ["[DONE]"]
    frames = tuple(CapturedFrame(5.0 * i, b"data: " + t.encode() + b"\\n\\n")
                   for i, t in enumerate(texts))
    events = tuple(CapturedEvent(None, c, t, None, 5.0 * i)
                   for i, (c, t) in enumerate(zip([*chunks, "[DONE]"], texts)))
    return StreamCapture("POST", "http://127.0.0.1:1/v1/chat/completions", 200,
                         httpx.Headers({"content-type": "text/event-stream"}), frames, events,
                         b"", "complete", True)


def test_turn(stream_snapshot):
    stream_snapshot(capture(FINISH, os.environ.get("RP_RUN", "a")))


def test_two(stream_snapshot):
    stream_snapshot(capture("stop", "x"), name="first")
    stream_snapshot(capture("length", "y"), name="second")
    stream_snapshot(capture("stop", "z"))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_inner=INNER)
    return pytester


def run(p: pytest.Pytester, *args: str, **env: str) -> pytest.RunResult:
    for name in (ENV_UPDATE, "RP_FINISH", "RP_RUN"):
        os.environ.pop(name, None)  # the conftest's isolated_env restores os.environ
    os.environ.update(env)
    return p.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def test_missing_then_flag_writes_then_match_then_mismatch(project: pytest.Pytester) -> None:
    """No snapshot: fails naming the flag; --replayproxy-snapshot-update writes them beside the
    test; another recording with other ids passes; a changed finish reason fails with the
    field and both values; the flag rewrites it."""
    first = run(project, "-k", "test_turn")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*no snapshot*test_turn.json*--replayproxy-snapshot-update*"])
    snap = project.path / "__snapshots__" / "test_inner" / "test_turn.json"
    assert not snap.exists()

    run(project, "-k", "test_turn", "--replayproxy-snapshot-update").assert_outcomes(passed=1)
    assert json.loads(snap.read_text())["terminated_once"] is True

    run(project, "-k", "test_turn", RP_RUN="another-run-id").assert_outcomes(passed=1)

    changed = run(project, "-k", "test_turn", RP_FINISH="length")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        ['*event 1 (chat.completion.chunk): /choices/0/finish_reason: "stop" → "length"*']
    )
    run(project, "-k", "test_turn", "--replayproxy-snapshot-update", RP_FINISH="length")
    run(project, "-k", "test_turn", RP_FINISH="length").assert_outcomes(passed=1)


def test_environment_variable_and_several_snapshots_per_test(project: pytest.Pytester) -> None:
    """REPLAYPROXY_SNAPSHOT_UPDATE=1 writes every snapshot of a test: named ones by name, an
    unnamed one after the test; then they match without it."""
    run(project, "-k", "test_two", **{ENV_UPDATE: "1"}).assert_outcomes(passed=1)
    folder = project.path / "__snapshots__" / "test_inner"
    assert sorted(p.name for p in folder.iterdir()) == [
        "first.json",
        "second.json",
        "test_two.json",
    ]
    run(project, "-k", "test_two").assert_outcomes(passed=1)


def test_the_flag_is_in_the_help(pytester: pytest.Pytester) -> None:
    """pytest --help lists --replayproxy-snapshot-update in the replayproxy group."""
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--replayproxy-snapshot-update*"])
