"""pytest hooks, marker, fixtures and options of the replayproxy plugin.

Settings, from weakest to strongest: the option table's defaults, ini keys, the
``replayproxy_config`` fixture, ``@pytest.mark.replayproxy(...)`` markers (module, class,
function: the closest wins), the command line. ``faults`` from the command line add to the
others instead of replacing them; the names to redact add up across every level (a narrower
level never drops a secret a wider one names). The options are the table's
(:mod:`replayproxy._core.replay.options`), replay and record groups alike.

A test uses replayproxy when it carries the marker or asks for the ``replayproxy`` fixture. For
its duration the fixture serves its cassette through a per-process server (see
:mod:`replayproxy._harness.hosts`); after the test body, :func:`pytest_runtest_call` fails the
test with the explanation of every unmatched request (and recording error, and blocked
connection), and reports recorded interactions it never used (a warning, or a failure with
``--replayproxy-fail-unused``). Under a fault matrix a test has one item per cell (:mod:`.matrix`).
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from replayproxy._core.replay.option_values import strings
from replayproxy._core.replay.options import Front, Kind, OptionDef, options_for, settings_from
from replayproxy.pytest_plugin import _matrix as matrix
from replayproxy.pytest_plugin import _network as network
from replayproxy.pytest_plugin import _report as report
from replayproxy.pytest_plugin import _summary as summary
from replayproxy.pytest_plugin import _vcr as vcr
from replayproxy.pytest_plugin import _words as failing
from replayproxy.pytest_plugin._matrix import MATRIX_OPTIONS
from replayproxy.pytest_plugin._naming import cassette_path

if TYPE_CHECKING:
    from replayproxy._harness.context import CassetteUse
    from replayproxy._harness.netblock import NetworkBlock

__all__ = ["ReplayproxyUnusedWarning"]

# The stream_snapshot fixture and its --replayproxy-snapshot-update option.
pytest_plugins = ["replayproxy.pytest_plugin._snapshot"]

MARKER = "replayproxy"

_MARKER_ONLY = ("cassette", "upstream", "matrix", "allowed_hosts", *vcr.HOOKS)


class ReplayproxyUnusedWarning(UserWarning):
    """A test left recorded interactions of its cassette unused."""


# The table's options this plugin takes (replay and record groups): flags, ini keys, marker
# keywords and replayproxy_config keys alike.
_OPTIONS = options_for(Front.PYTEST)

# Options of the plugin alone (command line and ini only).
_PLUGIN_OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "cassette_dir",
        Kind.TEXT,
        "",
        "Directory of the default cassettes (relative to the rootdir); each test module gets "
        "a folder in it. Default: a 'cassettes' folder beside each test file.",
        metavar="DIR",
    ),
    OptionDef(
        "block_network",
        Kind.FLAG,
        False,
        "While replaying (nothing to record), refuse every non-loopback name lookup, connection "
        "and datagram of the test process: a client that bypasses the proxy fails the test.",
    ),
    OptionDef(
        "fail_unused",
        Kind.FLAG,
        False,
        "Fail a test that leaves recorded interactions of its cassette unused (default: warn).",
    ),
    OptionDef(
        "upstream_ca",
        Kind.TEXT,
        "",
        "When recording: also trust this PEM CA certificate for upstream HTTPS.",
        metavar="PEM",
    ),
    OptionDef(
        "confdir",
        Kind.TEXT,
        "~/.mitmproxy",
        "mitmproxy's configuration directory (its CA, trusted by clients in proxy mode).",
        metavar="DIR",
    ),
    *MATRIX_OPTIONS,
    *network.OPTIONS,
)

_BY_NAME = {o.name: o for o in _OPTIONS}

_IniType = Literal["string", "linelist", "bool"]
_INI_TYPES: dict[Kind, _IniType] = {
    Kind.NUMBER: "string",
    Kind.TEXT: "string",
    Kind.LIST: "linelist",
    Kind.FLAG: "bool",
}


def _dest(opt: OptionDef) -> str:
    return "replayproxy_" + opt.name


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replayproxy", "replayproxy: record once, replay offline")
    for opt in (*_OPTIONS, *_PLUGIN_OPTIONS):
        kwargs: dict[str, Any] = {"dest": _dest(opt), "default": None, "help": opt.help}
        if opt.kind is Kind.FLAG:
            kwargs["action"] = "store_true"
        elif opt.kind is Kind.LIST:
            kwargs.update(action="append", metavar=opt.metavar)
        else:
            kwargs["metavar"] = opt.metavar or None
            if opt.choices:
                kwargs["choices"] = opt.choices
        group.addoption(opt.pytest_flag, **kwargs)
        default = opt.default
        if opt.kind is Kind.NUMBER:
            default = f"{opt.default:g}"
        elif opt.kind is Kind.LIST:
            default = []
        parser.addini(opt.ini_name, opt.help, type=_INI_TYPES[opt.kind], default=default)
    vcr.addoption(parser, group)


def marker_signature() -> str:
    """The marker as ``pytest --markers`` shows it: every keyword it takes."""
    shown = {Kind.LIST: "[...]"}
    keywords = ["cassette=None", "upstream=None", "matrix=None", "allowed_hosts=[...]"]
    keywords += [f"{o.name}={shown.get(o.kind, '...')}" for o in _OPTIONS]
    keywords += [f"{n}=[...]" for n in vcr.FILTERS] + [f"{n}=..." for n in vcr.HOOKS]
    return f"{MARKER}({', '.join(keywords)})"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{marker_signature()}: serve this test's cassette through replayproxy "
        "(see docs/guides/pytest.md).",
    )
    vcr.configure(config)
    chosen = matrix.checked_option(_setting(config, _plugin_option("matrix")))
    report_path, baseline = (
        _setting(config, _plugin_option(n))[0] for n in ("matrix_report", "matrix_baseline")
    )
    report.configure(config, report_path, baseline, order=[c.id for c in chosen])
    network.configure(config, bool(_setting(config, _plugin_option("block_network"))[0]))
    summary.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    from replayproxy._harness import context

    if context._pool is not None:
        context._pool.close()


def _setting(config: pytest.Config, opt: OptionDef) -> tuple[Any, bool]:
    """``(value, from the command line?)``: command line, else ini (else the default)."""
    value = config.getoption(_dest(opt))
    if value is not None and value is not False:
        return value, True
    return config.getini(opt.ini_name), False


def _marker_levels(item: pytest.Item) -> list[dict[str, Any]]:
    """Each marker's keyword arguments, the farthest (module) first, the function's last."""
    levels = []
    for mark in reversed(list(item.iter_markers(MARKER))):
        if mark.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only")
        levels.append(dict(mark.kwargs))
    return levels


@pytest.fixture
def replayproxy_config() -> dict[str, Any]:
    """Replay options for the tests in scope (override it in a conftest or module), e.g.
    ``{"upstream": "https://api.openai.com", "ignore_body_field": ["/user"]}``."""
    return {}


@pytest.fixture
def replayproxy_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """The folder of this test's default cassette (override it to move them)."""
    return _default_cassette_dir(request.config, Path(str(request.node.path)))


