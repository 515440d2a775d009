"""VCR.py's configuration names in the plugin: filter_headers / filter_query_parameters /
filter_post_data_parameters (names and (name, replacement) pairs) and before_record_request /
before_record_response keep what the suite says out of the cassette, and the cassette still
replays; the ini keys take the filters and refuse the callables (real inner pytest runs through
mitmproxy, the simulator upstream)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.redaction.secrets import REDACTED
from replayproxy.testing import Simulator
from tests.pytest_plugin.project import cassette, run

pytestmark = pytest.mark.slow

SECRETS = {
    "header": "hdr-secret-a1b2c3",
    "team": "team-secret-d4e5f6",
    "session": "sess-secret-0a0b0c",
    "token": "tok-secret-1d1e1f",
    "user": "user-secret-2a2b2c",
    "tenant": "tenant-secret-3d3e3f",
}

VCR_STYLE = textwrap.dedent(f"""
    import dataclasses
    import os

    import httpx
    import pytest

    UPSTREAM = os.environ["RP_UPSTREAM"]


    def drop_probe(request):
        return None if b"drop me" in request.body else request


    def mark_edited(interaction):
        response = dataclasses.replace(
            interaction.response,
            headers=(*interaction.response.headers, (b"x-edited-by", b"before-record-response")),
        )
        return dataclasses.replace(interaction, response=response)


    @pytest.fixture
    def replayproxy_config():
        return {{
            "upstream": UPSTREAM,
            "filter_headers": ["x-custom-key", ("x-team", "TEAM")],
            "before_record_request": drop_probe,
        }}


    def chat(replayproxy, prompt):
        body = {{"model": "m", "stream": True, "user": "{SECRETS["user"]}",
                "tenant": "{SECRETS["tenant"]}",
                "messages": [{{"role": "user", "content": prompt}}]}}
        response = httpx.post(
            replayproxy.url + "/v1/chat/completions"
            + "?session={SECRETS["session"]}&token={SECRETS["token"]}",
            json=body,
            headers={{"x-custom-key": "{SECRETS["header"]}", "x-team": "{SECRETS["team"]}"}},
        )
        assert response.status_code == 200, response.text
        assert b"data: [DONE]" in response.content


    @pytest.mark.replayproxy(
        filter_query_parameters=["session", ("token", "TOKEN")],
        filter_post_data_parameters=["user", ("tenant", "TENANT")],
        before_record_response=mark_edited,
    )
    def test_vcr_style(replayproxy):
        chat(replayproxy, "keep me")
        if os.environ.get("RP_RECORDING"):
            chat(replayproxy, "drop me")
""")


def test_vcr_filters_and_callables_shape_the_cassette_and_it_replays(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """Filtered names are stored as the redaction marker, pairs as their replacement; the
    request before_record_request returns None for is not in the cassette, the one
    before_record_response edits carries the edit; the upstream got everything as sent; a
    replay sending the real secrets again matches (replaced query and body fields ignored)."""
    pytester.makepyfile(test_example=VCR_STYLE)
    with Simulator() as sim:
        result = run(
            pytester,
            "--replayproxy-record-mode=once",
            upstream=sim.url,
            confdir=confdir,
            env={"RP_RECORDING": "1"},
        )
        result.assert_outcomes(passed=1)
        assert len(sim.served) == 2
        sent = sim.served[0].request
    assert all(s in f"{sent.target} {sent.headers} {sent.body!r}" for s in SECRETS.values())
    path = cassette(pytester, "test_vcr_style")
    data = path.read_bytes()
    for name, secret in SECRETS.items():
        assert secret.encode() not in data, name
    (recorded,) = store.load(path).interactions  # "drop me" was dropped
    request = recorded.request
    assert b"keep me" in request.body
    assert request.header("x-custom-key") == REDACTED.decode()
    assert request.header("x-team") == "TEAM"
    assert f"session={REDACTED.decode()}&token=TOKEN" in request.url
    assert b'"user":"<redacted>"' in request.body and b'"tenant":"TENANT"' in request.body
    assert recorded.response is not None
    assert recorded.response.header("x-edited-by") == "before-record-response"

    os.environ.pop("RP_RECORDING", None)
    result = run(pytester, "--replayproxy-record-mode=none", upstream="http://127.0.0.1:9")
    result.assert_outcomes(passed=1)


INI_FILTERED = textwrap.dedent("""
    import os

    import httpx
    import pytest

    UPSTREAM = os.environ["RP_UPSTREAM"]


    @pytest.mark.replayproxy(upstream=UPSTREAM)
    def test_ini(replayproxy):
        body = {"model": "m", "stream": True, "org": "org-secret-99",
                "messages": [{"role": "user", "content": "hi"}]}
        response = httpx.post(replayproxy.url + "/v1/chat/completions", json=body,
                              headers={"x-ini-key": "ini-secret-77"})
        assert response.status_code == 200
