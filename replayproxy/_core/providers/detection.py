"""Which provider API a request (and its response's content type) talks to: the one place
replayproxy tells, and the lookup of the names users type.

:func:`detect` tries, in the order of :data:`~.definitions.DEFINITIONS` and among the APIs of
the response's framing: each API's path rules and request headers, then host rules; an AWS
event-stream of no known path is ConverseStream, and a ``text/event-stream`` response of no
known API is the generic :attr:`Provider.SSE`. Pure.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import unquote, urlsplit

from replayproxy._core.cassette.model import Request
from replayproxy._core.providers.definitions import DEFINITIONS
from replayproxy._core.providers.model import Framing, Provider, ProviderDef
from replayproxy._errors import UsageError

__all__ = ["STREAM_PROVIDERS", "bedrock_model_vendor", "definition", "detect", "parse"]

_BY_PROVIDER: Final = {d.provider: d for d in DEFINITIONS}
_BY_NAME: Final = {name: d.provider for d in DEFINITIONS for name in (d.provider.value, *d.aliases)}
STREAM_PROVIDERS: Final = tuple(
    p for p in Provider if _BY_PROVIDER[p].framing is not Framing.WEBSOCKET
)
"""The APIs whose response bodies the checker reads (``check --provider`` choices)."""

# Bedrock's cross-region inference profiles put a geography before the vendor.
_GEOGRAPHIES: Final = frozenset({"us", "eu", "apac", "us-gov", "global", "jp", "au", "ca"})

Headers = Mapping[str, str] | Iterable[tuple[bytes, bytes]]


def definition(provider: Provider | str) -> ProviderDef:
    """The definition of ``provider`` (a :class:`Provider` or its value)."""
    return _BY_PROVIDER[Provider(provider)]


def parse(name: str, *, websocket: bool = False) -> Provider:
    """The provider a user's name or alias means (any case); raises UsageError (one line)
    listing the choices. Only stream APIs unless ``websocket`` (then only WebSocket APIs)."""
    found = _BY_NAME.get(name.strip().lower())
    allowed = _websocket_providers() if websocket else STREAM_PROVIDERS
    if found not in allowed:
        choices = ", ".join(allowed)
        raise UsageError(f"unknown provider {name!r}; choose one of: {choices}")
    assert found is not None
    return found


def _websocket_providers() -> tuple[Provider, ...]:
    return tuple(p for p in Provider if p not in STREAM_PROVIDERS)


def bedrock_model_vendor(path: str) -> str | None:
    """The vendor of the Bedrock model id in ``/model/ID/...`` (``amazon`` for
    ``us.amazon.nova-lite-v1:0`` or a foundation-model ARN), or ``None`` when the id names none
    (an application inference profile, a provisioned model)."""
    parts = path.split("/")
    if "model" not in parts[:-1]:
        return None
    model = unquote(parts[parts.index("model") + 1])
    words = model.rsplit("/", 1)[-1].split(".")
    if len(words) > 2 and words[0] in _GEOGRAPHIES:
        words = words[1:]
    return words[0].lower() if len(words) > 1 else None


def _media(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def _header_names(headers: Headers | None) -> set[str]:
    if headers is None:
        return set()
    if isinstance(headers, Mapping):
        return {k.lower() for k in headers}
    return {k.decode("latin-1").lower() for k, _ in headers}


def _fits(d: ProviderDef, path: str, headers: frozenset[str]) -> bool:
    if not (any(rule.matches(path) for rule in d.paths) or any(h in headers for h in d.headers)):
        return False
    return not d.model_vendors or bedrock_model_vendor(path) in d.model_vendors


def _candidates(websocket: bool | None, media: str) -> tuple[ProviderDef, ...]:
    """The definitions detection may answer, in order: of the transport asked for, and of the
    framing the content type tells."""
    return tuple(
        d
        for d in DEFINITIONS
        if (websocket is None or (d.framing is Framing.WEBSOCKET) == websocket)
        and (not media or d.framing == media)
    )


# every (websocket, media) detection can see, computed once: the registry is constant
_CANDIDATES: Final = {
    (ws, media): _candidates(ws, media)
    for ws in (None, True, False)
    for media in ("", Framing.SSE.value, Framing.EVENTSTREAM.value, Framing.NDJSON.value)
}


def detect(
    request: str | Request | None,
    content_type: str | None = None,
    *,
    headers: Headers | None = None,
    websocket: bool | None = None,
) -> Provider | None:
    """The provider API of ``request`` (a URL or path, or a :class:`Request` whose headers are
    used too), or ``None`` when it is not recognised.

    ``content_type`` is the response's and tells the framing: an AWS event-stream is one of
    Bedrock's APIs (ConverseStream when the path names none), ``text/event-stream`` one of the
    SSE APIs (the generic :attr:`Provider.SSE` when the path names none), and any other type
    is no stream (``None``).
    Without it the answer is the request's alone (for error bodies, faults, equivalence).
    ``websocket`` limits the answer to WebSocket APIs (True) or to the others (False).
    """
    if isinstance(request, Request):
        headers = request.headers if headers is None else headers
        request = request.url
    request = request or ""
    if request.startswith("/"):  # a path ("//x" too: urlsplit would read a host there)
        path, host = request.partition("?")[0].rstrip("/"), ""
    else:
        try:
            parts = urlsplit(request)
            path, host = parts.path.rstrip("/"), (parts.hostname or "").lower()
        except ValueError:  # a malformed URL (bad IPv6 literal): detect from the rest
            path, host = "", ""
    media = _media(content_type)
    if media and media not in (Framing.SSE, Framing.EVENTSTREAM, Framing.NDJSON):
        return None  # JSON, a Gemini JSON array, an error page: not an event stream
    return _answer(path, host, frozenset(_header_names(headers)), media, websocket)


# Detection is pure and the matcher asks it for every body it compares: answers are kept by
# value (bounded), as urllib keeps its urlsplit results.
@functools.lru_cache(maxsize=4096)
def _answer(
    path: str, host: str, headers: frozenset[str], media: str, websocket: bool | None
) -> Provider | None:
    candidates = _CANDIDATES[websocket, media]  # the content type tells the framing
    for d in candidates:
        if _fits(d, path, headers):
            return d.provider
    for d in candidates:
        if any(part in host for part in d.hosts):
            return d.provider
    if media == Framing.EVENTSTREAM:
        return Provider.BEDROCK_CONVERSE  # the event-stream API with no path of its own
    return Provider.SSE if media == Framing.SSE else None
