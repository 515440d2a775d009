"""Which HTTP version a replay answers a TLS client with (pure): the ``http_version`` option
and the ALPN protocol it picks from what the client offers.

mitmproxy picks the client's ALPN protocol during the TLS handshake, before any request is
read and, under ``connection_strategy=lazy``, without an upstream connection to mirror: it
takes the client's first offer it speaks (``alpn_select_callback`` in mitmproxy's
``addons/tlsconfig.py``), so a session recorded over HTTP/1.1 replays as HTTP/2 to every client
that prefers h2, and the other way round. :func:`choose_alpn` decides instead from the versions
the cassette's interactions for that host were recorded with (:func:`recorded_versions`); the
mitmproxy shell applies it (``mitm/addons/_alpn.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._errors import UsageError

__all__ = [
    "H2",
    "HTTP11",
    "HttpVersion",
    "RecordedVersions",
    "choose_alpn",
    "parse_http_version",
    "recorded_versions",
    "versions_by_host",
]

H2 = b"h2"
HTTP11 = b"http/1.1"
_HTTP10 = b"http/1.0"

HTTP2_RECORDED = "HTTP/2.0"
"""How a cassette spells a response recorded over HTTP/2 (mitmproxy's ``http_version``)."""


class HttpVersion(enum.StrEnum):
    """The ``http_version`` option: what a TLS client is answered with in forward mode."""

    RECORDED = "recorded"
    """HTTP/2 when the host's interactions were recorded over HTTP/2 and the client offers h2;
    HTTP/1.1 otherwise."""
    CLIENT = "client"
    """The client's preference, as mitmproxy picks it (the behaviour before this option)."""
    HTTP1 = "1.1"
    """HTTP/1.1 whenever the client offers it."""
    HTTP2 = "2"
    """HTTP/2 whenever the client offers it."""

    @classmethod
    def _missing_(cls, value: object) -> HttpVersion:
        # HttpVersion("2.0") and the other spellings; anything else is the one-line error.
        text = str(value).strip().lower()
        alias = _ALIASES.get(text, text)
        for member in cls:
            if member.value == alias:
                return member
        known = ", ".join(v.value for v in cls)
        raise UsageError(f"unknown HTTP version {value!r} (one of: {known})")


_ALIASES = {"2.0": "2", "h2": "2", "http/2": "2", "1": "1.1", "http/1.1": "1.1"}


def parse_http_version(value: Any) -> HttpVersion:
    """The option's value: ``recorded``, ``client``, ``1.1`` or ``2`` (``2.0``, ``h2``, ``1``
    too); anything else is a one-line UsageError."""
    return value if isinstance(value, HttpVersion) else HttpVersion(value)


def versions_by_host(interactions: Iterable[Interaction]) -> Mapping[str, frozenset[str]]:
    """The HTTP versions each host's responses were recorded with (host lowercased; the
    key ``""`` holds every interaction's). Interactions without a response say nothing."""
    found: dict[str, set[str]] = {"": set()}
    for interaction in interactions:
        if interaction.response is None:
            continue
        version = interaction.response.http_version
        host = (urlsplit(interaction.request.url).hostname or "").lower()
        found.setdefault(host, set()).add(version)
        found[""].add(version)
    return {host: frozenset(versions) for host, versions in found.items()}


def recorded_versions(
    by_host: Mapping[str, frozenset[str]], host: str | None, *, match_host: bool
) -> frozenset[str]:
    """The versions of the interactions that may answer requests for ``host`` (the TLS SNI).

    Matching ignores the host unless ``match_host``: then a host the cassette never saw is
    answered from the others, so theirs are the versions that count (as for a client without
    SNI)."""
    if host:
        versions = by_host.get(host.lower())
        if versions or match_host:
            return versions or frozenset()
    return by_host.get("", frozenset())


class RecordedVersions:
    """:func:`recorded_versions` for the cassette being served, its per-host table computed
    once per cassette (a cassette is immutable; sessions switch per test, so one is kept)."""

    def __init__(self) -> None:
        self._cached: tuple[Cassette, Mapping[str, frozenset[str]]] | None = None

    def for_host(self, cassette: Cassette, host: str | None, *, match_host: bool) -> frozenset[str]:
        cached = self._cached
        if cached is None or cached[0] is not cassette:
            cached = self._cached = (cassette, versions_by_host(cassette.interactions))
        return recorded_versions(cached[1], host, match_host=match_host)


def choose_alpn(
    option: HttpVersion,
    recorded: frozenset[str],
    offers: Sequence[bytes],
    *,
    http2: bool = True,
) -> bytes | None:
    """The ALPN protocol to answer the client's ``offers`` with, or ``None`` to leave the
    choice to mitmproxy (the client's preference).

    ``recorded``: the versions the host's interactions were recorded with
    (:func:`recorded_versions`); HTTP/2 is chosen for ``recorded`` only when all of them are
    HTTP/2, since one connection may carry any of them and every client speaks HTTP/1.1.
    Nothing recorded (a new cassette in a record mode) leaves the choice to mitmproxy, so the
    upstream is asked with the client's offers and the recording keeps what it answered.
    ``http2``: mitmproxy's ``http2`` option (off: never h2). A client that offers none of the
    versions wanted keeps mitmproxy's choice: a handshake without a common protocol fails.
    """
    if not offers or option is HttpVersion.CLIENT:
        return None
    if option is HttpVersion.RECORDED:
        if not recorded:
            return None
        want_h2 = all(v == HTTP2_RECORDED for v in recorded)
    else:
        want_h2 = option is HttpVersion.HTTP2
    if want_h2 and http2 and H2 in offers:
        return H2
    for alpn in (HTTP11, _HTTP10):
        if alpn in offers:
            return alpn
    return None
