"""Fail closed: a request replay cannot serve gets an explained 500, never the network.

Replay promises that nothing reaches the network. Two kinds of request cannot be served, and
every replay shell answers both the same way:

- **a miss** (nothing recorded matches, or a fault cannot apply): :func:`unmatched_response`,
  status :data:`UNMATCHED_STATUS` in the provider's JSON error shape, its message the full
  explanation of the miss (so SDK exceptions show it), with :data:`UNMATCHED_HEADER` and the
  one-line :data:`UNMATCHED_EXPLANATION_HEADER`;
- **a failure** (any exception while answering). mitmproxy treats an exception in a ``request``
  hook as "log it and carry on", which would forward the request, credentials included, to the
  real upstream; the direct origin would drop the connection without a word. So every replay
  shell wraps its whole request handling in one ``except Exception`` and answers with
  :func:`failure_response` instead:

  - status :data:`ERROR_STATUS` (500) and the header ``x-replayproxy-error: 1``,
  - a body naming the request and the exception in one line (``RecursionError: ...``),
  - one line on stderr (the session's ``on_error``) and a count in the exit summary, which
    makes ``replay -- COMMAND`` exit non-zero.

What a failure says about the request goes to logs, so credential query parameters are
redacted (:func:`describe`), and the exception text is cut to one short line.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from replayproxy._core.matching.explanation import CLI_WORDS, Words
from replayproxy._core.matching.matcher import Miss
from replayproxy._core.redaction.secrets import DEFAULT_QUERY_PARAMS, redact_url
from replayproxy._core.wire.error_body import error_body
from replayproxy._errors import ReplayProxyError

__all__ = [
    "ERROR_HEADER",
    "ERROR_STATUS",
    "UNMATCHED_EXPLANATION_HEADER",
    "UNMATCHED_HEADER",
    "UNMATCHED_STATUS",
    "ReplayFailure",
    "describe",
    "failure_of",
    "failure_response",
    "unmatched_response",
]

ERROR_STATUS = 500
ERROR_HEADER = "x-replayproxy-error"

_MAX_SUMMARY = 240

UNMATCHED_STATUS = 500
UNMATCHED_HEADER = "x-replayproxy-unmatched"
UNMATCHED_EXPLANATION_HEADER = "x-replayproxy-explanation"
"""A one-line, ASCII form of the explanation (:meth:`Miss.short`)."""


@dataclass(frozen=True, slots=True)
class ReplayFailure:
    """Replay could not answer ``request`` (``"POST /v1/x"``) because of ``summary``."""

    request: str
    summary: str

    def one_line(self) -> str:
        """The stderr line."""
        return f"replay failed for {self.request}: {self.summary}"

    def explain(self) -> str:
        """The response body."""
        return (
            f"replayproxy: replay failed for {self.request}: {self.summary}\n"
            "The request was not sent anywhere (replay never contacts the network).\n"
        )


def summarize(exc: BaseException) -> str:
    """``"TypeName: first line of the message"``, at most a few hundred characters."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    if not isinstance(exc, ReplayProxyError):  # our own errors are already user-facing
        first = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(first) > _MAX_SUMMARY:
        first = first[: _MAX_SUMMARY - 3] + "..."
    return first


def describe(method: str, url: str) -> str:
    """``"POST /v1/chat?key=<redacted>"``: never fails, whatever ``method`` and ``url`` hold."""
    try:
        parts = urlsplit(redact_url(url, DEFAULT_QUERY_PARAMS))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    except ValueError:  # e.g. "http://[::1" does not parse
        target = "(unparsable URL)"
    text = f"{method[:16]} {target}"
    return text if len(text) <= 200 else text[:197] + "..."


def failure_of(exc: BaseException, request: str) -> ReplayFailure:
    return ReplayFailure(request, summarize(exc))


def failure_response(failure: ReplayFailure) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """Status, headers and body of the response that explains ``failure``."""
    body = failure.explain().encode("utf-8", "replace")
    headers = (
        (b"content-type", b"text/plain; charset=utf-8"),
        (ERROR_HEADER.encode(), b"1"),
        (b"content-length", str(len(body)).encode()),
    )
    return ERROR_STATUS, headers, body


def unmatched_response(
    miss: Miss, path: str | None = None, words: Words = CLI_WORDS
) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """Status, headers and body of the response sent for an unmatched request.

    The body is the provider's JSON error shape for ``path`` (by default the path in
    ``miss.request``), its message the full explanation, so SDK exceptions show it
    (:func:`~replayproxy._core.wire.error_body.error_body`), its fixes spelt in ``words`` (the
    front's: CLI flags by default, marker keywords inside pytest).
    """
    if path is None:
        path = urlsplit(miss.request.partition(" ")[2]).path
    extra, body = error_body(path, miss.explain(words), status=UNMATCHED_STATUS)
    headers = (
        *extra,
        (UNMATCHED_HEADER.encode(), b"1"),
        (UNMATCHED_EXPLANATION_HEADER.encode(), miss.short().encode("ascii")),
        (b"content-length", str(len(body)).encode()),
    )
    return UNMATCHED_STATUS, headers, body
