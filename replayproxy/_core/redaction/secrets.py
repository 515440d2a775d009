"""Redaction of secrets before an interaction reaches disk (pure).

A redacted header keeps its name and position; only its value becomes :data:`REDACTED`
(``b"<redacted>"``), so a cassette still shows *that* a client authenticated, and request
matching can ignore the value (:func:`is_redacted`). A redacted query parameter keeps its
name and position too: ``?key=sk-123&alt=sse`` becomes ``?key=<redacted>&alt=sse``; the rest
of the URL is kept byte for byte (no re-encoding).

Defaults (:data:`DEFAULT_HEADERS`, :data:`DEFAULT_QUERY_PARAMS`) cover the credentials of the
providers replayproxy targets: ``authorization`` (OpenAI, Bearer tokens), ``x-api-key``
(Anthropic), ``api-key`` (Azure OpenAI), ``x-goog-api-key`` and ``?key=`` (Gemini),
``x-amz-security-token`` (AWS session credentials, Bedrock), ``ocp-apim-subscription-key``
(Azure API Management), ``x-auth-token``, ``proxy-authorization``, cookies both ways, and the
``api_key`` and ``access_token`` query parameters.

JSON body fields are redacted by pointer (``body_fields``,
:mod:`replayproxy._core.redaction.body_fields`), in request and response bodies alike, through
their ``Content-Encoding`` (:mod:`replayproxy._core.redaction.encoded`).

A name (or pointer) may come with a replacement of its own (VCR.py's ``("authorization",
"XXX")``): :meth:`Redactor.with_extra` takes ``(name, replacement)`` pairs beside plain names,
and that value is stored instead of the marker. Such a value is an ordinary value to the
matcher (not a wildcard), so the pytest plugin also ignores that query parameter or body field
when matching (docs/guides/pytest.md).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from urllib.parse import quote_plus, unquote_plus

from replayproxy._core.cassette.model import Header, Interaction, Request, Response
from replayproxy._core.redaction.body_fields import Pointer, parse_pointers
from replayproxy._core.redaction.encoded import redact_request_body, redact_response_body

__all__ = [
    "DEFAULT_HEADERS",
    "DEFAULT_QUERY_PARAMS",
    "NO_REDACTION",
    "REDACTED",
    "REDACTED_TEXT",
    "SECRET_WORDS",
    "Redactor",
    "Replaceable",
    "is_redacted",
    "is_secret_name",
    "redact_headers",
    "redact_url",
    "secret_query_names",
]

REDACTED = b"<redacted>"
"""The value a redacted header gets."""

REDACTED_TEXT = REDACTED.decode("ascii")
"""The value a redacted query parameter gets (as text, in the URL)."""

DEFAULT_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "ocp-apim-subscription-key",
        "x-auth-token",
        "cookie",
        "set-cookie",
    }
)
DEFAULT_QUERY_PARAMS: frozenset[str] = frozenset({"key", "api_key", "access_token"})

SECRET_WORDS: frozenset[str] = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "passphrase",
        "passwd",
        "password",
        "pwd",
        "secret",
        "token",
    }
)
"""Words that make a name a secret's (``api_key``, ``refreshToken``, ``client-secret``,
``password``): text people read (a miss explanation) never shows the value of a JSON member or
query parameter so named. ``token`` as a word, so ``max_tokens`` is not one."""

_SECRET_PAIRS = frozenset(
    {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("session", "id")}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a JSON member, a query parameter, a header) names a secret: one of the
    always-redacted header and query names, or a name with a word of :data:`SECRET_WORDS`, or
    ``api key``/``access key``/``private key``/``secret key``/``session id`` in it."""
    lower = name.strip().lower()
    if lower in DEFAULT_HEADERS or lower in DEFAULT_QUERY_PARAMS:
        return True
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub(" ", name.strip()).lower()) if w]
    if any(w in SECRET_WORDS for w in words) or "".join(words) in SECRET_WORDS:
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


def is_redacted(value: bytes | str) -> bool:
    """True if ``value`` is the redaction marker (a matcher should then ignore it)."""
    return value in (REDACTED, REDACTED_TEXT)


def redact_headers(
    headers: Iterable[Header], names: frozenset[str], values: Mapping[str, str] | None = None
) -> tuple[Header, ...]:
    """Replace the value of every header whose lower-cased name is in ``names``: by
    ``values[name]`` if given (encoded as UTF-8), else :data:`REDACTED`."""
    if not names:
        return tuple(headers)
    values = values or {}
    out = []
    for name, value in headers:
        lower = name.decode("latin-1").lower()
        if lower in names:
            value = values[lower].encode() if lower in values else REDACTED
        out.append((name, value))
    return tuple(out)


def _redact_query(query: str, params: frozenset[str], values: Mapping[str, str]) -> str:
    fields = query.split("&")
    out = []
    for field in fields:
        name, sep, _value = field.partition("=")
        # Compare decoded names (``%6Bey`` is ``key`` too); keep the name as written.
        lower = unquote_plus(name).lower()
        if sep and lower in params:
            field = f"{name}={quote_plus(values[lower]) if lower in values else REDACTED_TEXT}"
        out.append(field)
    return "&".join(out)