def _default_cassette_dir(config: pytest.Config, test_file: Path) -> Path:
    base, _ = _setting(config, _plugin_option("cassette_dir"))
    if base:
        return Path(config.rootpath) / str(base) / test_file.stem
    return test_file.parent / "cassettes" / test_file.stem


def _plugin_option(name: str) -> OptionDef:
    return next(o for o in _PLUGIN_OPTIONS if o.name == name)


@pytest.fixture(autouse=True)
def _replayproxy_marker(request: pytest.FixtureRequest) -> None:
    """Marked tests use the ``replayproxy`` fixture without asking for it."""
    if request.node.get_closest_marker(MARKER) is not None:
        request.getfixturevalue("replayproxy")


_USE: pytest.StashKey[CassetteUse] = pytest.StashKey()
_BLOCK: pytest.StashKey[NetworkBlock] = pytest.StashKey()


@pytest.fixture
def replayproxy(
    request: pytest.FixtureRequest,
    replayproxy_config: dict[str, Any],
    replayproxy_cassette_dir: Path,
) -> Iterator[CassetteUse]:
    """This test's cassette, served: ``.url``, ``.summary()``, ``.misses``, ``.explain()``.

    Base-URL mode with ``upstream=`` (point the client's base URL at ``replayproxy.url``),
    proxy mode without (``HTTPS_PROXY``, ``SSL_CERT_FILE``... are set for the test).
    """
    from replayproxy._errors import ReplayProxyError
    from replayproxy._harness.context import use_cassette

    config = request.config
    item = request.node
    if vcr.disabled(config):  # --replayproxy-disable-recording: the plugin does nothing
        yield vcr.disabled_use([replayproxy_config, *_marker_levels(item)])  # type: ignore[misc]
        return
    ca, _ = _setting(config, _plugin_option("upstream_ca"))
    confdir, _ = _setting(config, _plugin_option("confdir"))
    block, _ = _setting(config, _plugin_option("block_network"))
    try:
        values = _settings(config, item, replayproxy_config)
        cell, name = matrix.cell_of(item, replayproxy_config)
        cls = getattr(item, "cls", None)
        cassette = values.pop("cassette", None)
        path = cassette_path(
            item.path, cls and cls.__name__, name, cassette, replayproxy_cassette_dir
        )
        upstream = values.pop("upstream", None)
        values.pop("matrix", None)
        hosts = network.hosts_from(
            _setting(config, _plugin_option("allowed_hosts"))[0],
            [replayproxy_config, *_marker_levels(item)],
        )
        values.pop("allowed_hosts", None)
        speed = matrix.speed_given(
            _setting(config, _BY_NAME["speed"]), [*_marker_levels(item), replayproxy_config]
        )
        values = matrix.prepare(cell, path, values, speed_given=speed)
        with use_cassette(
            path,
            upstream=upstream,
            upstream_ca=ca or None,
            confdir=confdir or "~/.mitmproxy",
            **values,
        ) as use:
            use.cell = None if isinstance(cell, str) else cell
            use._speak(failing.words_for(item, use))  # the SDK's exception speaks pytest too
            item.stash[_USE] = use
            if block and not use.session.policy.records:
                with network.blocked(item, hosts) as net:
                    item.stash[_BLOCK] = net
                    yield use
            else:
                yield use
    except ReplayProxyError as e:
        error = str(e)
    else:
        return
    # Outside the except block: the one-line message without "During handling of...".
    pytest.fail(f"replayproxy: {error}", pytrace=False)


