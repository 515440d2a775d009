"""Checking recorded interactions (pure): one interaction as it is replayed, and which
interactions of a cassette a check selects.

An interaction is checked *as replayed*: its stored faults (and any given) are applied through
the same :func:`replayproxy._core.faults.plan` the replay server uses, each write fed with its
offset (so ``incremental`` contracts see the timing), the ``Content-Encoding`` undone first.
Interactions that are no stream are skipped with the reason, never failed: no response, a
non-200 status, a content type that is not an event stream (or, under a contract, another
document type than the contract's framing: a recorded ``GET /turns`` JSON beside the
``POST /chat`` stream). Under a contract a response without a telling content type (none,
``text/plain``, ``application/octet-stream``) is checked, so the missing media type is reported.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from replayproxy._core import faults as fault_core
from replayproxy._core.cassette.model import Cassette, Interaction, header_value
from replayproxy._core.check import Contract, StreamChecker, Violation, request_options
from replayproxy._core.check.grammars.realtime import check_session
from replayproxy._core.faults import FaultSpec
from replayproxy._core.faults import websocket as ws_faults
from replayproxy._core.providers import Provider, detect, parse
from replayproxy._core.wire.content_coding import unsupported
from replayproxy._errors import UsageError

__all__ = ["STREAM_TYPES", "InteractionReport", "check_interaction", "select"]

STREAM_TYPES: Final = {
    "sse": frozenset({"text/event-stream"}),
    "ndjson": frozenset(
        {
            "application/x-ndjson",
            "application/ndjson",
            "application/jsonl",
            "application/jsonlines",
            "application/x-jsonlines",
        }
    ),
}
"""The media types a contract's framing is served as; other responses are skipped."""
UNTYPED: Final = frozenset({"", "text/plain", "application/octet-stream"})
"""Content types that say nothing about the body: under a contract such a response is checked,
so a stream served without its media type is reported (``sse.content-type``), not skipped."""


@dataclass(frozen=True, slots=True)
class InteractionReport:
    """The check of one interaction: its violations, or why it was skipped."""

    index: int
    method: str
    url: str
    provider: str | None
    violations: tuple[Violation, ...] = ()
    skipped: str | None = None  # why it was not checked (not a stream, no response, ...)
    dialect: str | None = None  # "OpenAI-compatible (DeepSeek)", "contract chat turn" ...
    notes: tuple[str, ...] = ()  # known provider dialect features (named, not flagged)

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "warning"]


def select(
    cassette: Cassette,
    *,
    interactions: Iterable[int] | None = None,
    path: str | None = None,
    name: str = "the cassette",
) -> list[tuple[int, Interaction]]:
    """The ``(index, interaction)`` pairs a check covers: those at ``interactions`` (all when
    ``None``) whose request path (no query) matches the ``fnmatch`` glob ``path``, as the fault
    selector ``path=`` matches. An index the cassette does not have is a :class:`UsageError`."""
    items = list(enumerate(cassette.interactions))
    if interactions is not None:
        wanted = sorted(set(interactions))
        count = len(items)
        for i in wanted:
            if not 0 <= i < count:
                held = f"0 to {count - 1}" if count else "none"
                raise UsageError(
                    f"interaction {i} is not in {name}: it has {count} interaction(s) ({held})"
                )
        items = [items[i] for i in wanted]
    if path is not None:
        items = [(i, x) for i, x in items if fnmatch.fnmatchcase(x.request.path, path)]
    return items


def check_interaction(
    interaction: Interaction,
    index: int = 0,
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
    contract: Contract | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool = False,
) -> InteractionReport:
    """Check one interaction as it is replayed (stored faults and ``faults`` applied), against
    its provider's contract or the application ``contract`` (with the stored ``record`` and
    whether the ``upstream`` stream behind it was incomplete; see :class:`StreamChecker`)."""
    req = interaction.request
    specs = [fault_core.parse(f) for f in faults]
    if interaction.websocket is not None:
        return _check_websocket(interaction, index, provider, specs)
    # Real speed: time-based faults such as keepalive add bytes only where real gaps are.
    schedule = fault_core.plan(interaction, index, speed=1.0, faults=specs)
    base = InteractionReport(index, req.method, req.url, provider)
    if schedule.head is None:
        return _skip(base, "no response")
    content_type = header_value(schedule.head.headers, "content-type")
    content_encoding = header_value(schedule.head.headers, "content-encoding")
    if schedule.head.status != 200:
        return _skip(base, f"HTTP {schedule.head.status}: an error response, not a stream")
    if contract is not None:
        media = (content_type or "").split(";", 1)[0].strip().lower()
        if media not in STREAM_TYPES[contract.framing] and media not in UNTYPED:
            wanted = " or ".join(sorted(STREAM_TYPES[contract.framing]))
            return _skip(
                base,
                f"{content_type or 'no content type'}: not a {wanted} response (the contract's "
                f"{contract.framing} framing)",
            )
    name: str | Provider | Contract | None = contract or provider
    if name is None:
        name = detect(req, content_type, websocket=False)
    if name is None:
        return _skip(base, f"{content_type or 'no content type'}: not an event stream")
    reason = unsupported(content_encoding)
    if reason is not None:
        return _skip(base, reason)
    # The content type is checked when the check was told what the stream is (a detected
    # provider was detected from it). Under a contract an absent header is known to be absent
    # ("": EventSource fails without text/event-stream), where for a raw body None is unknown.
    checked_type = content_type if provider is not None else None
    if contract is not None:
        checked_type = content_type or ""
    checker = StreamChecker(
        name,
        request=request_options(req.body),
        content_type=checked_type,
        url=req.url,
        content_encoding=content_encoding,
        record=record,
        upstream_incomplete=upstream_incomplete,
    )
    for write in schedule.writes:
        checker.feed(write.data, write.at_ns)
    checker.close()
    return InteractionReport(
        index,
        req.method,
        req.url,
        checker.provider,
        tuple(checker.violations),
        dialect=checker.dialect,
        notes=tuple(checker.notes),
    )


def _check_websocket(
    interaction: Interaction, index: int, provider: str | None, specs: Sequence[FaultSpec]
) -> InteractionReport:
    """A WebSocket session: its server messages against the Realtime / Gemini Live grammar."""
    req = interaction.request
    base = InteractionReport(index, req.method, req.url, provider)
    name = _websocket_provider(provider) or detect(req.url, websocket=True)
    if name is None:
        return _skip(base, "a WebSocket session of an API without a grammar here")
    planned = ws_faults.plan(interaction, index, faults=specs)
    if planned is None:
        return _skip(base, "the upgrade is refused (status fault): no session")
    violations = check_session(planned[0], name)
    return InteractionReport(index, req.method, req.url, name.value, tuple(violations))


def _websocket_provider(name: str | None) -> Provider | None:
    """The WebSocket API ``name`` names, or ``None`` (an HTTP API's name: detect instead)."""
    if name is None:
        return None
    try:
        return parse(name, websocket=True)
    except UsageError:
        return None


def _skip(report: InteractionReport, reason: str) -> InteractionReport:
    return InteractionReport(report.index, report.method, report.url, None, (), reason)
