"""Every user option, declared once: the CLI, the mitmproxy addons, the pytest plugin, the
Python API and :class:`~replayproxy._engine.server.ReplayServer` take their flags, addon options,
ini keys and keywords from :data:`OPTIONS` (pure).

Each :class:`~replayproxy._core.replay.option_def.OptionDef` names the option in every
interface, so they cannot drift apart; for ``speed``: ``replay --speed`` (CLI),
``replayproxy_speed`` (mitmproxy ``--set``), ``--replayproxy-speed`` and the ini key
``replayproxy_speed`` (pytest), ``speed=`` (marker, ``replayproxy_config`` and the Python
API), and so on for every row. Its group says what the option is about (serving and matching,
or what a recording keeps) and so which front ends take it (``OptionDef.fronts``); a test
checks that each of them does.

:func:`settings_from` turns the collected values (a mapping from ``OptionDef.name`` to value,
as any of the shells parsed them) into one validated :class:`ReplaySettings`, the only place a
:class:`~replayproxy._core.matching.matcher.MatchOptions` or a recording's
:class:`~replayproxy._core.redaction.secrets.Redactor` is built from user input: each row's
parsed value goes to the field its ``setting`` names, so a new option needs no edit there. It
refuses options that contradict each other (``OptionDef.conflicts``). Its one-line errors name
the option as the user wrote it where they set it (``where``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from replayproxy._core.faults import FaultSpec
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.redaction.hooks import RecordHooks
from replayproxy._core.redaction.secrets import NO_REDACTION, Redactor, Replaceable
from replayproxy._core.replay import option_values as parse
from replayproxy._core.replay.checks import check_speed
from replayproxy._core.replay.http_version import HttpVersion
from replayproxy._core.replay.option_def import Front, Group, Kind, OptionDef
from replayproxy._core.replay.record_mode import RecordMode
from replayproxy._errors import UsageError

__all__ = [
    "OPTIONS",
    "RECORD_OPTIONS",
    "REPLAY_OPTIONS",
    "ConnectionLimits",
    "Front",
    "Group",
    "HttpVersion",
    "Kind",
    "OptionDef",
    "RecordSettings",
    "ReplaySettings",
    "cli_words",
    "mitm_settings",
    "mitm_words",
    "option",
    "options_for",
    "parse_value",
    "python_words",
    "settings_from",
]

OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "record_mode",
        Kind.TEXT,
        RecordMode.NONE.value,
        "none: replay only, a new request fails; once: record the cassette if it does not "
        "exist, else replay only; new_episodes: replay what matches, record the rest; all: "
        "record everything again.",
        metavar="MODE",
        choices=tuple(m.value for m in RecordMode),
        # The recorder's replayproxy_write_mode (new/append/overwrite) is not a record mode.
        mitm="replay_record_mode",
        parse=parse.record_mode,
        self_named=True,
        # The engine alone never forwards; a matrix cell replays only.
        skip=frozenset({Front.SERVER, Front.MATRIX_CLI}),
        example="none",
    ),
    OptionDef(
        "speed",
        Kind.NUMBER,
        1.0,
        "Replay speed: 1 = as recorded, 2 = twice as fast, 0 = no waiting.",
        metavar="FACTOR",
        parse=check_speed,
        self_named=True,
        example="0",
    ),
    OptionDef(
        "faults",
        Kind.LIST,
        (),
        "Inject a fault into every replayed response (NAME:PARAM=VALUE,...). Repeatable.",
        metavar="SPEC",
        flag="fault",
        parse=parse.fault_specs,
        self_named=True,
        example=["truncate:events=1"],
        skip=frozenset({Front.MATRIX_CLI}),  # each cell brings its faults
    ),
    OptionDef(
        "ignore_query",
        Kind.LIST,
        (),
        "Ignore this query parameter when matching. Repeatable.",
        metavar="NAME",
        parse=parse.string_set,
        setting="match.ignore_query",
        example=["api-version"],
    ),
    OptionDef(
        "ignore_body_field",
        Kind.LIST,
        (),
        "Ignore this JSON body field (JSON pointer, e.g. /stream_options) when matching. "
        "Repeatable.",
        metavar="POINTER",
        parse=parse.strings,
        setting="match.ignore_body_fields",
        example=["/metadata"],
    ),
    OptionDef(
        "allow_repeats",
        Kind.FLAG,
        False,
        "Once the matching interactions are used up, serve the last one again.",
        parse=parse.flag,
        setting="match.allow_repeats",
        example=True,
    ),
    OptionDef(
        "match_host",
        Kind.FLAG,
        False,
        "Also require the host to match (ignored by default).",
        parse=parse.flag,
        setting="match.match_host",
        example=True,
    ),
    OptionDef(
        "no_equivalence",
        Kind.FLAG,
        False,
        "Compare request bodies exactly (key order still ignored), not the shapes the provider "
        "documents as identical (a string vs one text part, tool_choice auto, ...; see "
        "docs/guides/replay.md).",
        parse=parse.negated_flag,
        setting="match.equivalence",
        example=True,
    ),
    OptionDef(
        "head_timeout",
        Kind.NUMBER,
        10.0,
        "Seconds a client has to send a whole request head, and to start its next request on "
        "a kept-alive connection; then the connection is closed (a half-sent head gets a 408).",
        metavar="SECONDS",
        parse=parse.seconds,
        setting="connections.head_timeout",
        example="5",
    ),
    OptionDef(
        "body_timeout",
        Kind.NUMBER,
        30.0,
        "Seconds a request body may pause between reads before the request is refused with "
        "a 408 and its connection closed.",
        metavar="SECONDS",
        parse=parse.seconds,
        setting="connections.body_timeout",
        example="7.5",
    ),
    OptionDef(
        "max_connections",
        Kind.NUMBER,
        1000,
        "Client connections served at once (lowered to fit the open-files limit). Past it, "
        "the connection idle longest is closed for the new one, or the new one gets a 503.",
        metavar="N",
        parse=parse.connection_count,
        setting="connections.max_connections",
        example="100",
    ),
    OptionDef(
        "http_version",
        Kind.TEXT,
        HttpVersion.RECORDED.value,
        "Forward mode: the HTTP version a TLS client is answered with. recorded: HTTP/2 when "
        "the host's interactions were recorded over HTTP/2 and the client offers h2, else "
        "HTTP/1.1; client: the client's preference; 1.1 / 2: that one when the client offers it.",
        metavar="VERSION",
        choices=tuple(v.value for v in HttpVersion),
        parse=parse.http_version,
        example="client",
    ),
    OptionDef(
        "redact_header",
        Kind.LIST,
        (),
        "Also redact this header (repeatable); credentials and cookies always are.",
        metavar="NAME",
        mitm="redact_headers",  # the addon option's name since 0.1
        group=Group.RECORD,
        parse=parse.names_to_redact,
        setting="record.redact_headers",
        example=["x-custom-key"],
        adds_up=True,
    ),
    OptionDef(
        "redact_query",
        Kind.LIST,
        (),
        "Also redact this URL query parameter (repeatable); 'key' always is.",
        metavar="NAME",
        group=Group.RECORD,
        parse=parse.names_to_redact,
        setting="record.redact_query",
        example=["session"],
        adds_up=True,
    ),
    OptionDef(
        "redact_body_field",
        Kind.LIST,
        (),
        "Also redact this JSON body field, in requests and responses (JSON pointer, "
        "e.g. /user or /messages/*/name; repeatable).",
        metavar="POINTER",
        group=Group.RECORD,
        parse=parse.body_fields_to_redact,
        setting="record.redact_body_fields",
        example=["/user"],
        adds_up=True,
    ),
    OptionDef(
        "no_redact",
        Kind.FLAG,
        False,
        "Record secrets as they are. The cassette will then contain your API keys.",
        group=Group.RECORD,
        parse=parse.flag,
        setting="record.no_redact",
        conflicts=("redact_header", "redact_query", "redact_body_field"),
        example=True,
    ),
    OptionDef(
        "record_tls_failures",
        Kind.FLAG,
        False,
        "Also record requests that failed because the upstream certificate was not "
        "trusted (as no_response); by default they are reported with the --upstream-ca hint.",
        group=Group.RECORD,
        parse=parse.flag,
        setting="record.tls_failures",
        example=True,
    ),
)
"""Every option: the replay group, then the record group."""

REPLAY_OPTIONS: tuple[OptionDef, ...] = tuple(o for o in OPTIONS if o.group is Group.REPLAY)
"""How a cassette is served and matched (the replay addon's options)."""

RECORD_OPTIONS: tuple[OptionDef, ...] = tuple(o for o in OPTIONS if o.group is Group.RECORD)
"""What a recording keeps: redaction, failed TLS requests (the recorder addon's options)."""

_BY_NAME = {o.name: o for o in OPTIONS}


def option(name: str) -> OptionDef:
    """The option called ``name`` (KeyError if there is none)."""
    return _BY_NAME[name]


def options_for(front: Front) -> tuple[OptionDef, ...]:
    """The options ``front`` takes, in table order."""
    return tuple(o for o in OPTIONS if front in o.fronts)


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """How a session records what it forwards: the names to redact besides the defaults (or
    ``no_redact``: nothing), and whether a request whose upstream certificate failed
    verification is recorded (as ``no_response``) or only reported. ``hooks``: the in-process
    callables (``before_record_request``...) run after the redaction, set by ``use_cassette``
    (never by an option of the table). ``redactor`` is built from the redaction fields."""

    redact_headers: tuple[Replaceable, ...] = ()
    redact_query: tuple[Replaceable, ...] = ()
    redact_body_fields: tuple[Replaceable, ...] = ()
    no_redact: bool = False
    tls_failures: bool = False
    hooks: RecordHooks = field(default_factory=RecordHooks)
    redactor: Redactor = field(init=False, compare=False)

    def __post_init__(self) -> None:
        redactor = (
            NO_REDACTION
            if self.no_redact
            else Redactor.with_extra(
                self.redact_headers, self.redact_query, self.redact_body_fields
            )
        )
        object.__setattr__(self, "redactor", redactor)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a client may take and how many may connect at once
    (docs/explanations/reliability.md): ``head_timeout`` seconds for a request head (and for
    the next one on a kept-alive connection), ``body_timeout`` seconds of silence inside a
    request body, at most ``max_connections`` client connections (fewer if the open-files
    limit is lower)."""

    head_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 1000


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """Validated settings: what a :class:`~replayproxy._engine.session.ReplaySession` is built
    from, whichever interface the user set them in."""

    record_mode: RecordMode = RecordMode.NONE
    speed: float = 1.0
    faults: tuple[FaultSpec, ...] = ()
    match: MatchOptions = field(default_factory=MatchOptions)
    record: RecordSettings = field(default_factory=RecordSettings)
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    http_version: HttpVersion = HttpVersion.RECORDED


def python_words(name: str) -> str:
    """How the Python API (a mapping of settings) names an option: ``option 'speed'``."""
    return f"option {name!r}"


def cli_words(name: str) -> str:
    """How the command line names an option: ``option --redact-header``."""
    return f"option {_BY_NAME[name].cli_flag}" if name in _BY_NAME else f"option {name!r}"


def mitm_words(name: str) -> str:
    """How mitmproxy names an option: ``option replayproxy_redact_headers``."""
    return f"option {_BY_NAME[name].mitm_name}" if name in _BY_NAME else f"option {name!r}"


def parse_value(opt: OptionDef, value: Any, where: Callable[[str], str] = python_words) -> Any:
    """``value`` parsed by ``opt``'s parser; a bad one is a one-line error of the parser's
    class (UsageError, FaultSpecError) starting with ``where(opt.name)``, unless the parser
    names the option itself (``OptionDef.self_named``: those messages are as they were)."""
    try:
        return opt.parse(value)
    except UsageError as e:
        if opt.self_named:
            raise
        raise type(e)(f"{where(opt.name)}: {e}") from None


def mitm_settings(opts: Any) -> ReplaySettings:
    """:func:`settings_from` mitmproxy's options (anything with ``in`` and attributes): every
    option an addon declared (the replay group; the record group when the recorder is loaded
    too), errors naming the mitmproxy option."""
    values = {o.name: getattr(opts, o.mitm_name) for o in OPTIONS if o.mitm_name in opts}
    return settings_from(values, where=mitm_words)


def _conflict(got: Mapping[str, Any], given: set[str], where: Callable[[str], str]) -> None:
    """A one-line UsageError for the first pair of given options that contradict each other
    (``OptionDef.conflicts``); given: set to something else than the default."""
    for opt in OPTIONS:
        if opt.name not in given:
            continue
        for other in opt.conflicts:
            if other in given:
                raise UsageError(
                    f"{where(opt.name)} and {where(other)} contradict each other; give one"
                )


def _build(got: Mapping[str, Any]) -> ReplaySettings:
    """The settings with each parsed value at its option's ``setting`` (one level of nested
    settings: ``match.ignore_query``)."""
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for name, value in got.items():
        path = _BY_NAME[name].setting_path
        if len(path) == 1:
            top[path[0]] = value
        else:
            nested.setdefault(path[0], {})[path[1]] = value
    base = ReplaySettings()
    for head, fields in nested.items():
        top[head] = replace(getattr(base, head), **fields)
    return replace(base, **top)


def settings_from(
    values: Mapping[str, Any], *, where: Callable[[str], str] = python_words
) -> ReplaySettings:
    """Build :class:`ReplaySettings` from ``{option name: value}``; absent names take their
    defaults. Unknown names, bad values and options that contradict each other raise a
    one-line UsageError / FaultSpecError that names the option as ``where`` spells it
    (``option --speed``, ``marker keyword 'speed'``)."""
    unknown = sorted(set(values) - set(_BY_NAME))
    if unknown:
        raise UsageError(f"unknown {where(unknown[0])} (known: {', '.join(_BY_NAME)})")
    got = {
        name: parse_value(opt, values[name], where) if name in values else _DEFAULTS[name]
        for name, opt in _BY_NAME.items()
    }
    _conflict(got, {n for n in values if got[n] != _DEFAULTS[n]}, where)
    return _build(got)


_DEFAULTS: Mapping[str, Any] = {o.name: o.parse(o.default) for o in OPTIONS}
"""Each option's default, parsed: what an option left out is set to."""
