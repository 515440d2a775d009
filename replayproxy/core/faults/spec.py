"""Fault specs: the catalogue of fault names and parameters, and the parser that checks them.

A spec is ``NAME[:PARAM=VALUE[,PARAM=VALUE...]]``. Every fault accepts the selectors
``interaction=I``, ``path=GLOB``, ``p=PROBABILITY`` and ``seed=S``; faults that act *at* a point
of the stream accept exactly one position (``events=N``, ``frames=N``, ``bytes=N``,
``time=SECONDS``). Everything else is declared per fault in :data:`CATALOGUE`, with its type and
default, so that an unknown name or parameter is a one-line error listing what is valid.

Only the first ``:`` separates the name, so a ``path=`` glob may contain ``:`` (Gemini's
``/v1beta/models/*:streamGenerateContent``); values cannot contain ``,``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from replayproxy.errors import FaultSpecError

__all__ = [
    "CATALOGUE",
    "MAX_SECONDS",
    "MAX_WRITES",
    "MIN_KEEPALIVE_S",
    "POSITIONS",
    "FaultDef",
    "FaultSpec",
    "Param",
    "parse",
]

MAX_SECONDS = 86_400.0
"""The longest duration a fault parameter may give (one day): longer is a typo, and an
unbounded one overflows when the schedule is planned (``stall:for=1e300``)."""

MIN_KEEPALIVE_S = 0.01
"""The shortest keepalive interval: real providers send one every few seconds."""

MAX_WRITES = 1_000_000
"""The most writes a fault may build for one response (keepalive, throttle, split): each is a
separate object and socket write, so this bounds the memory and time of planning one."""


def _int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be > 0")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= MAX_SECONDS:  # also rejects NaN and infinities
        raise ValueError(f"must be a number of seconds from 0 to at most {MAX_SECONDS:g}")
    return value


def _milliseconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= MAX_SECONDS * 1000:
        raise ValueError(
            f"must be a number of milliseconds from 0 to at most {MAX_SECONDS * 1000:.0f}"
        )
    return value


def _interval(text: str) -> float:
    value = _seconds(text)
    if value < MIN_KEEPALIVE_S:
        raise ValueError(f"must be at least {MIN_KEEPALIVE_S:g} seconds")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


def _status(text: str) -> int:
    value = int(text)
    if not 100 <= value <= 599:
        raise ValueError("must be an HTTP status 100-599")
    return value


def _text(text: str) -> str:
    if not text:
        raise ValueError("must not be empty")
    return text


def _close_code(text: str) -> int:
    value = int(text)
    # RFC 6455 §7.4: 1004/1005/1015 never appear in a close frame; 1006 means "no close
    # frame", which is what the fault then does (the connection is dropped).
    if not 1000 <= value <= 4999 or value in (1004, 1005, 1015):
        raise ValueError("must be a WebSocket close code 1000-4999 (not 1004/1005/1015)")
    return value


def _choice(*choices: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in choices:
            raise ValueError(f"must be one of {'|'.join(choices)}")
        return text

    return convert


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: how to convert its text, its default (``None``: absent), a help line."""

    convert: Callable[[str], object]
    default: object = None
    help: str = ""


SELECTORS: Mapping[str, Param] = {
    "interaction": Param(_int, None, "only the interaction at this index in the cassette"),
    "path": Param(_text, None, "only requests whose path matches this glob"),
    "p": Param(_probability, 1.0, "probability that the fault applies to one serving"),
    "seed": Param(int, 0, "seed of every random draw of this fault"),
}

POSITIONS: Mapping[str, Param] = {
    "events": Param(_int, None, "after the N-th SSE event / event-stream message"),
    "frames": Param(_int, None, "after the N-th recorded frame"),
    "bytes": Param(_int, None, "after N body bytes"),
    "time": Param(_seconds, None, "at SECONDS after the request, on the recorded timeline"),
}


@dataclass(frozen=True, slots=True)
class FaultDef:
    """A fault of the catalogue: its parameters, and whether it takes a stream position."""

    summary: str
    params: Mapping[str, Param] = field(default_factory=dict)
    positioned: bool = False
    required: tuple[str, ...] = ()

    def allowed(self) -> dict[str, Param]:
        out = dict(self.params)
        if self.positioned:
            out.update(POSITIONS)
        out.update(SELECTORS)
        return out


_EVENT = {"event": Param(_int, None, "index of the event (0 = the first event)")}

