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
:class:`~replayproxy._core.redaction.secrets.Redactor` is built from user input. Its one-line
errors name the option as the user wrote it where they set it (``where``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.faults import FaultSpec
from replayproxy._core.matching.differences import MatchOptions
from replayproxy._core.redaction.hooks import RecordHooks
from replayproxy._core.redaction.secrets import NO_REDACTION, Redactor
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

_NOT_THE_ENGINE = frozenset({Front.SERVER})

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
        skip=_NOT_THE_ENGINE,  # the engine alone never forwards
    ),
    OptionDef(
        "speed",
        Kind.NUMBER,
        1.0,
        "Replay speed: 1 = as recorded, 2 = twice as fast, 0 = no waiting.",
        metavar="FACTOR",
        parse=check_speed,
        self_named=True,
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
    ),
    OptionDef(
        "ignore_query",
        Kind.LIST,
        (),
        "Ignore this query parameter when matching. Repeatable.",
        metavar="NAME",
        parse=parse.strings,
    ),
    OptionDef(
        "ignore_body_field",
        Kind.LIST,
        (),
        "Ignore this JSON body field (JSON pointer, e.g. /stream_options) when matching. "
        "Repeatable.",
        metavar="POINTER",
        parse=parse.strings,
    ),
    OptionDef(
        "allow_repeats",
        Kind.FLAG,
        False,
        "Once the matching interactions are used up, serve the last one again.",
        parse=parse.flag,
    ),
    OptionDef(
        "match_host",
        Kind.FLAG,
        False,
        "Also require the host to match (ignored by default).",
        parse=parse.flag,
    ),
    OptionDef(
        "no_equivalence",
        Kind.FLAG,
        False,
        "Compare request bodies exactly (key order still ignored), not the shapes the provider "
        "documents as identical (a string vs one text part, tool_choice auto, ...; see "
        "docs/guides/replay.md).",
        parse=parse.flag,
    ),
    OptionDef(
        "head_timeout",
        Kind.NUMBER,
        10.0,
        "Seconds a client has to send a whole request head, and to start its next request on "
        "a kept-alive connection; then the connection is closed (a half-sent head gets a 408).",
        metavar="SECONDS",
        parse=parse.seconds,
    ),
    OptionDef(
        "body_timeout",
        Kind.NUMBER,
        30.0,
        "Seconds a request body may pause between reads before the request is refused with "
        "a 408 and its connection closed.",
        metavar="SECONDS",
        parse=parse.seconds,
    ),
    OptionDef(
        "max_connections",
        Kind.NUMBER,
        1000,
        "Client connections served at once (lowered to fit the open-files limit). Past it, "
        "the connection idle longest is closed for the new one, or the new one gets a 503.",
        metavar="N",
        parse=parse.connection_count,
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
    ),
    OptionDef(
        "redact_query",
        Kind.LIST,
        (),
        "Also redact this URL query parameter (repeatable); 'key' always is.",
        metavar="NAME",
        group=Group.RECORD,
        parse=parse.names_to_redact,
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
    ),
    OptionDef(
        "no_redact",
        Kind.FLAG,
        False,
        "Record secrets as they are. The cassette will then contain your API keys.",
        group=Group.RECORD,
        parse=parse.flag,
    ),
    OptionDef(
        "record_tls_failures",
        Kind.FLAG,
        False,
        "Also record requests that failed because the upstream certificate was not "
        "trusted (as no_response); by default they are reported with the --upstream-ca hint.",
        group=Group.RECORD,
        parse=parse.flag,
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
    """How a session records what it forwards: the redaction, and whether a request whose
    upstream certificate failed verification is recorded (as ``no_response``) or only
    reported. ``hooks``: the in-process callables (``before_record_request``...) run after the
    redaction, set by ``use_cassette`` (never by an option of the table)."""

    redactor: Redactor = field(default_factory=Redactor)
    tls_failures: bool = False
    hooks: RecordHooks = field(default_factory=RecordHooks)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a client may take and how many may connect at once
    (docs/explanations/reliability.md): ``head_timeout`` seconds for a request head (and for the
    next one on a kept-alive connection), ``body_timeout`` seconds of silence inside a request body,
    at most ``max_connections`` client connections (fewer if the open-files limit is lower)."""

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


def settings_from(
    values: Mapping[str, Any], *, where: Callable[[str], str] = python_words
) -> ReplaySettings:
    """Build :class:`ReplaySettings` from ``{option name: value}``; absent names take their
    defaults. Unknown names and bad values raise a one-line UsageError / FaultSpecError that
    names the option as ``where`` spells it (``option --speed``, ``marker keyword 'speed'``)."""
    unknown = sorted(set(values) - set(_BY_NAME))
    if unknown:
        raise UsageError(f"unknown {where(unknown[0])} (known: {', '.join(_BY_NAME)})")
    got = {
        name: parse_value(opt, values[name], where) if name in values else opt.parse(opt.default)
        for name, opt in _BY_NAME.items()
    }
    redactor = (
        NO_REDACTION
        if got["no_redact"]
        else Redactor.with_extra(
            got["redact_header"], got["redact_query"], got["redact_body_field"]
        )
    )
    return ReplaySettings(
        record_mode=got["record_mode"],
        speed=got["speed"],
        faults=got["faults"],
        match=MatchOptions(
            ignore_query=frozenset(got["ignore_query"]),
            ignore_body_fields=got["ignore_body_field"],
            match_host=got["match_host"],
            allow_repeats=got["allow_repeats"],
            equivalence=not got["no_equivalence"],
        ),
        record=RecordSettings(redactor=redactor, tls_failures=got["record_tls_failures"]),
        connections=ConnectionLimits(
            got["head_timeout"], got["body_timeout"], got["max_connections"]
        ),
        http_version=got["http_version"],
    )
