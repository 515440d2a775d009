"""Base-URL mode's stand-in upstream (pure): the ``(scheme, netloc)`` a replay server stands in
for, and a request as if it had been sent there, the way mitmproxy's reverse mode shows the URL
of a request it forwards (matters for ``--match-host`` and miss explanations)."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from replayproxy._core.cassette.model import Request

__all__ = ["base_of", "on_upstream"]


def base_of(upstream: str) -> tuple[str, str]:
    """``(scheme, netloc)`` of ``upstream`` (``scheme://host[:port]``), default port left out,
    IPv6 in brackets."""
    base = urlsplit(upstream)
    host = base.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = base.port
    if port is not None and port != {"http": 80, "https": 443}.get(base.scheme):
        host += f":{port}"
    return base.scheme, host


def on_upstream(request: Request, base: tuple[str, str]) -> Request:
    """``request`` as if sent to the upstream ``base`` (:func:`base_of`): only the scheme and
    host change; path and query are kept (``/`` for none), a fragment is dropped."""
    target = urlsplit(request.url)
    return replace(request, url=urlunsplit((*base, target.path or "/", target.query, "")))
