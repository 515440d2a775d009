"""The replay addon's mitmproxy options: declared from the option table, turned into a session.

For ``mitmdump -s mitmdump_replay.py --set ...``: ``replayproxy_replay`` (the cassette path)
and one option per row of :data:`replayproxy._core.replay.options.REPLAY_OPTIONS`
(``replayproxy_speed``, ``replayproxy_faults``, ``replayproxy_ignore_query``,
``replayproxy_ignore_body_field``, ``replayproxy_allow_repeats``, ``replayproxy_match_host``,
``replayproxy_no_equivalence``, ``replayproxy_replay_record_mode``). Kept apart from
:mod:`~replayproxy._mitm.addons.replayer`, which holds the hooks that serve flows: this is
configuration, and the CLI and the Python API pass a ready session instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mitmproxy import exceptions

from replayproxy._core.matching.matcher import Miss
from replayproxy._core.replay.options import REPLAY_OPTIONS, mitm_settings
from replayproxy._engine.failsafe import ReplayFailure
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import ReplayProxyError
from replayproxy._mitm.addons._table_options import declare_rows

__all__ = ["declare_options", "keep_lazy", "session_from_options"]

# The replayer's logger: what a mitmdump user filters on.
log = logging.getLogger("replayproxy._mitm.addons.replayer")

# mitmproxy 11 leaves OptionsError untyped; keep mypy strict happy on both versions.
_options_error: Callable[[str], Exception] = exceptions.OptionsError


def declare_options(loader: Any) -> None:
    """Declare ``replayproxy_replay`` and the table's options on mitmproxy's loader."""
    loader.add_option(
        "replayproxy_replay", str | None, None, "Replay this cassette (no upstream traffic)."
    )
    declare_rows(loader, REPLAY_OPTIONS)  # declared once, in replayproxy._core.replay.options


def session_from_options(opts: Any) -> ReplaySession | None:
    """The session the options ask for (``None`` without ``replayproxy_replay``); a bad value
    is mitmproxy's ``OptionsError`` with our one-line message."""
    if not opts.replayproxy_replay:
        return None
    try:
        settings = mitm_settings(opts)  # with the recorder's record group, if it is loaded
        return ReplaySession.from_settings(
            opts.replayproxy_replay,
            settings,
            on_miss=_log_miss,
            on_warning=log.warning,
            on_error=_log_failure,
        )
    except ReplayProxyError as e:
        raise _options_error(str(e)) from None


def keep_lazy(opts: Any) -> None:
    """Replay must never resolve or connect to the recorded host
    (docs/contributing/mitmproxy-internals.md §2): switch ``connection_strategy`` to ``lazy``."""
    if "connection_strategy" in opts and opts.connection_strategy != "lazy":
        opts.update(connection_strategy="lazy")


def _log_miss(miss: Miss) -> None:
    log.warning(miss.one_line())


def _log_failure(failure: ReplayFailure) -> None:
    log.error(failure.one_line())
