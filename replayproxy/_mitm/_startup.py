"""mitmproxy's startup failures as one-line errors, for :class:`~replayproxy._mitm.embedded.
EmbeddedProxy`.

mitmproxy reports a bind failure as a long sentence repeating the address, and other startup
problems as ERROR log records or exceptions of its own; a user gets one line saying what went
wrong (``cannot listen on 127.0.0.1:8080: address already in use``).
"""

from __future__ import annotations

import logging
import os
import socket

from replayproxy._errors import ReplayProxyError

__all__ = ["StartupErrors", "bind_reason", "format_address", "one_line", "startup_error"]


class StartupErrors(logging.Handler):
    """Collects ERROR records logged while the master starts (bind failures, addon errors)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage().splitlines()[0] if record.msg else "error")


def one_line(e: object) -> str:
    # str(KeyError("x")) is "'x'": use the message itself
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    text = text.strip() or type(e).__name__
    return text.splitlines()[0]


def format_address(host: str, port: int) -> str:
    """``127.0.0.1:8080``, ``[::1]:8080``: a host and port as a user writes them."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind_reason(e: Exception) -> str:
    # mitmproxy wraps the OSError in a long sentence repeating the address; keep the cause.
    # getaddrinfo errors (socket.gaierror) carry negative EAI_* codes that os.strerror does not
    # know ("unknown error -2"): say that the host did not resolve, with the resolver's words.
    cause: BaseException | None = e
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, socket.gaierror) or (
        isinstance(cause, OSError) and cause.errno is not None and cause.errno < 0
    ):
        # mitmproxy re-raises it as "... failed to listen on H:P with [Errno -2] Name or ..."
        detail = (cause.strerror or str(cause)).rsplit("] ", 1)[-1].strip().lower()
        return f"the host does not resolve ({detail})"
    if isinstance(cause, OSError) and cause.errno:
        return os.strerror(cause.errno).lower()
    return one_line(e)


def startup_error(e: BaseException) -> ReplayProxyError:
    if isinstance(e, ReplayProxyError):
        return e
    return ReplayProxyError(f"mitmproxy failed: {one_line(e)}")
