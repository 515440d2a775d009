"""Fault spec parsing: names, parameters, types and one-line errors."""

from __future__ import annotations

import pytest

from replayproxy.core.faults import CATALOGUE, FaultSpec, parse
from replayproxy.errors import FaultSpecError, UsageError

REQUIRED = [
    "reset", "close", "truncate", "hang", "linger", "stall", "ttfb", "keepalive", "jitter",
    "throttle", "split", "coalesce", "drop", "duplicate", "reorder", "corrupt", "error", "status",
]  # fmt: skip


def test_catalogue_has_every_contract_name() -> None:
    """Every fault name of the user-facing contract is in the catalogue, and nothing else."""
    assert sorted(CATALOGUE) == sorted(REQUIRED)


@pytest.mark.parametrize(
    ("text", "name", "params"),
    [
        ("reset", "reset", ()),
        ("reset:events=3", "reset", (("events", "3"),)),
        ("stall:for=0.5,time=1.25", "stall", (("for", "0.5"), ("time", "1.25"))),
        (" split : at=utf8 , gap=0 ", "split", (("at", "utf8"), ("gap", "0"))),
        ("status:code=529,retry-after=3", "status", (("code", "529"), ("retry-after", "3"))),
        (
            "close:path=/v1beta/models/*:streamGenerateContent,p=0.5,seed=7",
            "close",
            (("path", "/v1beta/models/*:streamGenerateContent"), ("p", "0.5"), ("seed", "7")),
        ),
    ],
)
def test_parse_valid(text: str, name: str, params: tuple[tuple[str, str], ...]) -> None:
    """Valid specs parse into the name and the parameters as given (a glob may contain ':')."""
    spec = parse(text)
    assert isinstance(spec, FaultSpec)
    assert (spec.name, spec.params) == (name, params)


def test_typed_values_and_defaults() -> None:
    """Parameters convert to their types; absent ones take the catalogue default."""
    spec = parse("stall:for=0.25,events=2")
    assert spec.number("for") == 0.25
    assert spec.position() == ("events", 2.0)
    assert parse("stall").number("for") == 1.0
    assert parse("stall").position() is None
    assert parse("jitter").string("dist") == "uniform"
    assert parse("reset").number("p") == 1.0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("explode", "unknown fault 'explode'"),
        ("explode", "valid faults: close, coalesce, corrupt"),
        ("reset:foo=1", "unknown parameter 'foo'; valid: bytes, events, frames, interaction, p,"),
        ("stall:for=abc", "for='abc': not a valid value"),
        ("stall:for=-1", "must be a number of seconds from 0"),
        ("stall:for=nan", "must be a number of seconds from 0"),
        ("reset:events=-2", "must be >= 0"),
        ("reset:p=1.5", "must be between 0 and 1"),
        ("status:code=42", "must be an HTTP status 100-599"),
        ("jitter:dist=normal", "must be one of uniform|lognormal"),
        ("split:at=word", "must be one of utf8|midline|crlf|random"),
        ("split", "give exactly one of bytes=K or at="),
        ("split:bytes=3,at=utf8", "give exactly one of bytes=K or at="),
        ("reset:events=1,bytes=4", "give at most one position, got bytes, events"),
        ("drop", "missing required parameter event="),
        ("throttle", "missing required parameter bps="),
        ("throttle:bps=0", "must be > 0"),
        ("reset:events", "expected PARAM=VALUE"),
        ("reset:events=1,events=2", "given twice"),
        ("linger:events=1", "unknown parameter 'events'"),
        ("", "unknown fault ''"),
    ],
)
def test_malformed_specs_raise_one_line(text: str, fragment: str) -> None:
    """A malformed spec raises FaultSpecError (a UsageError) with one line naming the problem."""
    with pytest.raises(FaultSpecError) as info:
        parse(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert isinstance(info.value, UsageError)


def test_every_fault_accepts_selectors() -> None:
    """interaction=, path=, p= and seed= are accepted by every fault."""
    for name, definition in CATALOGUE.items():
        extra = ",".join(f"{k}=1" for k in definition.required)
        if name == "split":
            extra = "bytes=1"
        text = f"{name}:interaction=0,path=/v1/*,p=0.5,seed=3" + (f",{extra}" if extra else "")
        assert parse(text).name == name
