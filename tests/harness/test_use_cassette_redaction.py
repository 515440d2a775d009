"""use_cassette() with the record options: a custom header, query parameter or body field is
redacted in the cassette it records (real mitmproxy, a real client, the simulator upstream)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import use_cassette
from replayproxy._core.redaction.secrets import REDACTED
from replayproxy._errors import UsageError
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import Simulator

HEADER_SECRET = "hdr-secret-5f1c"
QUERY_SECRET = "qry-secret-8a2d"
BODY_SECRET = "body-secret-3e9b"


def _body(user: str = BODY_SECRET) -> dict[str, object]:
    return {
        "model": "m",
        "stream": True,
        "user": user,
        "messages": [{"role": "user", "content": "hi"}],
    }


@pytest.fixture
def pool() -> Iterator[HostPool]:
    """A pool of our own, closed after the test (one embedded mitmproxy per process)."""
    p = HostPool()
    yield p
    p.close()


def test_base_url_recording_redacts_a_custom_header_and_body_field(
    pool: HostPool, tmp_path: Path, simulator: Simulator
) -> None:
    """redact_header and redact_body_field keep those values out of the recorded bytes (the
    marker in their place) while the upstream still got them as sent."""
    path = tmp_path / "c.cassette"
    with use_cassette(
        path,
        upstream=simulator.url,
        record_mode="once",
        redact_header=["X-Custom-Key"],
        redact_body_field=["/user"],
        pool=pool,
        confdir=str(tmp_path / "mitmproxy"),
    ) as rp:
        response = httpx.post(
            rp.url + "/v1/chat/completions",
            json=_body(),
            headers={"x-custom-key": HEADER_SECRET},
        )
        assert response.status_code == 200
    assert rp.summary().new == 1
    sent = simulator.served[0].request
    assert (dict(sent.headers)["x-custom-key"], BODY_SECRET.encode() in sent.body) == (
        HEADER_SECRET,
        True,
    )
    data = path.read_bytes()
    assert HEADER_SECRET.encode() not in data
    assert BODY_SECRET.encode() not in data
    assert data.count(REDACTED) >= 2


def test_proxy_mode_redacts_a_query_parameter_per_session(
    pool: HostPool, tmp_path: Path, simulator: Simulator
) -> None:
    """redact_query applies to the session that asked for it: the same proxy, serving a
    second session without it, records that session's value as sent."""
    confdir = str(tmp_path / "mitmproxy")
    url = simulator.url + f"/v1/chat/completions?session={QUERY_SECRET}"
    redacted, kept = tmp_path / "redacted.cassette", tmp_path / "kept.cassette"
    with use_cassette(
        redacted, record_mode="once", redact_query=["session"], pool=pool, confdir=confdir
    ):
        assert httpx.post(url, json=_body("u")).status_code == 200
    with use_cassette(kept, record_mode="once", pool=pool, confdir=confdir):
        assert httpx.post(url, json=_body("u")).status_code == 200
    assert QUERY_SECRET.encode() not in redacted.read_bytes()
    assert b"session=" + REDACTED in redacted.read_bytes()
    assert QUERY_SECRET.encode() in kept.read_bytes()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"redact_body_field": ["user"]}, "option 'redact_body_field': invalid body field"),
        ({"redact_header": ["bad name"]}, "option 'redact_header': invalid name to redact"),
    ],
)
def test_bad_record_options_are_one_line_errors(
    pool: HostPool, tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    """A bad record option is refused before anything starts, naming the keyword."""
    with (
        pytest.raises(UsageError, match=message) as info,
        use_cassette(tmp_path / "c.cassette", record_mode="once", pool=pool, **kwargs),
    ):
        pass
    assert "\n" not in str(info.value)
    assert pool._mitm is None and pool._engine is None
