"""Which shell serves a replay: the replay engine by itself, or mitmproxy with the addons (pure).

The one place that chooses, for the CLI (``replay``) and the Python API / pytest plugin
(:func:`~replayproxy.harness.use_cassette`). It imports nothing of the shells, so the engine
side can call it in an environment without mitmproxy (docs/replay.md, "Which shell serves").
"""

from __future__ import annotations

import enum

__all__ = ["Shell", "choose_shell"]


class Shell(enum.Enum):
    """A server that can serve a replay session."""

    ENGINE = "engine"
    """:class:`~replayproxy.engine.server.ReplayServer`: plain HTTP/1.1 for a base URL."""
    MITMPROXY = "mitmproxy"
    """The embedded mitmproxy with the replay addon (and the recorder)."""


def choose_shell(*, upstream: str | None, records: bool) -> Shell:
    """The shell for a session standing in for ``upstream`` (``None``: a forward proxy).

    Forward-proxy mode needs mitmproxy (CONNECT, TLS interception with its CA, HTTP/2), and so
    does a session that ``records`` (what is not replayed is forwarded to the upstream and
    recorded by the recorder addon). Plain base-URL replay is HTTP/1.1 that the engine speaks
    itself, at engine speed (measured: docs/replay.md, "Which shell serves").
    """
    if upstream is None or records:
        return Shell.MITMPROXY
    return Shell.ENGINE
