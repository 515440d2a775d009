"""Every option of the one table is taken by every front end it claims (OptionDef.fronts): the
flags of ``record``, ``replay`` and ``matrix``, the mitmproxy addon options, the pytest flags,
ini keys, marker keywords and ``replayproxy_config`` keys, ``use_cassette()`` and
``ReplayServer`` keywords and their typed keywords (``option_keywords.py``); options a row
declares contradictory are refused in one line in each front end; and the docs' option tables
are the table's. A new option that one of them forgets fails here: each test sets every option
to its row's ``example``."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_type_hints

import click
import pytest
from click.testing import CliRunner
from mitmproxy import exceptions
from mitmproxy.test import taddons

from replayproxy import use_cassette
from replayproxy._cli import cli
from replayproxy._cli import matrix as matrix_cli
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.replay.option_keywords import CassetteOptions, ServerOptions
from replayproxy._core.replay.options import (
    OPTIONS,
    Front,
    Kind,
    OptionDef,
    ReplaySettings,
    cli_words,
    option,
    options_for,
    settings_from,
)
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import UsageError
from replayproxy._harness.hosts import HostPool
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy.pytest_plugin import _vcr as vcr
from replayproxy.pytest_plugin.plugin import marker_signature
from tests.integration.option_docs import pytest_rows, recording_rows

DOCS = Path(__file__).parents[2] / "docs"
CHAT = Path(__file__).parents[2] / "cassettes" / "openai-chat-text.cassette"

SAMPLES: dict[str, Any] = {o.name: o.example for o in OPTIONS}
"""A valid value of every option: its row's example."""

PAIRS = [(o.name, other) for o in OPTIONS for other in o.conflicts]
"""The pairs of options that contradict each other."""


def together(opts: Iterable[OptionDef]) -> list[dict[str, Any]]:
    """The samples of ``opts`` in groups that each set as many as can be set at once: all but
    the second option of each contradicting pair, then all but the first (one group if none)."""
    names = [o.name for o in opts]
    groups = [
        {n: SAMPLES[n] for n in names if n not in {pair[side] for pair in PAIRS}} for side in (1, 0)
    ]
    return groups[:1] if groups[0] == groups[1] else groups


# Parameters of the commands that are not in the table, each for a reason of its own: the
# cassette, where to listen and what to trust, the wrapped command, and `record`'s write mode
# (a record mode decides it in `replay`).
_RECORD_ONLY = {"cassette", "upstream", "upstream_ca", "insecure_upstream", "listen", "confdir"}
_RECORD_ONLY |= {"append", "overwrite", "command"}
_REPLAY_ONLY = {"cassette", "upstream", "upstream_ca", "listen", "confdir", "command"}
_REPLAY_ONLY |= {"fail_if_bypassed", "allow_unmatched", "isolate"}
_MATRIX_ONLY = {"cassette", "sets", "specs", "upstream", "expects", "report", "timeout"}
_MATRIX_ONLY |= {"listen", "confdir", "allow_unmatched", "verbose", "command"}


def test_every_option_has_an_example_that_parses() -> None:
    """Each row gives an example, valid for its parser, so each test here exercises it."""
    for opt in OPTIONS:
        assert opt.example is not None, opt.name
        settings_from({opt.name: opt.example})
    grouped = together(OPTIONS)
    assert set().union(*grouped) == set(SAMPLES)
    for group in grouped:
        settings_from(group)  # no group holds a contradiction


