"""The replay options, declared once: the CLI, the mitmproxy addon and the pytest plugin
generate their own flags, addon options and ini keys from :data:`REPLAY_OPTIONS` (pure).

Each :class:`OptionDef` names the option in every interface, so they cannot drift apart; for
``speed``: ``replay --speed`` (CLI), ``replayproxy_speed`` (mitmproxy ``--set``),
``--replayproxy-speed`` and the ini key ``replayproxy_speed`` (pytest), ``speed=`` (marker and
Python API), and so on for every row. :func:`settings_from` turns the collected values (a
mapping from :attr:`OptionDef.name` to value, as any of the shells parsed them) into one
validated :class:`ReplaySettings`, the only place a
:class:`~replayproxy.core.matching.matcher.MatchOptions` is
built from user input.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replayproxy.core import faults as faults_mod
from replayproxy.core.faults import FaultSpec
from replayproxy.core.matching.matcher import MatchOptions
from replayproxy.core.replay.checks import check_speed
from replayproxy.core.replay.record_mode import RecordMode, parse_record_mode
from replayproxy.errors import UsageError

__all__ = [
    "REPLAY_OPTIONS",
    "Kind",
    "OptionDef",
    "ReplaySettings",
    "option",
    "settings_from",
]


class Kind(enum.StrEnum):
    """The value type of an option, which each shell maps to its own parser."""

    NUMBER = "number"
    """A float (``--speed 2``); kept as text in mitmproxy, which has no float options."""
    TEXT = "text"
    """A string, optionally one of :attr:`OptionDef.choices`."""
    LIST = "list"
    """Repeatable (``--fault A --fault B``); a list in mitmproxy, lines in an ini file."""
    FLAG = "flag"
    """A boolean switch, off by default."""


@dataclass(frozen=True, slots=True)
class OptionDef:
    """One replay option and its name in each interface.

    ``name`` is the Python name (marker keyword, :func:`settings_from` key); ``flag`` the CLI
    spelling without dashes (``fault`` for ``faults``); ``mitm`` the mitmproxy option name
    without the ``replayproxy_`` prefix, when it differs from ``name``.
    """

    name: str
    kind: Kind
    default: Any
    help: str
    metavar: str = ""
    choices: tuple[str, ...] = ()
    flag: str = ""
    mitm: str = ""

    @property
    def cli_flag(self) -> str:
        """``--speed``, ``--fault``, ``--record-mode``."""
        return "--" + (self.flag or self.name).replace("_", "-")

    @property
    def mitm_name(self) -> str:
        """``replayproxy_speed``: the mitmproxy option (``--set`` key)."""
        return "replayproxy_" + (self.mitm or self.name)

    @property
    def pytest_flag(self) -> str:
        """``--replayproxy-speed``: prefixed, so it never clashes with pytest-recording."""
        return "--replayproxy-" + (self.flag or self.name).replace("_", "-")

    @property
    def ini_name(self) -> str:
        """``replayproxy_speed``: the pytest ini key."""
        return "replayproxy_" + (self.flag or self.name)


REPLAY_OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "record_mode",
        Kind.TEXT,
        RecordMode.NONE.value,
        "none: replay only, a new request fails; once: record the cassette if it does not "
        "exist, else replay only; new_episodes: replay what matches, record the rest; all: "
        "record everything again.",
        metavar="MODE",
        choices=tuple(m.value for m in RecordMode),
        # The recorder's replayproxy_record_mode (new/append/overwrite) is another option.
        mitm="replay_record_mode",
    ),
    OptionDef(
        "speed",
        Kind.NUMBER,
        1.0,
        "Replay speed: 1 = as recorded, 2 = twice as fast, 0 = no waiting.",
        metavar="FACTOR",
    ),
    OptionDef(
        "faults",
        Kind.LIST,
        (),
        "Inject a fault into every replayed response (NAME:PARAM=VALUE,...). Repeatable.",
        metavar="SPEC",
        flag="fault",
    ),
    OptionDef(
        "ignore_query",
        Kind.LIST,
        (),
        "Ignore this query parameter when matching. Repeatable.",
        metavar="NAME",
    ),
    OptionDef(
        "ignore_body_field",
        Kind.LIST,
        (),
        "Ignore this JSON body field (JSON pointer, e.g. /stream_options) when matching. "
        "Repeatable.",
        metavar="POINTER",
    ),
    OptionDef(
        "allow_repeats",
        Kind.FLAG,
        False,
        "Once the matching interactions are used up, serve the last one again.",
    ),
    OptionDef(
        "match_host",
        Kind.FLAG,
        False,
        "Also require the host to match (ignored by default).",
    ),
    OptionDef(
        "no_equivalence",
        Kind.FLAG,
        False,
        "Compare request bodies exactly (key order still ignored), not the shapes the provider "
        "documents as identical (a string vs one text part, tool_choice auto, ...; see "
        "docs/replay.md).",
    ),
)

_BY_NAME = {o.name: o for o in REPLAY_OPTIONS}


def option(name: str) -> OptionDef:
    """The option called ``name`` (KeyError if there is none)."""
    return _BY_NAME[name]


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """Validated replay settings: what a :class:`~replayproxy.engine.session.ReplaySession`
    is built from, whichever interface the user set them in."""

    record_mode: RecordMode = RecordMode.NONE
    speed: float = 1.0
    faults: tuple[FaultSpec, ...] = ()
    match: MatchOptions = field(default_factory=MatchOptions)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        # An ini value or a single marker keyword: one item per non-empty line.
        return tuple(line.strip() for line in value.splitlines() if line.strip())
    if isinstance(value, FaultSpec):
        return (value,)  # type: ignore[return-value]  # parsed specs pass through
    return tuple(value)


def settings_from(values: Mapping[str, Any]) -> ReplaySettings:
    """Build :class:`ReplaySettings` from ``{option name: value}``; absent names take their
    defaults. Unknown names and bad values raise a one-line UsageError / FaultSpecError."""
    unknown = sorted(set(values) - set(_BY_NAME))
    if unknown:
        known = ", ".join(_BY_NAME)
        raise UsageError(f"unknown replay option {unknown[0]!r} (known: {known})")
    get = {name: values.get(name, opt.default) for name, opt in _BY_NAME.items()}
    faults: Sequence[Any] = _strings(get["faults"])
    return ReplaySettings(
        record_mode=parse_record_mode(get["record_mode"]),
        speed=check_speed(get["speed"]),
        faults=tuple(f if isinstance(f, FaultSpec) else faults_mod.parse(f) for f in faults),
        match=MatchOptions(
            ignore_query=frozenset(_strings(get["ignore_query"])),
            ignore_body_fields=_strings(get["ignore_body_field"]),
            match_host=bool(get["match_host"]),
            allow_repeats=bool(get["allow_repeats"]),
            equivalence=not get["no_equivalence"],
        ),
    )
