"""The two serving arguments every shell takes, checked once: the upstream URL and the speed.

The CLI (``record``, ``replay``), :func:`~replayproxy._harness.use_cassette`, the pytest plugin,
the mitmproxy addon and :class:`~replayproxy._engine.session.ReplaySession` all call these, so
a value is accepted or refused, with the same one-line :class:`~replayproxy._errors.UsageError`,
whichever interface it came through (pure).
"""

from __future__ import annotations

import math
from urllib.parse import urlsplit

from replayproxy._errors import UsageError

__all__ = ["MAX_SPEED", "MIN_SPEED", "check_speed", "check_upstream"]

MIN_SPEED = 0.001
"""The slowest speed other than 0: offsets are divided by the speed, so a tiny one overflows
when the schedule is planned."""
MAX_SPEED = 1_000_000.0
"""The fastest speed: beyond it every recorded gap rounds to nothing anyway."""


def check_upstream(url: str) -> str:
    """Check an upstream URL (``http(s)://HOST[:PORT]``); return it without a trailing ``/``.

    A path is refused: a reverse proxy forwards each request's own path, so the client keeps it
    in its base URL (``http://HOST:PORT/v1``). Whitespace and control characters are refused
    rather than silently dropped (``urlsplit`` removes tabs and newlines before parsing).
    """
    expected = f"invalid upstream {url!r}: expected http://HOST[:PORT] or https://..."
    if any(c.isspace() or not c.isprintable() for c in url):
        raise UsageError(expected)
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced IPv6 bracket: "http://["
        raise UsageError(expected) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(expected)
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise UsageError(f"invalid upstream {url!r}: bad port") from None
    # An empty query or fragment ("http://h?") is still one: urlsplit reports it as "".
    if parts.path not in ("", "/") or "?" in url or "#" in url:
        raise UsageError(
            f"invalid upstream {url!r}: give only scheme://HOST[:PORT]; "
            "clients keep the path in their base URL"
        )
    return url.removesuffix("/")


def check_speed(speed: object) -> float:
    """``speed`` as a float: 0 (no waiting) or MIN_SPEED..MAX_SPEED, else a one-line UsageError.

    Numbers and their text (an ini value, a mitmproxy option) are accepted alike.
    """
    try:
        value = float(speed)  # type: ignore[arg-type]  # anything float() refuses is refused
    except (TypeError, ValueError):
        raise UsageError(f"speed must be a number, got {speed!r}") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"speed must be a finite number >= 0, got {speed!r}")
    if 0 < value < MIN_SPEED or value > MAX_SPEED:
        raise UsageError(f"speed must be 0 or from {MIN_SPEED:g} to {MAX_SPEED:g}, got {speed!r}")
    return value
