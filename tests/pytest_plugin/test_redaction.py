"""The record options from pytest: the marker, `replayproxy_config`, ini keys and flags keep
custom secrets out of the cassettes a test suite records (real inner pytest runs through
mitmproxy, the simulator upstream); a bad value fails the test naming where it was set."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from replayproxy._core.redaction.secrets import REDACTED
from replayproxy.testing import Simulator
from tests.pytest_plugin.project import cassette, run

pytestmark = pytest.mark.slow

SECRETS = {
    "header": "hdr-secret-c0ffee",
    "flag_header": "flag-secret-beef42",
    "query": "qry-secret-d00d1e",
    "body": "body-secret-f00d77",
}

REDACTING = textwrap.dedent(f"""
    import os

    import httpx
    import pytest

    UPSTREAM = os.environ["RP_UPSTREAM"]


    @pytest.fixture
    def replayproxy_config():
        return {{"upstream": UPSTREAM, "redact_header": ["x-custom-key"]}}


    @pytest.mark.replayproxy(redact_body_field=["/user"])
    def test_secrets(replayproxy):
        body = {{"model": "m", "stream": True, "user": "{SECRETS["body"]}",
                "messages": [{{"role": "user", "content": "hi"}}]}}
        response = httpx.post(
            replayproxy.url + "/v1/chat/completions?session={SECRETS["query"]}",
            json=body,
            headers={{"x-custom-key": "{SECRETS["header"]}",
                     "x-other-key": "{SECRETS["flag_header"]}"}},
        )
        assert response.status_code == 200
""")


def test_marker_config_ini_and_flag_redact_what_the_suite_records(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """redact_header from replayproxy_config, redact_body_field from the marker, redact_query
    from the ini key and --replayproxy-redact-header from the command line: none of their
    values reaches the cassette, the marker does; the upstream got them all as sent."""
    pytester.makepyfile(test_example=REDACTING)
    pytester.makeini("[pytest]\nreplayproxy_redact_query =\n    session\n")
    with Simulator() as sim:
        result = run(
            pytester,
            "--replayproxy-record-mode=once",
            "--replayproxy-redact-header=x-other-key",
            upstream=sim.url,
            confdir=confdir,
        )
        result.assert_outcomes(passed=1)
        sent = sim.served[0].request
    assert all(s in f"{sent.target} {sent.headers} {sent.body!r}" for s in SECRETS.values())
    data = cassette(pytester, "test_secrets").read_bytes()
    for name, secret in SECRETS.items():
        assert secret.encode() not in data, name
    assert b"session=" + REDACTED in data
    assert data.count(REDACTED) >= 4


BAD = textwrap.dedent("""
    import pytest


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", redact_body_field=["user"])
    def test_bad_value(replayproxy):
        pass


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", redact_headers=["x"])
    def test_unknown_keyword(replayproxy):
        pass
""")


def test_bad_record_options_fail_the_test_naming_where_they_were_set(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A bad marker value names the marker keyword, an unknown keyword is named as one, a bad
    ini value names the ini key: each one line, no traceback."""
    pytester.makepyfile(test_bad=BAD)
    result = run(pytester, upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*replayproxy: @pytest.mark.replayproxy keyword 'redact_body_field': invalid body "
            "field to redact: JSON pointer must start with '/': 'user'",
            "*replayproxy: unknown @pytest.mark.replayproxy keyword 'redact_headers' (known: *",
        ],
        consecutive=False,
    )
    assert "Traceback" not in result.stdout.str()
    pytester.makeini("[pytest]\nreplayproxy_redact_header =\n    bad name\n")
    result = run(pytester, "-k", "bad_value", upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*replayproxy: ini key replayproxy_redact_header: invalid name to redact: 'bad name'"]
    )
