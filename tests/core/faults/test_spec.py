"""Fault spec parsing: names, parameters, types and one-line errors."""

from __future__ import annotations

import pytest

from replayproxy._core.faults import CATALOGUE, FAULTS, FaultSpec, parse
from replayproxy._errors import FaultSpecError, UsageError


def test_the_parser_knows_every_registered_fault() -> None:
    """Every fault of the registry parses by its name (with its required parameters), the
    catalogue is the registry, and an unknown fault's error lists exactly the registry's names."""
    for name, definition in FAULTS.items():
        given = [f"{k}=1" for k in definition.required]
        if definition.one_of is not None:
            given.append(f"{definition.one_of.names[0]}=1")
        assert parse(":".join([name, ",".join(given)]) if given else name).name == name
    assert CATALOGUE is FAULTS
    with pytest.raises(FaultSpecError) as info:
        parse("explode")
    assert str(info.value).endswith("valid faults: " + ", ".join(sorted(FAULTS)))


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
        (
            "reset:foo=1",
            "unknown parameter 'foo'; valid: attempt, bytes, events, frames, interaction,",
        ),
        ("stall:for=abc", "for='abc': not a valid value"),
        ("stall:for=-1", "must be a number of seconds from 0"),
        ("stall:for=nan", "must be a number of seconds from 0"),
        ("reset:events=-2", "must be >= 0"),
        ("reset:p=1.5", "must be between 0 and 1"),
        ("status:code=42", "must be a final HTTP status 200-599"),
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
    for name, definition in FAULTS.items():
        extra = ",".join(f"{k}=1" for k in definition.required)
        if name == "split":
            extra = "bytes=1"
        text = f"{name}:interaction=0,path=/v1/*,p=0.5,seed=3" + (f",{extra}" if extra else "")
        assert parse(text).name == name


