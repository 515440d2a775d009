"""VCR.py's configuration names on top of the option table, and pytest-recording's
``--disable-recording`` (docs/guides/migrating-from-vcrpy.md, "`vcr_config` keys").

- ``filter_headers``, ``filter_query_parameters``, ``filter_post_data_parameters`` (marker
  keywords, ``replayproxy_config`` keys, ini keys ``replayproxy_filter_...``): names, or
  ``(name, replacement)`` pairs, become the table's ``redact_header``, ``redact_query``,
  ``redact_body_field`` (a post-data name ``user`` is the JSON pointer ``/user``). A query
  parameter or body field stored with a replacement is also ignored when matching (as VCR.py
  filters the request before matching it), so a replay with the real value still matches.
- ``before_record_request`` / ``before_record_response``: callables
  (:mod:`replayproxy._core.redaction.hooks`), marker or ``replayproxy_config`` only; the ini
  keys of those names exist only to refuse them in one line.
- ``--replayproxy-disable-recording`` (ini ``replayproxy_disable_recording``): the plugin does
  nothing; the ``replayproxy`` fixture yields a :class:`RecordingDisabled`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from replayproxy._core.replay.checks import check_upstream
from replayproxy._core.replay.option_values import strings
from replayproxy._errors import UsageError

__all__ = ["FILTERS", "HOOKS", "RecordingDisabled"]

FILTERS = {
    "filter_headers": "redact_header",
    "filter_query_parameters": "redact_query",
    "filter_post_data_parameters": "redact_body_field",
}
"""VCR.py's filter keyword -> the option table's redaction option."""

HOOKS = ("before_record_request", "before_record_response")
"""VCR.py's callables: passed to ``use_cassette`` as they are (never through ini)."""

# A replaced value is not a wildcard to the matcher: ignore what it replaced when matching.
_IGNORED_WITH_VALUE = {"redact_query": "ignore_query", "redact_body_field": "ignore_body_field"}

_DISABLE = "disable_recording"


def addoption(parser: pytest.Parser, group: pytest.OptionGroup) -> None:
    """Add the switch and the ini keys (called by the plugin's ``pytest_addoption``)."""
    help_disable = (
        "Run the tests without replayproxy: no proxy, no environment changes, no cassette "
        "read or written (the tests reach the real upstreams)."
    )
    group.addoption(
        "--replayproxy-disable-recording",
        dest="replayproxy_" + _DISABLE,
        action="store_true",
        default=None,
        help=help_disable,
    )
    parser.addini("replayproxy_" + _DISABLE, help_disable, type="bool", default=False)
    for name, target in FILTERS.items():
        parser.addini(
            "replayproxy_" + name,
            f"VCR.py's {name}: NAME or NAME=REPLACEMENT lines (see {target}).",
            type="linelist",
            default=[],
        )
    for name in HOOKS:
        parser.addini("replayproxy_" + name, f"(refused: {name} is a callable)", default="")


def configure(config: pytest.Config) -> None:
    """Refuse a callable set in an ini file (called by the plugin's ``pytest_configure``)."""
    for name in HOOKS:
        if str(config.getini("replayproxy_" + name)).strip():
            raise pytest.UsageError(
                f"ini key replayproxy_{name}: a callable cannot be set in an ini file; return "
                f"{name!r} from the replayproxy_config fixture or pass it to the marker"
            )


def disabled(config: pytest.Config) -> bool:
    """Whether ``--replayproxy-disable-recording`` (or its ini key) is on."""
    return bool(
        config.getoption("replayproxy_" + _DISABLE) or config.getini("replayproxy_" + _DISABLE)
    )


@dataclass(frozen=True, slots=True)
class RecordingDisabled:
    """What the ``replayproxy`` fixture yields under ``--replayproxy-disable-recording``.

    ``url``: the test's ``upstream`` (marker or ``replayproxy_config``), so code that builds
    its base URL from ``replayproxy.url`` reaches the real API; ``None`` in proxy mode (no
    ``upstream``: clients go where they always go). ``env`` is empty, nothing is recorded.
    """

    url: str | None
    env: Mapping[str, str]
    proxy_mode: bool

    @property
    def misses(self) -> list[Any]:
        return []

    def explain(self) -> str:
        return ""


def disabled_use(levels: Iterable[Mapping[str, Any]]) -> RecordingDisabled:
    """The fixture's value with recording disabled: ``levels`` widest first (config, then the
    markers), the closest ``upstream`` wins."""
    upstream = None
    for level in levels:
        upstream = level.get("upstream", upstream)
    url = None if upstream is None else check_upstream(upstream)
    return RecordingDisabled(url, {}, proxy_mode=url is None)


def _pointer(name: str) -> str:
    """A post-data parameter name as a JSON pointer (a pointer stays as it is)."""
    return name if name.startswith("/") else "/" + name.replace("~", "~0").replace("/", "~1")


def _item(item: Any, key: str, where: str) -> tuple[str, str | None]:
    """``(name, replacement or None)`` of one filter entry."""
    if isinstance(item, str):
        return item, None
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
        name, value = item
        if value is None or isinstance(value, str):
            return name, value
    raise UsageError(
        f"{where}: each entry must be a name or a (name, replacement) pair of strings, got {item!r}"
    )


def translated(level: Mapping[str, Any], words: Callable[[str], str]) -> dict[str, Any]:
    """``level`` (a marker's keywords, ``replayproxy_config``) with VCR.py's filter keywords
    turned into the table's options (added to any the level names itself); the callables are
    checked and kept."""
    out = {k: v for k, v in level.items() if k not in FILTERS}
    for key, target in FILTERS.items():
        if key not in level:
            continue
        raw = level[key]
        entries = [raw] if isinstance(raw, str) else list(raw)
        added: list[str | tuple[str, str]] = []
        ignored: list[str] = []
        for entry in entries:
            name, value = _item(entry, key, words(key))
            if target == "redact_body_field":
                name = _pointer(name)
            added.append(name if value is None else (name, value))
            if value is not None and target in _IGNORED_WITH_VALUE:
                ignored.append(name)
        out[target] = [*strings(out.get(target, ())), *added]
        if ignored:
            also = _IGNORED_WITH_VALUE[target]
            out[also] = [*strings(out.get(also, ())), *ignored]
    return out


def with_ini_filters(config: pytest.Config, ini: Mapping[str, Any]) -> dict[str, Any]:
    """``ini`` (the table's ini values) with the ``replayproxy_filter_...`` ini keys added:
    one ``NAME`` or ``NAME=REPLACEMENT`` per line."""
    level: dict[str, Any] = {}
    for key in FILTERS:
        lines = [str(line).strip() for line in config.getini("replayproxy_" + key)]
        pairs = [tuple(x.strip() for x in line.split("=", 1)) for line in lines if line]
        if pairs:
            level[key] = [p[0] if len(p) == 1 else p for p in pairs]
    return translated({**ini, **level}, lambda name: f"ini key replayproxy_{name}")
