"""Every option of the one table is taken by every front end it claims (OptionDef.fronts): the
CLI flags, the mitmproxy addon options, the pytest flags, ini keys, marker keywords and
``replayproxy_config`` keys, ``use_cassette()`` and ``ReplayServer`` keywords; and the docs'
option tables are the table's. A new option that one of them forgets fails here."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import click
import pytest
from mitmproxy.test import taddons

from replayproxy import use_cassette
from replayproxy._cli import cli
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.replay.options import OPTIONS, Front, Kind, OptionDef, options_for
from replayproxy._engine.server import ReplayServer
from replayproxy._errors import UsageError
from replayproxy._harness.hosts import HostPool
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy.pytest_plugin import _vcr as vcr
from replayproxy.pytest_plugin.plugin import marker_signature
from tests.integration.option_docs import pytest_rows, recording_rows

DOCS = Path(__file__).parents[2] / "docs"

SAMPLES: dict[str, Any] = {
    "record_mode": "none",
    "speed": "0",
    "faults": ["truncate:events=1"],
    "ignore_query": ["api-version"],
    "ignore_body_field": ["/metadata"],
    "allow_repeats": True,
    "match_host": True,
    "no_equivalence": True,
    "head_timeout": "5",
    "body_timeout": "7.5",
    "max_connections": "100",
    "http_version": "client",
    "redact_header": ["x-custom-key"],
    "redact_query": ["session"],
    "redact_body_field": ["/user"],
    "no_redact": True,
    "record_tls_failures": True,
}
"""A valid value of every option (a new option needs one here, and so meets every test)."""

# Parameters of the commands that are not in the table, each for a reason of its own: the
# cassette, where to listen and what to trust, the wrapped command, and `record`'s write mode
# (a record mode decides it in `replay`).
_RECORD_ONLY = {"cassette", "upstream", "upstream_ca", "insecure_upstream", "listen", "confdir"}
_RECORD_ONLY |= {"append", "overwrite", "command"}
_REPLAY_ONLY = {"cassette", "upstream", "upstream_ca", "listen", "confdir", "command"}
_REPLAY_ONLY |= {"fail_if_bypassed", "allow_unmatched", "isolate"}


def test_every_option_has_a_sample_value() -> None:
    """The samples below name every option, so each test here exercises all of them."""
    assert set(SAMPLES) == {o.name for o in OPTIONS}


@pytest.mark.parametrize(
    ("command", "front", "others"),
    [("record", Front.RECORD_CLI, _RECORD_ONLY), ("replay", Front.REPLAY_CLI, _REPLAY_ONLY)],
)
def test_cli_commands_take_their_options_and_only_listed_others(
    command: str, front: Front, others: set[str]
) -> None:
    """`record` and `replay` have a flag for each option of their front end, spelled as the
    table says; every other parameter is one of the few listed as not an option."""
    cmd = cli.commands[command]
    params = {p.name: p for p in cmd.params if isinstance(p, click.Option | click.Argument)}
    for opt in options_for(front):
        param = params.get(opt.name)
        assert param is not None and opt.cli_flag in param.opts, opt.name
        assert isinstance(param, click.Option)
        assert param.multiple is (opt.kind is Kind.LIST) and param.is_flag is (
            opt.kind is Kind.FLAG
        ), opt.name
    assert set(params) - {o.name for o in options_for(front)} == others


def test_mitmproxy_addons_declare_their_group(tmp_path: Path) -> None:
    """With both addons loaded (as `mitmdump -s`'s replay script does), every option with a
    mitmproxy front end is an addon option and takes its sample value; in a record mode the
    replay addon's session records with the recorder's redaction options."""
    replayer = Replayer()
    recorder = Recorder(sink=replayer)
    with taddons.context(replayer, recorder) as tctx:
        for opt in options_for(Front.MITM):
            assert opt.mitm_name in tctx.options, opt.mitm_name
        values = {o.mitm_name: SAMPLES[o.name] for o in options_for(Front.MITM)}
        tctx.configure(recorder, **values)
        assert recorder.settings.tls_failures
        tctx.configure(
            replayer,
            replayproxy_replay=str(tmp_path / "c.cassette"),
            replayproxy_replay_record_mode="once",
            replayproxy_no_redact=False,
        )
        assert replayer.session is not None and replayer.session.policy.records
        recording = replayer.session.record_settings
        assert "x-custom-key" in recording.redactor.headers and recording.tls_failures


def test_use_cassette_takes_every_python_option(tmp_path: Path) -> None:
    """use_cassette() accepts each option as a keyword (base-URL replay: the engine serves)."""
    pool = HostPool()
    kwargs = {o.name: SAMPLES[o.name] for o in options_for(Front.PYTHON)}
    try:
        with use_cassette(
            tmp_path / "c.cassette", upstream="http://127.0.0.1:9", pool=pool, **kwargs
        ) as rp:
            assert rp.session.record_settings.tls_failures
            assert rp.session.options.ignore_query == frozenset({"api-version"})
    finally:
        pool.close()


def test_replay_server_takes_its_options_and_refuses_the_record_ones() -> None:
    """ReplayServer takes each of its options as a keyword and refuses, in one line, those
    that only make sense where something is recorded."""
    taken = {o.name: SAMPLES[o.name] for o in options_for(Front.SERVER)}
    server = ReplayServer(Cassette(), **taken)
    assert server.session.options.ignore_body_fields == ("/metadata",)
    assert server.session.speed == 0 and server.session.faults
    refused: list[OptionDef] = [o for o in OPTIONS if Front.SERVER not in o.fronts]
    assert refused
    for opt in refused:
        with pytest.raises(UsageError, match=f"ReplayServer keyword '{opt.name}': the replay"):
            ReplayServer(Cassette(), **{opt.name: SAMPLES[opt.name]})


INNER = textwrap.dedent("""
    import pytest

    from replayproxy._core.replay.options import Front, options_for

    SAMPLES = {samples!r}


    @pytest.fixture
    def replayproxy_config():
        return dict(SAMPLES)


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", **SAMPLES)
    def test_every_option(request, replayproxy):
        for opt in options_for(Front.PYTEST):
            assert request.config.getini(opt.ini_name) not in (None, "", []), opt.ini_name
            assert request.config.getoption("replayproxy_" + opt.name) is not None, opt.name
        recording = replayproxy.session.record_settings
        assert recording.tls_failures
""")


@pytest.mark.slow
def test_pytest_takes_every_option_as_flag_ini_key_marker_keyword_and_config_key(
    pytester: pytest.Pytester,
) -> None:
    """An inner run sets every pytest option at once on the command line, in the ini file, in
    the marker and in replayproxy_config: each is accepted, and the test passes."""
    pytester.makepyfile(test_inner=INNER.format(samples=SAMPLES))
    ini = ["[pytest]"]
    flags = []
    for opt in options_for(Front.PYTEST):
        value = SAMPLES[opt.name]
        if opt.kind is Kind.FLAG:
            ini.append(f"{opt.ini_name} = true")
            flags.append(opt.pytest_flag)
        elif opt.kind is Kind.LIST:
            ini.append(f"{opt.ini_name} =\n    {value[0]}")
            flags.append(f"{opt.pytest_flag}={value[0]}")
        else:
            ini.append(f"{opt.ini_name} = {value}")
            flags.append(f"{opt.pytest_flag}={value}")
    pytester.makeini("\n".join(ini) + "\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *flags, timeout=120)
    result.assert_outcomes(passed=1)
    assert "PytestConfigWarning" not in result.stdout.str()  # no unknown ini key


def test_marker_docs_and_option_tables_come_from_the_table() -> None:
    """The marker's `pytest --markers` line names every pytest option and VCR.py's keywords
    (filter_*, before_record_*); docs/reference/options.md holds the tables rendered from the
    option table, row for row."""
    signature = marker_signature()
    assert all(f" {o.name}=" in signature for o in options_for(Front.PYTEST))
    assert all(f" {name}=" in signature for name in (*vcr.FILTERS, *vcr.HOOKS))
    page = (DOCS / "reference" / "options.md").read_text()
    assert pytest_rows() in page
    assert recording_rows() in page