@pytest.mark.parametrize(
    ("command", "front", "others"),
    [
        ("record", Front.RECORD_CLI, _RECORD_ONLY),
        ("replay", Front.REPLAY_CLI, _REPLAY_ONLY),
        ("matrix", Front.MATRIX_CLI, _MATRIX_ONLY),
    ],
)
def test_cli_commands_take_their_options_and_only_listed_others(
    command: str, front: Front, others: set[str]
) -> None:
    """`record`, `replay` and `matrix` have a flag for each option of their front end, spelled
    as the table says; every other parameter is one of the few listed as not an option."""
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
    for group in together(options_for(Front.MITM)):
        replayer = Replayer()
        recorder = Recorder(sink=replayer)
        with taddons.context(replayer, recorder) as tctx:
            for opt in options_for(Front.MITM):
                assert opt.mitm_name in tctx.options, opt.mitm_name
            values = {option(n).mitm_name: v for n, v in group.items()}
            tctx.configure(recorder, **values)
            assert recorder.settings.tls_failures
            tctx.configure(
                replayer,
                replayproxy_replay=str(tmp_path / "c.cassette"),
                replayproxy_replay_record_mode="once",
            )
            assert replayer.session is not None and replayer.session.policy.records
            recording = replayer.session.record_settings
            assert recording.tls_failures
            assert recording.redactor == recorder.settings.redactor


def test_use_cassette_takes_every_python_option(tmp_path: Path) -> None:
    """use_cassette() accepts each option as a keyword (base-URL replay: the engine serves)."""
    pool = HostPool()
    try:
        for kwargs in together(options_for(Front.PYTHON)):
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

    from replayproxy._core.replay.options import option

    SAMPLES = {samples!r}


    @pytest.fixture
    def replayproxy_config():
        return dict(SAMPLES)


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", **SAMPLES)
    def test_every_option(request, replayproxy):
        for opt in map(option, SAMPLES):
            assert request.config.getini(opt.ini_name) not in (None, "", []), opt.ini_name
            assert request.config.getoption("replayproxy_" + opt.name) is not None, opt.name
        recording = replayproxy.session.record_settings
        assert recording.tls_failures


    @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", **{contradicting!r})
    def test_contradiction(replayproxy):
        pass