""")


def test_ini_keys_take_filters_and_refuse_callables(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """replayproxy_filter_headers takes NAME=REPLACEMENT lines, replayproxy_filter_post_data_
    parameters names; replayproxy_before_record_request in an ini file is a one-line error."""
    pytester.makepyfile(test_example=INI_FILTERED)
    pytester.makeini(
        "[pytest]\nreplayproxy_filter_headers =\n    x-ini-key=INI\n"
        "replayproxy_filter_post_data_parameters =\n    org\n"
    )
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
        result.assert_outcomes(passed=1)
    (recorded,) = store.load(cassette(pytester, "test_ini")).interactions
    assert recorded.request.header("x-ini-key") == "INI"
    assert b'"org":"<redacted>"' in recorded.request.body

    pytester.makeini("[pytest]\nreplayproxy_before_record_request = mymodule.scrub\n")
    result = run(pytester, upstream="http://127.0.0.1:9", confdir=confdir)
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        ["*ini key replayproxy_before_record_request: a callable cannot be set in an ini file*"]
    )
    assert "Traceback" not in result.stderr.str()


BAD_FILTER = textwrap.dedent("""
    import pytest


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", filter_headers=[("x-a", 3)])
    def test_bad_pair(replayproxy):
        pass


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", before_record_request="scrub")
    def test_not_callable(replayproxy):
        pass
""")


def test_bad_vcr_values_fail_naming_the_keyword(pytester: pytest.Pytester, confdir: Path) -> None:
    """A pair with a non-string replacement names the marker keyword; a string given as a
    callable names before_record_request; one line each, no traceback."""
    pytester.makepyfile(test_bad=BAD_FILTER)
    result = run(pytester, upstream="http://127.0.0.1:9", confdir=confdir)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*replayproxy: @pytest.mark.replayproxy keyword 'filter_headers': each entry must "
            "be a name or a (name, replacement) pair of strings, got ('x-a', 3)",
            "*replayproxy: before_record_request must be a callable or None, got 'scrub'",
        ],
        consecutive=False,
    )
    assert "Traceback" not in result.stdout.str()


RAISING = textwrap.dedent("""
    import os

    import httpx
    import pytest

    UPSTREAM = os.environ["RP_UPSTREAM"]


    def scrub(request):
        raise KeyError("no such field")


    @pytest.mark.replayproxy(upstream=UPSTREAM, before_record_request=scrub)
    def test_raising(replayproxy):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        httpx.post(replayproxy.url + "/v1/chat/completions", json=body)
""")


def test_a_raising_callable_fails_the_test_and_records_nothing(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A before_record_request that raises fails its test with one line naming it; the
    interaction it was given is not written (no cassette)."""
    pytester.makepyfile(test_example=RAISING)
    with Simulator() as sim:
        result = run(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*replayproxy: recording failed: *scrub raised KeyError: 'no such field'; the "
            "interaction was not recorded*"
        ]
    )
    assert not cassette(pytester, "test_raising").exists()
