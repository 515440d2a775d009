"""Record modes in one proxy: the session's Passthrough, the growing matcher, and
`replayproxy replay --record-mode` forwarding, streaming and appending what it cannot replay."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Request
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._engine.session import Passthrough, ReplaySession, Served
from replayproxy._errors import CassetteError, UsageError
from replayproxy.testing import Simulator, cassette, interaction, sse_frames

BODY_A = b'{"model":"m","stream":true,"n":1}'
BODY_B = b'{"model":"m","stream":true,"n":2}'
URL = "https://api.openai.invalid/v1/chat/completions"


def _request(body: bytes) -> Request:
    return Request("POST", URL, body=body)


def test_new_episodes_replays_matches_and_passes_the_rest_through(tmp_path: Path) -> None:
    """A recorded request is served; a new one is a Passthrough; once recorded it is
    appended to the file, counted as new, and (being used) a repeat passes through again."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction(sse_frames(2), body=BODY_A)))
    session = ReplaySession(path, record_mode="new_episodes")
    assert isinstance(session.resolve(_request(BODY_A)), Served)
    assert isinstance(session.resolve(_request(BODY_B)), Passthrough)
    session.record(interaction(sse_frames(1), body=BODY_B))
    session.close()
    assert [i.request.body for i in store.load(path).interactions] == [BODY_A, BODY_B]
    summary = session.summary()
    assert (summary.served, summary.unmatched, summary.new, summary.unused) == (1, 0, 1, ())
    assert "1 new interaction recorded" in summary.line()
    assert isinstance(session.resolve(_request(BODY_A)), Passthrough)  # A used up


def test_recorded_interaction_is_replayed_again_with_allow_repeats(tmp_path: Path) -> None:
    """The matcher grows: with allow_repeats, what was just recorded answers a repeat."""
    path = tmp_path / "c.cassette"
    session = ReplaySession(
        path, record_mode="new_episodes", options=MatchOptions(allow_repeats=True)
    )
    assert isinstance(session.resolve(_request(BODY_A)), Passthrough)
    session.record(interaction(sse_frames(1), body=BODY_A))
    # a missing cassette records everything (nothing to replay yet), like VCR.py
    assert isinstance(session.resolve(_request(BODY_A)), Passthrough)
    session.close()
    again = ReplaySession(
        path, record_mode="new_episodes", options=MatchOptions(allow_repeats=True)
    )
    assert isinstance(again.resolve(_request(BODY_A)), Served)
    again.record(interaction(sse_frames(1), body=BODY_B))
    assert isinstance(again.resolve(_request(BODY_B)), Served)  # the grown matcher answers


def test_once_with_a_cassette_is_replay_only_and_never_opens_it(tmp_path: Path) -> None:
    """`once` on an existing cassette misses a new request and never writes the file."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction(sse_frames(1), body=BODY_A)))
    before = path.read_bytes()
    session = ReplaySession(path, record_mode="once")
    miss = session.resolve(_request(BODY_B))
    assert not isinstance(miss, (Served, Passthrough))
    assert session.sink is None
    session.close()
    assert path.read_bytes() == before


def test_all_replaces_the_cassette_only_when_something_is_recorded(tmp_path: Path) -> None:
    """`all` never replays; the old interactions are kept until the first new one is written,
    which starts a fresh file."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction(sse_frames(1), body=BODY_A)))
    session = ReplaySession(path, record_mode="all")
    assert isinstance(session.resolve(_request(BODY_A)), Passthrough)
    assert len(store.load(path).interactions) == 1  # untouched so far
    session.record(interaction(sse_frames(1), body=BODY_B))
    session.close()
    assert [i.request.body for i in store.load(path).interactions] == [BODY_B]


def test_none_with_a_missing_cassette_is_an_error_unless_missing_ok(tmp_path: Path) -> None:
    """The CLI refuses a missing cassette; the Python API treats it as empty (all misses)."""
    with pytest.raises(CassetteError, match="no such cassette file"):
        ReplaySession(tmp_path / "missing.cassette")
    session = ReplaySession(tmp_path / "missing.cassette", missing_ok=True)
    assert not session.exists
    assert not isinstance(session.resolve(_request(BODY_A)), (Served, Passthrough))


def test_record_in_none_mode_and_an_unwritable_cassette_are_clear_errors(tmp_path: Path) -> None:
    """Recording is refused in mode none, and a cassette that cannot be created says why."""
    store.save(tmp_path / "c.cassette", cassette())
    with pytest.raises(UsageError, match="does not record"):
        ReplaySession(tmp_path / "c.cassette").record(interaction(sse_frames(1)))
    (tmp_path / "file").write_text("")
    blocked = ReplaySession(tmp_path / "file" / "c.cassette", record_mode="once")
    with pytest.raises(CassetteError, match="cannot create directory"):
        blocked.record(interaction(sse_frames(1)))


CLIENT = textwrap.dedent("""
    import os, sys, httpx
    base = os.environ["REPLAYPROXY_URL"] + "/v1/chat/completions"
    for prompt in sys.argv[1:]:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}
        r = httpx.post(base, json=body, headers={"authorization": "Bearer sk-secret"})
        print(prompt, r.status_code, r.content.count(b"data:"))
""")


def _replay(cassette_path: Path, upstream: str, mode: str, *prompts: str) -> str:
    done = subprocess.run(
        [
            sys.executable, "-m", "replayproxy", "replay", "--listen", "127.0.0.1:0",
            "--upstream", upstream, "--record-mode", mode, "--speed", "0",
            str(cassette_path), "--", sys.executable, "-c", CLIENT, *prompts,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.slow
def test_cli_new_episodes_forwards_only_the_new_request(tmp_path: Path) -> None:
    """`replay --record-mode new_episodes` (base URL): the recorded request is replayed, the
    new one forwarded (one upstream connection), streamed whole to the client, and appended
    with its secret redacted; `none` then replays both without the upstream."""
    path = tmp_path / "s.cassette"
    with Simulator() as sim:
        out = _replay(path, sim.url, "once", "first")
        assert sim.connections == 1
        sim.clear()
        out = _replay(path, sim.url, "new_episodes", "first", "second")
        assert sim.connections == 2  # one more: the new request only
        assert [s.request.body.count(b"second") for s in sim.served] == [1]
    lines = dict(line.split(" ", 1) for line in out.splitlines() if line[:5] in ("first", "secon"))
    assert lines["first"] == lines["second"]  # the same stream, replayed and forwarded
    assert "1 interaction served, 0 unmatched requests" in out
    assert "1 new interaction recorded" in out
    recorded = store.load(path).interactions
    assert len(recorded) == 2
    assert b"sk-secret" not in path.read_bytes()
    out = _replay(path, "http://127.0.0.1:9", "none", "first", "second")
    assert "2 interactions served, 0 unmatched requests" in out