""")


@pytest.mark.slow
def test_pytest_takes_every_option_as_flag_ini_key_marker_keyword_and_config_key(
    pytester: pytest.Pytester,
) -> None:
    """An inner run sets every pytest option it can set at once on the command line, in the
    ini file, in the marker and in replayproxy_config: each is accepted, and the test passes;
    a marker giving an option that contradicts them fails its test in one line."""
    first, *rest = together(options_for(Front.PYTEST))
    contradicting = {k: v for group in rest for k, v in group.items() if k not in first}
    assert bool(contradicting) is bool(PAIRS)
    inner = INNER.format(samples=first, contradicting=contradicting)
    pytester.makepyfile(test_inner=inner)
    ini = ["[pytest]"]
    flags = []
    for opt in map(option, first):
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
    if contradicting:
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.re_match_lines([r".*replayproxy: option '\w+' and option '\w+' contradict"])
    else:
        result.assert_outcomes(passed=2)
    assert "PytestConfigWarning" not in result.stdout.str()  # no unknown ini key


@pytest.mark.parametrize(("first", "second"), PAIRS)
@pytest.mark.parametrize("command", ["record", "replay"])
def test_the_cli_refuses_contradicting_options_in_one_line(
    command: str, first: str, second: str, tmp_path: Path
) -> None:
    """`record` and `replay` given two options that contradict each other exit 2 with one
    line naming both flags, before anything starts."""
    args = []
    for name in (first, second):
        opt = option(name)
        value = opt.example
        args += [opt.cli_flag] if opt.kind is Kind.FLAG else [opt.cli_flag, str(value[0])]
    result = CliRunner().invoke(cli, [command, str(tmp_path / "c.cassette"), *args])
    assert result.exit_code == 2, result.output
    expected = f"error: {cli_words(first)} and {cli_words(second)} contradict each other; give one"
    assert result.output.strip() == expected


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_python_and_mitmproxy_refuse_contradicting_options_in_one_line(
    first: str, second: str, tmp_path: Path
) -> None:
    """use_cassette() raises the one-line UsageError, and the mitmproxy recorder refuses the
    two addon options (an OptionsError naming them), before anything is served."""
    both = {first: SAMPLES[first], second: SAMPLES[second]}
    cassette = tmp_path / "c.cassette"
    with (
        pytest.raises(UsageError, match=f"^option '{first}' and option '{second}' contradict"),
        use_cassette(cassette, upstream="http://127.0.0.1:9", **both),
    ):
        pass
    recorder = Recorder()
    with taddons.context(recorder) as tctx:
        values = {option(n).mitm_name: v for n, v in both.items()}
        with pytest.raises(exceptions.OptionsError, match="contradict each other"):
            tctx.configure(recorder, **values)


def test_replay_server_refuses_equivalence_beside_no_equivalence() -> None:
    """ReplayServer's own ``equivalence=`` and the table's ``no_equivalence=`` set the same
    thing: both given is one line, whatever their values."""
    for value in (True, False):
        with pytest.raises(UsageError) as info:
            ReplayServer(Cassette(), no_equivalence=True, equivalence=value)
        assert str(info.value) == (
            "ReplayServer keywords 'equivalence' and 'no_equivalence' set the same thing; give one"
        )


@pytest.mark.parametrize(
    ("typed", "front", "own"),
    [(CassetteOptions, Front.PYTHON, set()), (ServerOptions, Front.SERVER, {"speed", "faults"})],
)
def test_the_typed_keywords_are_the_tables(typed: type, front: Front, own: set[str]) -> None:
    """The TypedDict of use_cassette()'s (ReplayServer's) keywords has a key per option the
    front end takes (but those ReplayServer has as parameters of its own), each typed for its
    kind; a row added to the table without its key fails here."""
    hints = get_type_hints(typed)
    assert set(hints) | own == {o.name for o in options_for(front)}
    expected = {Kind.FLAG: {"bool"}, Kind.NUMBER: {"float", "int"}, Kind.TEXT: {"str"}}
    for name, hint in hints.items():
        kind = option(name).kind
        shown = getattr(hint, "__name__", str(hint))
        if kind is Kind.LIST:
            assert shown.startswith("Sequence") or "Sequence[" in str(hint), name
        else:
            assert shown in expected[kind], (name, hint)


def test_matrix_replays_every_cell_with_its_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`replayproxy matrix` passes each option it takes to every cell's replay, as the table
    parses it (speed 0 by default), beside the cell's faults."""
    made: list[ReplaySettings] = []
    real = ReplaySession.from_settings

    def recorded(cassette: Any, settings: ReplaySettings, **kwargs: Any) -> ReplaySession:
        made.append(settings)
        return real(cassette, settings, **kwargs)

    monkeypatch.setattr(matrix_cli.ReplaySession, "from_settings", recorded)
    args = []
    for opt in options_for(Front.MATRIX_CLI):
        value = SAMPLES[opt.name]
        args += [opt.cli_flag] if opt.kind is Kind.FLAG else []
        args += [a for v in value for a in (opt.cli_flag, v)] if opt.kind is Kind.LIST else []
        args += [opt.cli_flag, str(value)] if opt.kind in (Kind.NUMBER, Kind.TEXT) else []
    base = [
        "matrix", str(CHAT), "--fault-cell", "truncate:events=1", "--upstream",
        "https://api.openai.com", "--listen", "127.0.0.1:0", "--confdir", str(tmp_path),
    ]  # fmt: skip
    result = CliRunner().invoke(cli, [*base, *args, "--", "true"])
    assert result.exit_code == 0, result.output
    given = {o.name: SAMPLES[o.name] for o in options_for(Front.MATRIX_CLI)}
    expected = settings_from({**given, "faults": ["truncate:events=1,interaction=0"]})
    assert [s.faults for s in made] == [expected.faults]
    assert made[0] == expected
    made.clear()
    assert CliRunner().invoke(cli, [*base, "--", "true"]).exit_code == 0
    assert made[0].speed == 0


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
