"""Fault parameters: how each one's text is converted and checked, and the bounds they share.

Every fault accepts the :data:`SELECTORS`; faults that act *at* a point of the stream accept
exactly one of the :data:`POSITIONS`. The parameters of each fault are declared with its
definition in :mod:`replayproxy._core.faults.registry`, built from the converters here: each
raises ``ValueError("must ...")`` so that a bad value is a one-line error saying what is valid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = [
    "MAX_SECONDS",
    "MAX_WRITES",
    "MIN_KEEPALIVE_S",
    "POSITIONS",
    "SELECTORS",
    "OneOf",
    "Param",
    "attempt_number",
    "choice",
    "close_code",
    "count",
    "http_status",
    "interval",
    "milliseconds",
    "nonempty",
    "positive_count",
    "probability",
    "seconds",
]

MAX_SECONDS = 86_400.0
"""The longest duration a fault parameter may give (one day): longer is a typo, and an
unbounded one overflows when the schedule is planned (``stall:for=1e300``)."""

MIN_KEEPALIVE_S = 0.01
"""The shortest keepalive interval: real providers send one every few seconds."""

MAX_WRITES = 1_000_000
"""The most writes a fault may build for one response (keepalive, throttle, split): each is a
separate object and socket write, so this bounds the memory and time of planning one."""


def count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


def positive_count(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be > 0")
    return value


def attempt_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError("must be a whole number >= 1 (1 = the first serving)")
    return value


def seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= MAX_SECONDS:  # also rejects NaN and infinities
        raise ValueError(f"must be a number of seconds from 0 to at most {MAX_SECONDS:g}")
    return value


def milliseconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= MAX_SECONDS * 1000:
        raise ValueError(
            f"must be a number of milliseconds from 0 to at most {MAX_SECONDS * 1000:.0f}"
        )
    return value


def interval(text: str) -> float:
    value = seconds(text)
    if value < MIN_KEEPALIVE_S:
        raise ValueError(f"must be at least {MIN_KEEPALIVE_S:g} seconds")
    return value


def probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


def http_status(text: str) -> int:
    # A final status only: a 1xx is an interim response (RFC 9110 §15.2), after which the
    # client waits for a final one that never comes. ASCII digits only: int() also reads
    # other scripts' digits.
    if not (text.isascii() and text.isdigit() and len(text) == 3 and 200 <= int(text) <= 599):
        raise ValueError("must be a final HTTP status 200-599")
    return int(text)


def nonempty(text: str) -> str:
    if not text:
        raise ValueError("must not be empty")
    return text


def close_code(text: str) -> int:
    value = int(text)
    # RFC 6455 §7.4: 1004/1005/1015 never appear in a close frame; 1006 means "no close
    # frame", which is what the fault then does (the connection is dropped).
    if not 1000 <= value <= 4999 or value in (1004, 1005, 1015):
        raise ValueError("must be a WebSocket close code 1000-4999 (not 1004/1005/1015)")
    return value


def choice(*choices: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in choices:
            raise ValueError(f"must be one of {'|'.join(choices)}")
        return text

    return convert


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: how to convert its text, its default (``None``: absent), a help line,
    and, for one that has no meaning on a WebSocket session, the refusal's reason."""

    convert: Callable[[str], object]
    default: object = None
    help: str = ""
    not_on_websocket: str = ""


SELECTORS: Mapping[str, Param] = {
    "interaction": Param(count, None, "only the interaction at this index in the cassette"),
    "path": Param(nonempty, None, "only requests whose path matches this glob"),
    "attempt": Param(
        attempt_number, None, "only the N-th serving of an interaction in the session (1 = first)"
    ),
    "p": Param(probability, 1.0, "probability that the fault applies to one serving"),
    "seed": Param(int, 0, "seed of every random draw of this fault"),
}

POSITIONS: Mapping[str, Param] = {
    "events": Param(count, None, "after the N-th SSE event / event-stream message"),
    "frames": Param(count, None, "after the N-th recorded frame"),
    "bytes": Param(count, None, "after N body bytes"),
    "time": Param(seconds, None, "at SECONDS after the request, on the recorded timeline"),
}


@dataclass(frozen=True, slots=True)
class OneOf:
    """Exactly one of ``names`` must be given; ``text`` completes "give exactly one of ..."."""

    names: tuple[str, ...]
    text: str