def _settings(
    config: pytest.Config, item: pytest.Item, replayproxy_config: dict[str, Any]
) -> dict[str, Any]:
    """The test's option values, every level merged (module docstring); each level is checked
    on its own first, so a bad value is named where it was set (a UsageError)."""
    ini: dict[str, Any] = {}
    command_line: dict[str, Any] = {}
    for opt in _OPTIONS:
        value, explicit = _setting(config, opt)
        if explicit:
            command_line[opt.name] = value
        elif value not in (None, "", []):
            ini[opt.name] = value
    ini = vcr.with_ini_filters(config, ini)  # VCR.py's names become the table's (vcr.py)
    markers = [vcr.translated(m, _marker_words) for m in _marker_levels(item)]
    replayproxy_config = vcr.translated(replayproxy_config, _config_words)
    checked = [(ini, _ini_words), (replayproxy_config, _config_words)]
    checked += [(m, _marker_words) for m in markers] + [(command_line, _flag_words)]
    for level, words in checked:
        settings_from({k: v for k, v in level.items() if k not in _MARKER_ONLY}, where=words)
    values: dict[str, Any] = {**ini, **replayproxy_config}
    for level in markers:  # the closest (function) wins
        values.update(level)
    for name, value in command_line.items():  # the command line wins, faults add up
        if name == "faults":
            values["faults"] = [*_as_list(values.get("faults", [])), *value]
        else:
            values[name] = value
    for name in _ADDED_UP:
        # A secret named at any level stays redacted: a narrower level adds names to redact,
        # it never drops the ones a wider level (conftest, ini) asked for.
        found = [strings(level[name]) for level, _ in checked if name in level]
        if found:
            values[name] = [n for names in found for n in names]
    return values


def _ini_words(name: str) -> str:
    return f"ini key {_BY_NAME[name].ini_name}"


def _config_words(name: str) -> str:
    return f"replayproxy_config key {name!r}"


def _marker_words(name: str) -> str:
    return f"@pytest.mark.{MARKER} keyword {name!r}"


def _flag_words(name: str) -> str:
    return f"option {_BY_NAME[name].pytest_flag}"


_ADDED_UP = tuple(o.name for o in _OPTIONS if o.adds_up)
"""Options whose values every level adds to, instead of the closest replacing them."""


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    return list(value)


def _problems(item: pytest.Item) -> str:
    use, net = item.stash.get(_USE, None), item.stash.get(_BLOCK, None)
    explained = "" if use is None else use.explain()  # in the words the fixture gave it
    blocked = "" if net is None else network.problem_lines(item, net)
    return "\n".join(p for p in (explained, blocked) if p)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail the test that made an unmatched request, with the explanation as the message."""
    try:
        result = yield
    except BaseException as e:
        problems = _problems(item)
        if problems and not isinstance(e, (pytest.skip.Exception, KeyboardInterrupt)):
            # The client's own error ("Error code: 500") says less than why nothing matched.
            raise failing.failure(problems, e) from None
        raise
    problems = _problems(item)
    if problems:
        pytest.fail(problems, pytrace=False)
    use = item.stash.get(_USE, None)
    if use is not None and use.session.policy.replay:
        summary = use.summary()
        if summary.unused:
            shown = ", ".join(f"#{n}" for n in summary.unused)
            message = (
                f"replayproxy: {len(summary.unused)} of {summary.recorded} recorded "
                f"interactions of {use.cassette} were never used ({shown})"
            )
            fail, _ = _setting(item.config, _plugin_option("fail_unused"))
            if fail:
                pytest.fail(message, pytrace=False)
            warnings.warn(ReplayproxyUnusedWarning(message), stacklevel=1)
    return result


@pytest.hookimpl(trylast=True)  # after the test's own parametrization: its ids come first
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test under a fault matrix gets one item per cell (:mod:`.matrix`)."""
    item, config = metafunc.definition, metafunc.config
    if item.get_closest_marker(MARKER) is None and "replayproxy" not in metafunc.fixturenames:
        return
    selection = _setting(config, _plugin_option("matrix"))
    cassette_dir = _default_cassette_dir(config, Path(str(item.path)))
    settings = lambda: _settings(config, item, {})  # noqa: E731 (only read for matrix tests)
    matrix.parametrize(metafunc, selection, _marker_levels(item), settings, cassette_dir)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, object]:
    test_report = yield
    matrix.record_phase(item, test_report)
    summary.record_phase(item, test_report, item.stash.get(_USE, None))
    return test_report
