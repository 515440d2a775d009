"""The recording addon's mitmproxy options: declared once, and the record settings they give.

Kept apart from :mod:`~replayproxy._mitm.addons.recorder`, which holds the hooks that record
flows: this is configuration. The cassette target and its write mode
(:class:`~replayproxy._core.replay.cassette_write.CassetteWrite`) are the recorder's own; the
redaction and failed-TLS options are the record group of the option table
(:data:`~replayproxy._core.replay.options.RECORD_OPTIONS`), which the CLI, the pytest plugin and
``use_cassette()`` take too. The cassette target is checked here, before the proxy starts, so
a bad path fails the start with one line and creates nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mitmproxy import exceptions

from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._core.replay.options import (
    RECORD_OPTIONS,
    RecordSettings,
    mitm_words,
    settings_from,
)
from replayproxy._errors import CassetteError, CassetteExistsError, UsageError
from replayproxy._mitm.addons._table_options import declare_rows
from replayproxy._store import load

__all__ = [
    "WRITE_MODES",
    "WRITE_MODE_OPTIONS",
    "OptionsError",
    "check_target",
    "declare_options",
    "record_settings_from",
    "write_mode_from",
]

WRITE_MODES = tuple(m.value for m in CassetteWrite)
"""The values of ``replayproxy_write_mode``, the recorder's write mode (not a record mode)."""

OLD_WRITE_MODE = "replayproxy_record_mode"
"""The write mode's old name, still accepted: a record mode is VCR's none/once/new_episodes/all
(``replayproxy_replay_record_mode``), so the recorder's new/append/overwrite got its own name."""

WRITE_MODE_OPTIONS = frozenset({"replayproxy_write_mode", OLD_WRITE_MODE})

# The recorder's logger: what a mitmdump user filters on.
logger = logging.getLogger("replayproxy.record")

# mitmproxy 11's exception classes are untyped; keep mypy strict quiet on both versions.
OptionsError: Any = exceptions.OptionsError


def declare_options(loader: Any) -> None:
    """Declare ``replayproxy_record``, its write mode and the record group's options."""
    loader.add_option("replayproxy_record", str, "", "Record every flow to this cassette file.")
    loader.add_option(
        "replayproxy_write_mode",
        str,
        CassetteWrite.NEW.value,
        "The write mode: new: refuse an existing cassette; append: add to it; overwrite: "
        "replace it.",
        choices=WRITE_MODES,
    )
    loader.add_option(
        OLD_WRITE_MODE,
        str,
        "",  # unset: replayproxy_write_mode decides
        "Deprecated: the old name of replayproxy_write_mode.",
    )
    declare_rows(loader, RECORD_OPTIONS)  # declared once, in replayproxy._core.replay.options


def record_settings_from(opts: Any) -> RecordSettings:
    """The record settings mitmproxy's current options ask for; :class:`OptionsError` names a
    bad one."""
    try:
        settings = settings_from(
            {o.name: getattr(opts, o.mitm_name) for o in RECORD_OPTIONS}, where=mitm_words
        )
    except UsageError as e:
        raise OptionsError(str(e)) from None
    return settings.record


def write_mode_from(opts: Any) -> str:
    """The write mode the options ask for: ``replayproxy_write_mode``, or its old name when
    only that is set (with a warning naming the new one); both set differently is an error."""
    new, old = opts.replayproxy_write_mode, getattr(opts, OLD_WRITE_MODE)
    if not old:
        return str(new)
    if old not in WRITE_MODES:
        raise OptionsError(f"{OLD_WRITE_MODE} must be one of {', '.join(WRITE_MODES)}")
    if new not in (old, CassetteWrite.NEW.value):
        raise OptionsError(
            f"replayproxy_write_mode={new} and {OLD_WRITE_MODE}={old} disagree; "
            f"set only replayproxy_write_mode"
        )
    logger.warning(
        "replayproxy: %s is deprecated, use --set replayproxy_write_mode=%s (a record mode is "
        "none/once/new_episodes/all)",
        OLD_WRITE_MODE,
        old,
    )
    return str(old)


def check_target(path: str, mode: str) -> None:
    """Refuse a cassette target the writer would refuse, before anything is created."""
    if mode not in WRITE_MODES:
        raise OptionsError(f"replayproxy_write_mode must be one of {', '.join(WRITE_MODES)}")
    target = Path(path)
    if target.is_dir():
        raise OptionsError(f"{path}: is a directory, not a cassette file")
    if not (target.parent if str(target.parent) else Path(".")).is_dir():
        raise OptionsError(f"{path}: directory {target.parent} does not exist")
    if mode == CassetteWrite.NEW and target.exists():
        raise OptionsError(str(CassetteExistsError(_EXISTS, path=path)))
    if mode == CassetteWrite.APPEND and target.exists():
        try:
            load(target, on_warning=lambda message: None)  # the writer reports a torn tail
        except CassetteError as e:
            raise OptionsError(str(e)) from None


_EXISTS = "already exists; pass --append to add to it or --overwrite to replace it"