def secret_query_names(url: str) -> frozenset[str]:
    """The query parameters of ``url`` named like secrets (:func:`is_secret_name`), lower-case
    and decoded, as :func:`redact_url` takes them."""
    start = url.find("?")
    if start < 0:
        return frozenset()
    end = url.find("#", start)
    query = url[start + 1 : end if end >= 0 else len(url)]
    names = (unquote_plus(field.partition("=")[0]).lower() for field in query.split("&"))
    return frozenset(n for n in names if is_secret_name(n))


def redact_url(url: str, params: frozenset[str], values: Mapping[str, str] | None = None) -> str:
    """Replace the value of every query parameter whose name is in ``params`` (by
    ``values[name]`` if given, URL-encoded, else :data:`REDACTED_TEXT`)."""
    start = url.find("?")
    if not params or start < 0:
        return url
    # Split by hand rather than urlsplit/urlunsplit, which may normalise the rest of the URL.
    end = url.find("#", start)
    end = len(url) if end < 0 else end
    query = _redact_query(url[start + 1 : end], params, values or {})
    return url[: start + 1] + query + url[end:]


Replaceable = str | tuple[str, str]
"""A name (or pointer) to redact, or a ``(name, replacement)`` pair."""


def _split(items: Iterable[Replaceable]) -> tuple[list[str], list[tuple[str, str]]]:
    names: list[str] = []
    pairs: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str):
            names.append(item)
        else:
            name, value = item
            names.append(name)
            pairs.append((name, value))
    return names, pairs


def _lowered(names: Iterable[str]) -> set[str]:
    return {n.strip().lower() for n in names if n.strip()}


@dataclass(frozen=True, slots=True)
class Redactor:
    """Which request/response headers, URL query parameters (names lower-case) and JSON body
    fields (RFC 6901 pointers, ``*`` for any member) to redact. ``header_values``,
    ``query_values``, ``body_values``: ``(name or pointer, replacement)`` for those stored with
    a value of the user's instead of the marker."""

    headers: frozenset[str] = DEFAULT_HEADERS
    query_params: frozenset[str] = DEFAULT_QUERY_PARAMS
    body_fields: tuple[str, ...] = ()
    header_values: tuple[tuple[str, str], ...] = ()
    query_values: tuple[tuple[str, str], ...] = ()
    body_values: tuple[tuple[str, str], ...] = ()
    _pointers: tuple[Pointer, ...] = dc_field(default=(), init=False, repr=False, compare=False)
    _body: tuple[str, ...] = dc_field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pointers", parse_pointers(self.body_fields))
        replaced = dict(self.body_values)
        body = tuple(replaced.get(p, REDACTED_TEXT) for p in self.body_fields)
        object.__setattr__(self, "_body", body)

    @classmethod
    def with_extra(
        cls,
        headers: Iterable[Replaceable] = (),
        query_params: Iterable[Replaceable] = (),
        body_fields: Iterable[Replaceable] = (),
    ) -> Redactor:
        """The defaults plus more header names / query parameters (case-insensitive) and JSON
        body fields (pointers; raises ValueError for one that does not start with ``/``), each
        a name or a ``(name, replacement)`` pair."""
        header_names, header_values = _split(headers)
        query_names, query_values = _split(query_params)
        pointers, body_values = _split(body_fields)
        return cls(
            DEFAULT_HEADERS | _lowered(header_names),
            DEFAULT_QUERY_PARAMS | _lowered(query_names),
            tuple(dict.fromkeys(pointers)),
            tuple((n.strip().lower(), v) for n, v in header_values),
            tuple((n.strip().lower(), v) for n, v in query_values),
            tuple(body_values),
        )

    def request(self, request: Request) -> Request:
        request = redact_request_body(request, self._pointers, self._body)
        return replace(
            request,
            url=redact_url(request.url, self.query_params, dict(self.query_values)),
            headers=redact_headers(request.headers, self.headers, dict(self.header_values)),
        )

    def response(self, response: Response) -> Response:
        response = redact_response_body(response, self._pointers, self._body)
        return replace(
            response,
            headers=redact_headers(response.headers, self.headers, dict(self.header_values)),
        )

    def url(self, url: str) -> str:
        """``url`` as it may appear in a log line: credential query values redacted (the
        defaults always, even with --no-redact: logs are not cassettes)."""
        return redact_url(url, self.query_params | DEFAULT_QUERY_PARAMS)

    def interaction(self, interaction: Interaction) -> Interaction:
        """The interaction with its request and response heads redacted, and the JSON body
        fields given in ``body_fields``."""
        response = None if interaction.response is None else self.response(interaction.response)
        return replace(interaction, request=self.request(interaction.request), response=response)


NO_REDACTION = Redactor(frozenset(), frozenset())
"""A redactor that keeps everything (only for an explicit ``--no-redact``)."""
