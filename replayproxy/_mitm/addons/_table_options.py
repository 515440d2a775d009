"""Rows of the option table declared as mitmproxy options, for both addons (one mapping of
:class:`~replayproxy._core.replay.option_def.Kind` to mitmproxy's option types)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from replayproxy._core.replay.option_def import Kind, OptionDef

__all__ = ["declare_rows"]

_MITM_TYPES: dict[Kind, Any] = {
    Kind.NUMBER: str,  # mitmproxy has no float options
    Kind.TEXT: str,
    Kind.LIST: Sequence[str],
    Kind.FLAG: bool,
}


def declare_rows(loader: Any, rows: Iterable[OptionDef]) -> None:
    """Declare each row as the mitmproxy option ``row.mitm_name``, with its default and help."""
    for opt in rows:
        default: Any = opt.default
        if opt.kind is Kind.NUMBER:
            default = f"{opt.default:g}"
        elif opt.kind is Kind.LIST:
            default = list(opt.default)
        extra = {"choices": opt.choices} if opt.choices else {}
        loader.add_option(opt.mitm_name, _MITM_TYPES[opt.kind], default, opt.help, **extra)