CATALOGUE: Mapping[str, FaultDef] = {
    "reset": FaultDef("TCP reset (RST) at the position", positioned=True),
    "close": FaultDef(
        "FIN at the position, without the chunked terminator",
        {
            "code": Param(
                _close_code, None, "WebSocket: close code (default and 1006: no close frame)"
            ),
            "reason": Param(_text, None, "WebSocket: close frame reason"),
        },
        positioned=True,
    ),
    "truncate": FaultDef("clean end at the position, before the terminal event", positioned=True),
    "hang": FaultDef("stop sending at the position, keep the connection open", positioned=True),
    "linger": FaultDef("send everything but never end the response"),
    "stall": FaultDef(
        "pause at the position, then continue",
        {"for": Param(_seconds, 1.0, "pause length, real seconds")},
        positioned=True,
    ),
    "ttfb": FaultDef(
        "delay the response head", {"delay": Param(_seconds, 1.0, "delay, real seconds")}
    ),
    "keepalive": FaultDef(
        "send the provider's keepalive during long waits",
        {
            "every": Param(_interval, 1.0, "keepalive interval, real seconds (>= 0.01)"),
            "kind": Param(_choice("auto", "comment", "ping"), "auto", "SSE comment or ping"),
            "text": Param(_text, "keepalive", "text of the SSE comment"),
            "until": Param(_seconds, 300.0, "longest keepalive run during a hang, seconds"),
        },
    ),
    "jitter": FaultDef(
        "perturb the gaps between writes, never reordering bytes",
        {
            "ms": Param(_milliseconds, 20.0, "scale of the perturbation, milliseconds"),
            "dist": Param(_choice("uniform", "lognormal"), "uniform", "distribution"),
        },
    ),
    "throttle": FaultDef(
        "cap delivery at bps bytes per second",
        {"bps": Param(_positive_int, None, "bytes per second")},
        required=("bps",),
    ),
    "split": FaultDef(
        "re-split the bytes into more writes",
        {
            "bytes": Param(_positive_int, None, "pieces of at most K bytes"),
            "at": Param(_choice("utf8", "midline", "crlf", "random"), None, "where to split"),
            "avg": Param(_positive_int, 16, "at=random: mean piece size, bytes"),
            "gap": Param(_seconds, 0.002, "pause between the pieces of a write, real seconds"),
            "event": Param(_int, None, "WebSocket: only server message N"),
        },
    ),
    "coalesce": FaultDef(
        "deliver the body in one write at the end, or once per window",
        {"window": Param(_seconds, None, "flush interval, real seconds")},
    ),
    "drop": FaultDef("remove one event", _EVENT, required=("event",)),
    "duplicate": FaultDef("send one event twice", _EVENT, required=("event",)),
    "reorder": FaultDef("swap one event with the next", _EVENT, required=("event",)),
    "corrupt": FaultDef("cut the JSON payload of one event in half", _EVENT, required=("event",)),
    "error": FaultDef(
        "inject the provider's in-band error event at the position, then end",
        {
            "type": Param(_text, None, "error type (default: the provider's overload error)"),
            "message": Param(_text, None, "error message"),
        },
        positioned=True,
    ),
    "status": FaultDef(
        "replace the response with an HTTP error and the provider's error body",
        {
            "code": Param(_status, 500, "HTTP status"),
            "retry-after": Param(_seconds, None, "retry-after header, seconds"),
            "message": Param(_text, None, "error message"),
        },
    ),
}


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """A parsed, validated fault spec: its name and its parameters as given (strings)."""

    name: str
    params: tuple[tuple[str, str], ...] = ()
    text: str = ""

    def __str__(self) -> str:
        return self.text or self.name

    @property
    def definition(self) -> FaultDef:
        return CATALOGUE[self.name]

    def given(self, name: str) -> bool:
        return any(key == name for key, _ in self.params)

    def value(self, name: str) -> object:
        """The converted value of ``name``, or its default (``None`` when it has none)."""
        param = self.definition.allowed()[name]
        for key, text in self.params:
            if key == name:
                return param.convert(text)
        return param.default

    def number(self, name: str) -> float:
        value = self.value(name)
        assert isinstance(value, int | float), name
        return float(value)

    def integer(self, name: str) -> int:
        value = self.value(name)
        assert isinstance(value, int), name
        return value

    def string(self, name: str) -> str | None:
        value = self.value(name)
        return None if value is None else str(value)

    def position(self) -> tuple[str, float] | None:
        """The position given (``("events", 3.0)``...), or ``None`` for the fault's default."""
        for key, _ in self.params:
            if key in POSITIONS:
                return key, self.number(key)
        return None


def _valid_list(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def parse(spec: str) -> FaultSpec:
    """Parse and validate ``NAME[:PARAM=VALUE,...]``; raises :class:`FaultSpecError` (one line)."""
    text = spec.strip()
    name, _, rest = text.partition(":")
    name = name.strip()
    if name not in CATALOGUE:
        raise FaultSpecError(
            f"unknown fault {name!r} in {spec!r}; valid faults: {_valid_list(CATALOGUE)}"
        )
    definition = CATALOGUE[name]
    allowed = definition.allowed()
    params: list[tuple[str, str]] = []
    for item in rest.split(",") if rest.strip() else ():
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise FaultSpecError(f"fault {spec!r}: expected PARAM=VALUE, got {item.strip()!r}")
        if key not in allowed:
            raise FaultSpecError(
                f"fault {name!r}: unknown parameter {key!r}; valid: {_valid_list(allowed)}"
            )
        if any(k == key for k, _ in params):
            raise FaultSpecError(f"fault {spec!r}: parameter {key!r} given twice")
        try:
            allowed[key].convert(value)
        except ValueError as e:
            detail = str(e) if "must" in str(e) else "not a valid value"
            raise FaultSpecError(f"fault {name!r}: {key}={value!r}: {detail}") from None
        params.append((key, value))
    given = {k for k, _ in params}
    positions = sorted(given & set(POSITIONS))
    if len(positions) > 1:
        raise FaultSpecError(
            f"fault {spec!r}: give at most one position, got {', '.join(positions)}"
        )
    for key in definition.required:
        if key not in given:
            raise FaultSpecError(f"fault {name!r}: missing required parameter {key}=")
    if name == "split" and len(given & {"bytes", "at"}) != 1:
        raise FaultSpecError(
            f"fault {spec!r}: give exactly one of bytes=K or at=utf8|midline|crlf|random"
        )
    return FaultSpec(name, tuple(params), text)
