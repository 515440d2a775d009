"""What one row of the option table says (pure): :class:`OptionDef`, its value :class:`Kind`,
its :class:`Group`, the :class:`Front` ends that take it, the setting its value goes to and the
options it contradicts. The rows themselves are in :mod:`replayproxy._core.replay.options`."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GROUP_FRONTS", "Front", "Group", "Kind", "OptionDef"]


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


class Front(enum.StrEnum):
    """A place where users set options."""

    RECORD_CLI = "replayproxy record"
    REPLAY_CLI = "replayproxy replay"
    MATRIX_CLI = "replayproxy matrix"
    """Each cell replays only (no record mode), with the cell's faults (no ``--fault``)."""
    MITM = "mitmproxy addon option"
    """``--set replayproxy_...``: the replay addon declares the replay group, the recorder the
    record group."""
    PYTEST = "pytest"
    """A command-line flag, an ini key, a marker keyword and a ``replayproxy_config`` key."""
    PYTHON = "use_cassette()"
    SERVER = "ReplayServer()"
    """The replay engine alone: it never forwards, so it takes no record option."""


class Group(enum.StrEnum):
    """What an option is about; each group has its front ends (:data:`GROUP_FRONTS`)."""

    REPLAY = "replay"
    """How a cassette is served and requests are matched."""
    RECORD = "record"
    """What a recording keeps (redaction, failed TLS requests): it applies to
    ``replayproxy record`` and to the record modes, wherever they record."""


GROUP_FRONTS: dict[Group, frozenset[Front]] = {
    Group.REPLAY: frozenset(
        {Front.REPLAY_CLI, Front.MATRIX_CLI, Front.MITM, Front.PYTEST, Front.PYTHON, Front.SERVER}
    ),
    Group.RECORD: frozenset(
        {Front.RECORD_CLI, Front.REPLAY_CLI, Front.MITM, Front.PYTEST, Front.PYTHON}
    ),
}


def _unchanged(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class OptionDef:
    """One option and its name in each interface.

    ``name`` is the Python name (marker keyword, ``replayproxy_config`` key, keyword argument,
    :func:`~replayproxy._core.replay.options.settings_from` key); ``flag`` the CLI spelling
    without dashes (``fault`` for ``faults``); ``mitm`` the mitmproxy option name without the
    ``replayproxy_`` prefix, when it differs from ``name``. ``parse`` turns a collected value
    into the value of its setting (raising a one-line UsageError); ``setting`` names that
    field of :class:`~replayproxy._core.replay.options.ReplaySettings` (``match.ignore_query``:
    a field of a field), by default ``name``. ``self_named``: its messages name the option
    already ("speed must be ...", "fault 'stall': ..."), so they are not prefixed with where it
    was set. ``skip``: front ends of the group that do not take this one. ``conflicts``:
    options that contradict this one when both are given (each pair declared on one row).
    ``example``: a valid value as a user writes it (the front-end tests set every option to
    it). ``adds_up``: the pytest plugin joins its values from every level (ini, conftest,
    markers, command line) instead of letting the closest replace them.
    """

    name: str
    kind: Kind
    default: Any
    help: str
    metavar: str = ""
    choices: tuple[str, ...] = ()
    flag: str = ""
    mitm: str = ""
    group: Group = Group.REPLAY
    parse: Callable[[Any], Any] = field(default=_unchanged, compare=False, repr=False)
    self_named: bool = False
    skip: frozenset[Front] = frozenset()
    setting: str = ""
    conflicts: tuple[str, ...] = ()
    example: Any = None
    adds_up: bool = False

    @property
    def fronts(self) -> frozenset[Front]:
        """The front ends that take this option."""
        return GROUP_FRONTS[self.group] - self.skip

    @property
    def setting_path(self) -> tuple[str, ...]:
        """``("match", "ignore_query")``: where the parsed value goes in the settings."""
        return tuple((self.setting or self.name).split("."))

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
