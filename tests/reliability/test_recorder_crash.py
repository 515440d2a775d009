"""Real recorders: two `replayproxy record --append` processes on one cassette at once, one of
them killed with `kill -9` mid-stream, then a third appending: nothing finished is lost and the
cassette never needs a repair."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import EndKind
from replayproxy.testing import Behavior, Simulator
from tests.record.conftest import RecordProcess, clean_env

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "messages": []}


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator(behavior=Behavior(gap_s=0.02)) as s:
        yield s


def _post(url: str, n: int, errors: list[BaseException]) -> None:
    try:
        with httpx.Client(timeout=20) as client:
            for _ in range(n):
                client.post(url + "/v1/messages", json=BODY).raise_for_status()
    except BaseException as e:
        errors.append(e)


def test_two_recorders_and_a_kill_9_lose_nothing(tmp_path: Path, sim: Simulator) -> None:
    """Two recorders append at once (3 clients each); one is killed mid-stream; a third
    appends after: every finished interaction loads, at most the killed one's in-flight record
    is a torn tail, and appending after it cuts only that."""
    cassette = tmp_path / "c.cassette"
    args = ["--append", "--upstream", sim.url, "--confdir", str(tmp_path / "conf"), str(cassette)]
    a, b = RecordProcess(args, clean_env()), RecordProcess(args, clean_env())
    try:
        errors: list[BaseException] = []
        threads = [
            threading.Thread(target=_post, args=(p.url, 4, errors)) for p in (a, b, a, b, a, b)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        # Now kill -9 `a` while it is streaming a response.
        with httpx.Client(timeout=20) as client:  # noqa: SIM117
            with client.stream("POST", a.url + "/v1/messages", json=BODY) as r:
                for i, _chunk in enumerate(r.iter_raw()):
                    if i == 2:
                        a.proc.send_signal(signal.SIGKILL)
                        a.proc.wait(10)
                        break
        b.signal(signal.SIGINT)
        _, err = b.finish()
        assert b.proc.returncode == 0, err
    finally:
        a.kill()
        b.kill()
    decoded = codec.decode(cassette.read_bytes())  # never damage
    finished = decoded.cassette.interactions
    assert len(finished) == 24
    assert all(x.end.kind is EndKind.COMPLETE for x in finished)
    c = RecordProcess(args, clean_env())
    try:
        _post(c.url, 1, errors)
        c.signal(signal.SIGINT)
        c.finish()
    finally:
        c.kill()
    assert errors == []
    final = codec.decode(cassette.read_bytes())
    assert final.torn_at is None and len(final.cassette.interactions) == 25
    assert final.cassette.interactions[:24] == finished
    assert store.load(cassette) == final.cassette
