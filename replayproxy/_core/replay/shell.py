"""Which shell serves a replay: the replay engine by itself, or mitmproxy with the addons (pure).

The one place that chooses, for the CLI (``replay``) and the Python API / pytest plugin
(:func:`~replayproxy._harness.use_cassette`). It imports nothing of the shells, so the engine
side can call it in an environment without mitmproxy (docs/explanations/architecture.md, "The
shells").
"""

from __future__ import annotations

import enum

__all__ = ["Shell", "choose_shell"]


class Shell(enum.Enum):
    """A server that can serve a replay session."""

    ENGINE = "engine"
    """:class:`~replayproxy._engine.server.ReplayServer`: HTTP/1.1 and h2c for a base URL, or a
    forward proxy answering CONNECT and TLS itself with mitmproxy's CA."""
    MITMPROXY = "mitmproxy"
    """The embedded mitmproxy with the replay addon and the recorder."""


def choose_shell(*, records: bool) -> Shell:
    """The shell for a session, in either mode (a base URL, or a forward proxy).

    A session that ``records`` needs mitmproxy: what is not replayed is forwarded to the
    upstream and recorded by the recorder addon. A replay that never forwards is served by the
    engine alone in both modes (base URL, and forward proxy with CONNECT and TLS answered by
    the engine with mitmproxy's CA), at engine speed: measured in docs/explanations/architecture.md,
    "The shells".
    """
    return Shell.MITMPROXY if records else Shell.ENGINE
