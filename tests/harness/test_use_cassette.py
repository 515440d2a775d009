"""The Python API: use_cassette() in both modes, in this process, with a private pool."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy import use_cassette
from replayproxy._errors import UsageError
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import Simulator

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def pool() -> Iterator[HostPool]:
    """A pool of our own, closed after the test (one embedded mitmproxy per process)."""
    p = HostPool()
    yield p
    p.close()


def test_base_url_replay_uses_the_engine_and_no_mitmproxy(
    pool: HostPool, tmp_path: Path, simulator: Simulator
) -> None:
    """Base-URL mode records through mitmproxy, then replays through the in-process engine
    (the pool starts no mitmproxy for it); the summary and the misses say what happened."""
    path = tmp_path / "c.cassette"
    with use_cassette(
        path,
        upstream=simulator.url,
        record_mode="once",
        pool=pool,
        confdir=str(tmp_path / "mitmproxy"),
    ) as rp:
        assert httpx.post(rp.url + "/v1/chat/completions", json=BODY).status_code == 200
    assert rp.summary().new == 1
    pool.close()
    with use_cassette(path, upstream="https://api.openai.com", speed=0, pool=pool) as rp:
        ok = httpx.post(rp.url + "/v1/chat/completions", json=BODY)
        miss = httpx.post(rp.url + "/v1/chat/completions", json=dict(BODY, model="x"))
    assert pool._mitm is None and pool._engine is not None
    assert (ok.status_code, miss.status_code) == (200, 500)
    assert (rp.summary().served, rp.summary().unmatched) == (1, 1)
    assert 'body at /model: recorded "m", requested "x"' in rp.explain()
    assert rp.env == {"REPLAYPROXY_URL": rp.url}


def test_proxy_mode_sets_the_environment_for_the_block_only(
    pool: HostPool, tmp_path: Path, simulator: Simulator
) -> None:
    """Proxy mode sets HTTPS_PROXY, the CA variables and REPLAYPROXY_URL for the block and
    restores them after; a client created inside records through the proxy."""
    os.environ.pop("HTTPS_PROXY", None)
    path = tmp_path / "c.cassette"
    confdir = str(tmp_path / "mitmproxy")
    with use_cassette(path, record_mode="new_episodes", pool=pool, confdir=confdir) as rp:
        assert os.environ["HTTPS_PROXY"] == rp.url
        assert os.environ["SSL_CERT_FILE"] == rp.ca_cert
        assert os.environ["REPLAYPROXY_URL"] == rp.url
        response = httpx.post(simulator.url + "/v1/chat/completions", json=BODY)
        assert response.status_code == 200
    assert "HTTPS_PROXY" not in os.environ
    assert len(simulator.served) == 1
    assert len(store.load(path).interactions) == 1
    with use_cassette(path, set_env=False, pool=pool, confdir=confdir) as rp:
        assert "HTTPS_PROXY" not in os.environ
        with httpx.Client(proxy=rp.url) as client:
            again = client.post(simulator.url + "/v1/chat/completions", json=BODY)
    assert again.content == response.content
    assert len(simulator.served) == 1  # replayed, not forwarded


def test_bad_arguments_are_one_line_errors(pool: HostPool, tmp_path: Path) -> None:
    """An unknown option, a bad mode, an upstream with a path or a bad port, or a speed out of
    range is refused before starting."""
    for kwargs, message in [
        ({"sped": 0}, "unknown option 'sped'"),
        ({"record_mode": "rewind"}, "record mode must be one of"),
        ({"upstream": "https://api.openai.com/v1"}, "give only scheme://HOST"),
        (
            {"upstream": "http://127.0.0.1:99999"},
            "invalid upstream 'http://127.0.0.1:99999': bad port",
        ),
        ({"speed": "0.0001"}, "speed must be 0 or from 0.001 to 1e\\+06, got '0.0001'"),
    ]:
        with (
            pytest.raises(UsageError, match=message),
            use_cassette(tmp_path / "c.cassette", pool=pool, **kwargs),
        ):
            pass
    assert pool._mitm is None and pool._engine is None