_VALID = (
    "close, coalesce, corrupt, drop, duplicate, error, hang, jitter, keepalive, linger, reorder, "
    "reset, split, stall, status, throttle, truncate, ttfb"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("explode:x=1", f"unknown fault 'explode' in 'explode:x=1'; valid faults: {_VALID}"),
        (" stall : for = 1 , x ", "fault ' stall : for = 1 , x ': expected PARAM=VALUE, got 'x'"),
        ("stall:=1", "fault 'stall:=1': expected PARAM=VALUE, got '=1'"),
        (
            "ttfb:for=1",
            "fault 'ttfb': unknown parameter 'for'; "
            "valid: attempt, delay, interaction, p, path, seed",
        ),
        ("ttfb:delay=1,delay=2", "fault 'ttfb:delay=1,delay=2': parameter 'delay' given twice"),
        ("ttfb:delay=x", "fault 'ttfb': delay='x': not a valid value"),
        (
            "ttfb:delay=86400.1",
            "fault 'ttfb': delay='86400.1': must be a number of seconds from 0 to at most 86400",
        ),
        (
            "jitter:ms=-1",
            "fault 'jitter': ms='-1': must be a number of milliseconds from 0 to at most 86400000",
        ),
        (
            "jitter:ms=86400000.5",
            "fault 'jitter': ms='86400000.5': must be a number of milliseconds from 0 to at most "
            "86400000",
        ),
        (
            "jitter:ms=inf",
            "fault 'jitter': ms='inf': must be a number of milliseconds from 0 to at most 86400000",
        ),
        (
            "keepalive:every=0.001",
            "fault 'keepalive': every='0.001': must be at least 0.01 seconds",
        ),
        ("keepalive:kind=beep", "fault 'keepalive': kind='beep': must be one of auto|comment|ping"),
        ("keepalive:text=", "fault 'keepalive': text='': must not be empty"),
        (
            "status:code=99",
            "fault 'status': code='99': must be a final HTTP status 200-599",
        ),
        (
            "status:code=600",
            "fault 'status': code='600': must be a final HTTP status 200-599",
        ),
        ("status:message=", "fault 'status': message='': must not be empty"),
        ("status:p=-0.1", "fault 'status': p='-0.1': must be between 0 and 1"),
        ("status:p=1.01", "fault 'status': p='1.01': must be between 0 and 1"),
        ("hang:interaction=-1", "fault 'hang': interaction='-1': must be >= 0"),
        ("hang:interaction=1.5", "fault 'hang': interaction='1.5': not a valid value"),
        ("hang:path=", "fault 'hang': path='': must not be empty"),
        ("throttle:bps=-3", "fault 'throttle': bps='-3': must be > 0"),
        (
            "close:code=999",
            "fault 'close': code='999': must be a WebSocket close code 1000-4999 "
            "(not 1004/1005/1015)",
        ),
        (
            "close:code=5000",
            "fault 'close': code='5000': must be a WebSocket close code 1000-4999 "
            "(not 1004/1005/1015)",
        ),
        (
            "close:code=1004",
            "fault 'close': code='1004': must be a WebSocket close code 1000-4999 "
            "(not 1004/1005/1015)",
        ),
        (
            "close:code=1005",
            "fault 'close': code='1005': must be a WebSocket close code 1000-4999 "
            "(not 1004/1005/1015)",
        ),
        (
            "close:code=1015",
            "fault 'close': code='1015': must be a WebSocket close code 1000-4999 "
            "(not 1004/1005/1015)",
        ),
        ("close:reason=", "fault 'close': reason='': must not be empty"),
        ("error:type=", "fault 'error': type='': must not be empty"),
        (
            "hang:time=1,frames=2,events=3",
            "fault 'hang:time=1,frames=2,events=3': give at most one position, got events, "
            "frames, time",
        ),
        ("corrupt", "fault 'corrupt': missing required parameter event="),
        (
            "split:avg=3",
            "fault 'split:avg=3': give exactly one of bytes=K or at=utf8|midline|crlf|random",
        ),
    ],
)
def test_spec_errors_are_exact(text: str, message: str) -> None:
    """Each malformed spec gets exactly this one-line message."""
    with pytest.raises(FaultSpecError) as info:
        parse(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "text",
    [
        "ttfb:delay=0",
        "ttfb:delay=86400",
        "jitter:ms=0",
        "jitter:ms=86400000",
        "keepalive:every=0.01",
        "status:code=200",
        "status:code=599",
        "status:p=0",
        "status:p=1",
        "close:code=1000",
        "close:code=1003",
        "close:code=1006",
        "close:code=1014",
        "close:code=1016",
        "close:code=4999",
        "hang:interaction=0",
        "throttle:bps=1",
        "keepalive:kind=auto",
        "keepalive:kind=comment",
        "keepalive:kind=ping",
        "split:at=crlf",
        "split:at=midline",
        "split:at=random",
        "jitter:dist=lognormal",
    ],
)
def test_bounds_are_inclusive(text: str) -> None:
    """Every range's ends, and every listed choice, are valid."""
    assert parse(text).text == text


def test_values_are_converted_from_the_text() -> None:
    """value() converts the given text, or gives the default; str() is the spec as written."""
    spec = parse("status:code=503,retry-after=2.5,message=busy")
    assert (spec.value("code"), spec.value("retry-after"), spec.string("message")) == (
        503,
        2.5,
        "busy",
    )
    assert parse("status").value("code") == 500
    assert str(parse(" status:code=503 ")) == "status:code=503"
    assert str(FaultSpec("hang")) == "hang"
    assert parse("stall:time=2").position() == ("time", 2.0)
    assert parse("stall").position() is None
    assert parse("close:code=4000").integer("code") == 4000


def test_choice_accepts_only_its_choices() -> None:
    """A choice parameter's converter names the choices it accepts."""
    from replayproxy._core.faults.params import choice

    convert = choice("a", "b")
    assert convert("b") == "b"
    with pytest.raises(ValueError, match=r"^must be one of a\|b$"):
        convert("c")
